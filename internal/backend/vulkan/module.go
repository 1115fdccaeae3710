package vulkan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
	"github.com/quadrants-go/qd/internal/codegen/spirv"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// Kernels: Compile generates one SPIR-V module per task (package
// codegen/spirv) and makes a compute pipeline of each, whose parameters
// are push constants. A launch packs every task's push constants once
// (Begin), records a dispatch per task on the stream it runs on (Run: one
// command buffer and one submit), and gives the temporaries back in the
// stream's order (End).

// hostTotalGroups is the grid of a parallel task whose iteration count
// only the kernel knows (extents that read memory or locals): the
// entries stride over the rest.
const hostTotalGroups = 4096

// module is a compiled kernel.
type module struct {
	d      *Device
	kernel string
	layout *kabi.Module
	tasks  []task
	// maxGroups caps a parallel task's grid (the entries stride beyond);
	// shapes: some task's HostTotal reads array shapes.
	maxGroups int
	shapes    bool
	closed    atomic.Bool
	mu        sync.Mutex // Close against Begin; sized

	// Block tasks whose size the launch computes are generated again for
	// each size a launch asks for (gen), their pipelines kept by task and
	// size in sized.
	gen   func(size int) (*spirv.Kernel, error)
	sized map[[2]int]*entry
}

// task is one entry: its pipeline and how to launch it. A deferred one
// (a block task whose size the launch computes) has its entries in
// module.sized instead.
type task struct {
	info *kabi.Task
	entry
	deferred bool
}

// entry is a pipeline and the layout of its push constants.
type entry struct {
	pipe      *vk.Pipeline
	push      []spirv.PushField
	pushBytes int
	local     int
	// argsBuffer: the slots go in a per-launch buffer whose address is
	// the push constant (spirv.Entry.ArgsBuffer).
	argsBuffer bool
}

var _ backend.Module = (*module)(nil)

// Compile compiles plan for the device: a pipeline per task.
func (d *Device) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	f := d.features()
	fused, err := d.fusedFMA()
	if err != nil {
		return nil, err
	}
	gopts := spirv.Options{
		ExactFMA:         fused,
		SubgroupReduce:   d.lim.subgroupOps&vk.SubgroupFeatureArithmetic != 0,
		Bounds:           opts.Debug,
		AtomicFloatAdd32: f.BufferFloat32AtomicAdd,
		AtomicFloatAdd64: f.BufferFloat64AtomicAdd,
		MaxPushBytes:     d.lim.maxPushConstants,
	}
	gen := func(size int) (*spirv.Kernel, error) {
		o := gopts
		o.BlockSize = size
		k, err := spirv.Generate(plan, o)
		if err != nil {
			if errors.Is(err, spirv.ErrUnsupported) {
				return nil, fmt.Errorf("vulkan: %w (%w)", err, backend.ErrUnsupported)
			}
			return nil, fmt.Errorf("vulkan: %w", err)
		}
		return k, nil
	}
	k, err := gen(0)
	if err != nil {
		return nil, err
	}
	m := &module{d: d, kernel: plan.Kernel.Name, layout: k.Layout, maxGroups: int(min(d.lim.maxGroupCount[0], 65535)), gen: gen}
	for _, e := range k.Entries {
		m.shapes = m.shapes || e.Task.TotalShapes
		if e.Deferred {
			m.tasks = append(m.tasks, task{info: e.Task, deferred: true})
			continue
		}
		en, err := m.pipeline(e)
		if err != nil {
			m.release()
			return nil, err
		}
		m.tasks = append(m.tasks, task{info: e.Task, entry: en})
	}
	return m, nil
}

// pipeline makes the pipeline of e, within the device's limits.
func (m *module) pipeline(e *spirv.Entry) (entry, error) {
	d := m.d
	if e.LocalSize > d.lim.maxGroupInvocations || uint32(e.LocalSize) > d.lim.maxGroupSize[0] {
		return entry{}, fmt.Errorf("vulkan: kernel %s: work groups of %d exceed the device's limit (%d)", m.kernel, e.LocalSize, d.lim.maxGroupInvocations)
	}
	if e.Task.SharedBytes > d.lim.maxSharedBytes {
		return entry{}, fmt.Errorf("vulkan: kernel %s: its block loop's shared arrays take %d bytes, more than the device's %d (maxComputeSharedMemorySize)", m.kernel, e.Task.SharedBytes, d.lim.maxSharedBytes)
	}
	push := e.PushBytes
	if e.ArgsBuffer {
		push = 8
	}
	pipe, err := d.vd.CreatePipeline(e.Words, spirv.EntryName, push)
	if err != nil {
		return entry{}, fmt.Errorf("vulkan: kernel %s, task %d: %w", m.kernel, e.Task.Index, d.wrap(err))
	}
	return entry{pipe: pipe, push: e.Push, pushBytes: e.PushBytes, local: e.LocalSize, argsBuffer: e.ArgsBuffer}, nil
}

// sizedEntry is deferred task ti's entry for blocks of size threads,
// generated at its first launch with that size.
func (m *module) sizedEntry(ti int, size64 int64) (*entry, error) {
	if limit := min(kabi.MaxBlockDim, m.d.lim.maxGroupInvocations); size64 < 1 || size64 > int64(limit) {
		return nil, fmt.Errorf("vulkan: kernel %s: a block size of %d is outside 1..%d", m.kernel, size64, limit)
	}
	size := int(size64)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil, backend.ClosedError("vulkan: launch of a closed module")
	}
	key := [2]int{ti, size}
	if e := m.sized[key]; e != nil {
		return e, nil
	}
	k, err := m.gen(size)
	if err != nil {
		return nil, err
	}
	en, err := m.pipeline(k.Entries[ti])
	if err != nil {
		return nil, err
	}
	if m.sized == nil {
		m.sized = map[[2]int]*entry{}
	}
	m.sized[key] = &en
	return &en, nil
}

// Close releases the pipelines; no launch of the module may be in flight.
func (m *module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Swap(true) {
		return nil
	}
	m.release()
	return nil
}

func (m *module) release() {
	for _, t := range m.tasks {
		if t.pipe != nil {
			m.d.vd.DestroyPipeline(t.pipe)
		}
	}
	for _, e := range m.sized {
		m.d.vd.DestroyPipeline(e.pipe)
	}
	m.tasks, m.sized = nil, nil
}

// launch is one launch in progress.
type launch struct {
	m      *module
	push   [][]byte             // per task
	pipes  []*vk.Pipeline       // per task
	groups []uint32             // per task; 0: nothing to run
	temps  *Buffer              // nil when the kernel needs none
	args   []backend.HostBuffer // the arguments buffers of tasks with many slots
	// records are the tasks' recording functions, made by Begin, so that
	// a launch enqueued again (Reusable) allocates nothing.
	records []func(cb uintptr)
}

var _ backend.Reusable = (*launch)(nil)

// Reusable reports whether the launch holds nothing but its packed
// arguments (no temporaries, no arguments buffers, no index checks), so
// package qd may run it again while the arguments repeat.
func (l *launch) Reusable() bool {
	return l.temps == nil && len(l.args) == 0 && !l.m.layout.Bounds
}

// Begin packs the launch's arguments and takes its temporaries in the
// order of s.
func (m *module) Begin(bs backend.Stream, args *backend.Args) (backend.Launch, error) {
	if m.closed.Load() {
		return nil, backend.ClosedError("vulkan: launch of a closed module")
	}
	d := m.d
	s, err := d.stream(bs)
	if err != nil {
		return nil, err
	}
	if m.layout.Bounds && s.capturing() {
		// The violation record is read by a host hook when the launch's
		// point is reached; a capture's hooks run once, when its graph
		// can no longer run, not at each replay.
		return nil, fmt.Errorf("vulkan: kernel %s was built WithDebug: its index checks are reported through the host at Synchronize, which a graph's replay never reaches, so it cannot be captured (capture without WithDebug, or launch it outside the capture): %w", m.kernel, backend.ErrUnsupported)
	}
	l := &launch{m: m, push: make([][]byte, len(m.tasks)), pipes: make([]*vk.Pipeline, len(m.tasks)), groups: make([]uint32, len(m.tasks)),
		records: make([]func(cb uintptr), len(m.tasks))}
	if m.layout.NumTemps > 0 || m.layout.Bounds {
		size := 8 * m.layout.NumTemps
		if m.layout.Bounds {
			size += 8 * kabi.DebugWords
		}
		b, err := d.AllocOn(s, size)
		if err != nil {
			return nil, err
		}
		l.temps = b.(*Buffer)
		if err := l.temps.Zero(s); err != nil {
			l.temps.FreeOn(s)
			return nil, err
		}
	}
	var shapes [][4]int
	if m.shapes {
		shapes = make([][4]int, len(args.Arrays))
		for i, a := range args.Arrays {
			shapes[i] = a.Shape
		}
	}
	for ti := range m.tasks {
		t := &m.tasks[ti]
		en := &t.entry
		if t.deferred {
			size := t.info.BlockSize(args.Scalars, shapes)
			if en, err = m.sizedEntry(ti, size); err != nil {
				l.drop(s)
				return nil, err
			}
		}
		l.pipes[ti] = en.pipe
		p := make([]byte, en.pushBytes)
		for _, f := range en.push {
			v, err := l.slotValue(f.Slot, args)
			if err != nil {
				l.drop(s)
				return nil, fmt.Errorf("vulkan: kernel %s: %w", m.kernel, err)
			}
			if f.Slot.Size == 4 {
				binary.LittleEndian.PutUint32(p[f.Offset:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(p[f.Offset:], v)
			}
		}
		if en.argsBuffer {
			hb, err := d.AllocHost(len(p))
			if err != nil {
				l.drop(s)
				return nil, err
			}
			l.args = append(l.args, hb)
			copy(unsafe.Slice((*byte)(hb.Pointer()), len(p)), p)
			p = binary.LittleEndian.AppendUint64(nil, hb.(*HostBuffer).mem.Address)
		}
		l.push[ti] = p
		pipe, vd := en.pipe, d.vd
		l.records[ti] = func(cb uintptr) { vd.CmdDispatch(cb, pipe, p, l.groups[ti], 1, 1) }
		switch {
		case t.info.Kind == lower.Serial:
			l.groups[ti] = 1
		case t.info.HostTotal == nil:
			l.groups[ti] = uint32(min(hostTotalGroups, m.maxGroups))
		case t.info.Kind == lower.Block: // a group per block; HostTotal counts blocks
			l.groups[ti] = kabi.GridFor(t.info.HostTotal(args.Scalars, shapes), 1, m.maxGroups)
		default:
			l.groups[ti] = kabi.GridFor(t.info.HostTotal(args.Scalars, shapes), en.local, m.maxGroups)
		}
	}
	return l, nil
}

// slotValue is what slot sl of a task passes (backend.Args.SlotValue,
// with this device's buffers and the launch's temporaries).
func (l *launch) slotValue(sl kabi.Slot, args *backend.Args) (uint64, error) {
	if sl.Kind == kabi.TempsSlot {
		if l.temps == nil {
			return 0, errors.New("internal error: the temporaries were not allocated")
		}
		return l.temps.address(), nil
	}
	return args.SlotValue(sl, func(buf backend.Buffer) (uint64, error) {
		b, err := l.m.d.buffer(buf)
		if err != nil {
			return 0, err
		}
		return b.address(), nil
	})
}

// Run records task's dispatch on s and submits it.
func (l *launch) Run(ti int, bs backend.Stream) error {
	if ti < 0 || ti >= len(l.m.tasks) {
		return fmt.Errorf("vulkan: kernel %s has no task %d", l.m.kernel, ti)
	}
	if l.groups[ti] == 0 {
		return nil // nothing to do
	}
	s, err := l.m.d.stream(bs)
	if err != nil {
		return err
	}
	_, err = s.submit(l.records[ti])
	return err
}

// End gives the temporaries and arguments buffers back after everything
// enqueued on s so far; with index checks, a violation the launch recorded
// is reported by the stream's next Synchronize.
func (l *launch) End(bs backend.Stream) error {
	if l.temps == nil && len(l.args) == 0 {
		return nil
	}
	s, err := l.m.d.stream(bs)
	if err != nil {
		return err
	}
	if len(l.args) > 0 {
		v, err := s.point()
		if err != nil {
			return err
		}
		args := l.args
		s.onComplete(v, func() error {
			for _, a := range args {
				a.Close()
			}
			return nil
		})
	}
	if l.temps == nil {
		return nil
	}
	if !l.m.layout.Bounds {
		return l.temps.FreeOn(s)
	}
	rec, err := l.m.d.AllocHost(8 * kabi.DebugWords)
	if err != nil {
		return err
	}
	src := l.temps
	recView, err := src.View(8*l.m.layout.NumTemps, 8*kabi.DebugWords)
	if err != nil {
		rec.Close()
		return err
	}
	if err := recView.CopyToHost(s, rec.Pointer(), 8*kabi.DebugWords); err != nil {
		rec.Close()
		return err
	}
	v, err := s.point()
	if err != nil {
		rec.Close()
		return err
	}
	s.onComplete(v, func() error {
		words := *(*[kabi.DebugWords]uint64)(rec.Pointer())
		rec.Close()
		return l.m.violation(words)
	})
	return src.FreeOn(s)
}

// drop frees what Begin took, after a failure.
func (l *launch) drop(s *Stream) {
	if l.temps != nil {
		l.temps.FreeOn(s)
	}
	for _, a := range l.args {
		a.Close()
	}
}

// violation is the error a violation record reports, nil if it is clear.
func (m *module) violation(rec [kabi.DebugWords]uint64) error {
	return kabi.Violation(m.kernel, m.layout.Sites, rec)
}

// fusedFMA runs spirv.FMAProbe once per device: whether its fma is fused,
// which the correction of float64 division and square root needs.
func (d *Device) fusedFMA() (bool, error) {
	d.fmaOnce.Do(func() { d.fma, d.fmaErr = d.probeFMA() })
	return d.fma, d.fmaErr
}

func (d *Device) probeFMA() (bool, error) {
	pipe, err := d.vd.CreatePipeline(spirv.FMAProbe(), spirv.EntryName, 8)
	if err != nil {
		return false, fmt.Errorf("vulkan: the fma probe: %w", d.wrap(err))
	}
	defer d.vd.DestroyPipeline(pipe)
	hb, err := d.AllocHost(32)
	if err != nil {
		return false, err
	}
	defer hb.Close()
	words := (*[4]float64)(hb.Pointer())
	in := spirv.FMAInputs()
	copy(words[1:], in[:])
	s, err := d.newStream()
	if err != nil {
		return false, err
	}
	defer s.Close()
	push := binary.LittleEndian.AppendUint64(nil, hb.(*HostBuffer).mem.Address)
	if _, err := s.submit(func(cb uintptr) {
		d.vd.CmdDispatch(cb, pipe, push, 1, 1, 1)
		d.vd.CmdHostReadBarrier(cb)
	}); err != nil {
		return false, err
	}
	if err := s.Synchronize(); err != nil {
		return false, err
	}
	return spirv.FusedFMA(*(*float64)(hb.Pointer())), nil
}

var _ backend.RawLauncher = (*module)(nil)

// RawLaunchCost is the host time of one launch of the module's first task
// straight through the bindings: its dispatch recorded once into a
// command buffer, then n vkQueueSubmits of it on s's queue, each waiting
// for the one before through the stream's kind of timeline semaphore, a
// wait for the device every syncEvery.
func (m *module) RawLaunchCost(args *backend.Args, bs backend.Stream, n, syncEvery int) (time.Duration, error) {
	d := m.d
	s, err := d.stream(bs)
	if err != nil {
		return 0, err
	}
	if len(m.tasks) == 0 {
		return 0, fmt.Errorf("vulkan: kernel %s has no task", m.kernel)
	}
	bl, err := m.Begin(s, args)
	if err != nil {
		return 0, err
	}
	l := bl.(*launch)
	defer l.End(s)
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	return d.rawSubmits(s, n, syncEvery, func(cb uintptr) {
		d.vd.CmdDispatch(cb, l.pipes[0], l.push[0], max(l.groups[0], 1), 1, 1)
	})
}

// rawSubmits records one command buffer with record and submits it n
// times on s's queue (the reference of the raw figures of qd bench), with
// its own timeline semaphore; it returns the mean host time of a submit.
func (d *Device) rawSubmits(s *Stream, n, syncEvery int, record func(cb uintptr)) (time.Duration, error) {
	vd := d.vd
	pool, err := vd.CreateCommandPool()
	if err != nil {
		return 0, d.wrap(err)
	}
	defer vd.DestroyCommandPool(pool)
	cb, err := vd.AllocateCommandBuffer(pool)
	if err == nil {
		err = vd.Begin(cb, vk.CommandBufferUsageSimultaneous)
	}
	if err != nil {
		return 0, d.wrap(err)
	}
	record(cb)
	if err := vd.End(cb); err != nil {
		return 0, d.wrap(err)
	}
	return d.submitLoop(s.main.q, []uintptr{cb}, n, syncEvery)
}

// submitLoop submits cbs n times to q, chained by a timeline semaphore of
// its own, waiting for the device every syncEvery submits and at the end.
func (d *Device) submitLoop(q *queue, cbs []uintptr, n, syncEvery int) (time.Duration, error) {
	vd := d.vd
	sem, err := vd.CreateTimeline()
	if err != nil {
		return 0, d.wrap(err)
	}
	defer vd.DestroySemaphore(sem)
	var v uint64
	waits := make([]vk.Wait, 1)
	start := time.Now()
	for i := range n {
		waits[0] = vk.Wait{Semaphore: sem, Value: v}
		w := waits
		if v == 0 {
			w = nil
		}
		q.mu.Lock()
		err := vd.Submit(q.h, cbs, w, sem, v+1)
		q.mu.Unlock()
		if err != nil {
			return 0, d.wrap(err)
		}
		v++
		if syncEvery > 0 && (i+1)%syncEvery == 0 {
			if err := d.waitValue(sem, v); err != nil {
				return 0, err
			}
		}
	}
	if err := d.waitValue(sem, v); err != nil {
		return 0, err
	}
	return time.Since(start) / time.Duration(max(n, 1)), nil
}
