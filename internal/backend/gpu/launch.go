package gpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// devPointer is implemented by buffers that can be kernel arguments of a
// device (its buffers; views and fakes in tests).
type devPointer interface {
	devPtrFor(d *Device) (uint64, error)
}

// launch is the per-call state of one kernel launch: the parameter values
// of every task, the kernelParams arrays that point at them, and the
// launch's temporaries. Blocks are pooled per module, so a steady stream of
// launches allocates nothing; a block belongs to one call from Begin to End,
// so launches of the same kernel on different streams at once never share
// argument storage. A block without temporaries (Reusable) may be run
// again for later launches with the same arguments by whoever holds it
// (package qd's launch memo, one launch at a time). All of a block's
// storage is heap memory that never moves, which is what lets its
// addresses travel as uintptr.
type launch struct {
	m      *loadedModule
	vals   []uint64      // one value per slot of every task (a 4-byte value in the low half)
	ptrs   []uintptr     // ptrs[i] = &vals[i]: the kernelParams arrays, task by task
	kargs  [][11]uintptr // cuLaunchKernel's arguments, per task
	grids  []uint32      // blocks per task, set by Begin; 0: nothing to run
	shapes [][4]int      // HostTotal input, per kernel parameter
	scal   []uint64      // HostTotal input, per kernel parameter
	out    [1]uint64     // out-parameter of cuMemAllocAsync
	temps  uint64        // device address of the temporaries, 0 if none
	block  *tempBlock    // the temporaries when they come from the free list
	dep    *dependent    // a programmatic dependent launch's configuration, once made
}

func (m *loadedModule) newLaunch() *launch {
	l := &launch{
		m:      m,
		vals:   make([]uint64, m.nslots),
		ptrs:   make([]uintptr, m.nslots),
		kargs:  make([][11]uintptr, len(m.tasks)),
		grids:  make([]uint32, len(m.tasks)),
		shapes: make([][4]int, m.nparams),
		scal:   make([]uint64, m.nparams),
	}
	for i := range l.vals {
		l.ptrs[i] = uintptr(unsafe.Pointer(&l.vals[i]))
	}
	for i, t := range m.tasks {
		a := &l.kargs[i]
		a[0] = t.fn
		a[2], a[3] = 1, 1 // grid y, z
		a[4], a[5], a[6] = uintptr(t.BlockDim), 1, 1
		a[7] = 0 // dynamic shared memory
		if len(t.Slots) > 0 {
			a[9] = uintptr(unsafe.Pointer(&l.ptrs[t.slotOff]))
		}
		a[10] = 0 // extra
	}
	return l
}

// Begin packs the arguments and takes the temporaries in the order of bs.
func (m *loadedModule) Begin(bs backend.Stream, args *backend.Args) (backend.Launch, error) {
	d := m.d
	if m.closed.Load() {
		return nil, fmt.Errorf("%s: Begin on a closed module", d.Arch())
	}
	s, err := d.asStream(bs)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = &backend.Args{}
	}
	if s.cap.Load() != nil {
		if err := m.capturable(); err != nil {
			return nil, err
		}
	}
	l := m.launches.Get().(*launch)
	if err := l.pack(d, args); err != nil {
		m.launches.Put(l)
		return nil, err
	}
	if m.numTemps > 0 || m.bounds {
		if err := l.takeTemps(d, s); err != nil {
			m.launches.Put(l)
			return nil, err
		}
	}
	return l, nil
}

// capturable refuses a launch of m in a graph capture when its per-launch
// state could not be part of a graph: a violation record, which the host
// reads at Synchronize (debug.go), or temporaries from the free list,
// whose blocks are recycled by the host (temps.go).
func (m *loadedModule) capturable() error {
	d := m.d
	switch {
	case m.bounds:
		return fmt.Errorf("%s: kernel %s was built WithDebug: its index checks are reported through the host at Synchronize, which a graph's replay never reaches, so it cannot be captured (capture without WithDebug, or launch it outside the capture): %w",
			d.Arch(), m.kernel, backend.ErrUnsupported)
	case m.numTemps > 0 && !d.props.MemPools:
		return fmt.Errorf("%s: kernel %s keeps values between its tasks in per-launch memory, which a graph can allocate only on a device with stream-ordered memory pools (this one has none): %w",
			d.Arch(), m.kernel, backend.ErrUnsupported)
	}
	return nil
}

// pack fills the value slots of every task and sizes every grid. It is on
// the launch path, run right after the previous launch's driver call left
// the caches cold: the common slots (a scalar, a buffer of this device)
// take a few loads each, the rest go through slotValue.
func (l *launch) pack(d *Device, args *backend.Args) error {
	m := l.m
	scal := args.Scalars
	if m.totals {
		if len(scal) < m.nparams {
			// A missing scalar reads as 0, as in slotValue's error-free cases.
			for i := range l.scal {
				l.scal[i] = 0
				if i < len(args.Scalars) {
					l.scal[i] = args.Scalars[i]
				}
			}
			scal = l.scal
		}
	}
	if m.shapes {
		for i := range l.shapes {
			l.shapes[i] = [4]int{1, 1, 1, 1}
			if i < len(args.Arrays) {
				l.shapes[i] = args.Arrays[i].Shape
			}
		}
	}
	for ti := range m.tasks {
		t := &m.tasks[ti]
		vals := l.vals[t.slotOff : t.slotOff+len(t.Slots)]
		for si := range t.Slots {
			sl := &t.Slots[si]
			var v uint64
			ok := false
			switch sl.Kind {
			case kabi.ScalarSlot:
				if sl.Param < len(args.Scalars) {
					v, ok = args.Scalars[sl.Param], true
				}
			case kabi.ArraySlot:
				if sl.Param < len(args.Arrays) {
					if b, isBuf := args.Arrays[sl.Param].Buf.(*buffer); isBuf && b.d == d && !b.closed.Load() {
						v, ok = b.ptr, true
					}
				}
			case kabi.DimSlot:
				if sl.Param < len(args.Arrays) {
					v, ok = uint64(int64(args.Arrays[sl.Param].Shape[sl.Dim])), true
				}
			}
			if !ok { // anything else, and every error, the general way
				var err error
				if v, err = slotValue(d, *sl, args); err != nil {
					return fmt.Errorf("%s: kernel %s: %w", d.Arch(), t.Entry, err)
				}
			}
			if sl.Size == 4 {
				v &= math.MaxUint32
			}
			vals[si] = v
		}
		switch {
		case t.Kind == lower.Serial:
			l.grids[ti] = 1
		case t.Kind == lower.Block:
			if err := l.blockGrid(d, ti, t, scal); err != nil {
				return err
			}
		case t.HostTotal == nil:
			l.grids[ti] = uint32(t.maxBlocks)
		default:
			l.grids[ti] = kabi.GridFor(t.HostTotal(scal, l.shapes), t.BlockDim*max(t.PointsPerThread, 1), t.maxBlocks)
		}
	}
	return nil
}

// blockGrid sizes the launch of block task t (qd.Blocks): one block of
// the loop per GPU block, up to the device's cap, beyond which the entry
// strides; the block size is the loop's, from the launch's scalars when
// it is not a constant.
func (l *launch) blockGrid(d *Device, ti int, t *task, scal []uint64) error {
	bd, maxBlocks := t.BlockDim, t.maxBlocks
	if t.BlockSize != nil && t.BlockDim == 0 {
		n := t.BlockSize(scal, l.shapes)
		if n < 1 || n > int64(d.props.MaxBlockDim) {
			return fmt.Errorf("%s: kernel %s: qd.Blocks block size %d is outside 1..%d", d.Arch(), t.Entry, n, d.props.MaxBlockDim)
		}
		bd = int(n)
		maxBlocks = kabi.MaxBlocks(d.props.Units, d.props.ThreadsPerUnit, bd, t.Waves)
	}
	l.kargs[ti][4] = uintptr(bd)
	if t.HostTotal == nil {
		l.grids[ti] = uint32(maxBlocks)
		return nil
	}
	l.grids[ti] = kabi.GridFor(t.HostTotal(scal, l.shapes), 1, maxBlocks)
	return nil
}

// slotValue is the value a slot passes (backend.Args.SlotValue, with
// this device's buffers). Temporaries are filled in later.
func slotValue(d *Device, sl kabi.Slot, args *backend.Args) (uint64, error) {
	return args.SlotValue(sl, func(buf backend.Buffer) (uint64, error) {
		b, ok := buf.(devPointer)
		if !ok || buf == nil {
			return 0, fmt.Errorf("%T is not a buffer of this backend", buf)
		}
		return b.devPtrFor(d)
	})
}

// takeTemps allocates the temporaries in the order of s.
func (l *launch) takeTemps(d *Device, s *stream) error {
	size := l.m.numTemps * 8
	if l.m.bounds {
		size += recordBytes
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if d.props.MemPools {
		f := getFrame()
		f.a[0], f.a[1], f.a[2] = uintptr(unsafe.Pointer(&l.out[0])), uintptr(size), s.h
		r := res(purego.SyscallN(d.c.MemAllocAsync.Addr, f.a[:3]...))
		putFrame(f)
		if err := d.check(&d.c.MemAllocAsync, r); err != nil {
			return err
		}
		l.temps = l.out[0]
	} else {
		b, err := d.temps.acquire(size)
		if err != nil {
			return err
		}
		l.block, l.temps = b, b.ptr
	}
	for _, i := range l.m.tempSlots {
		l.vals[i] = l.temps
	}
	if l.m.bounds {
		if err := l.clearRecord(d, s); err != nil {
			// Begin fails, so End never runs: give the temporaries back.
			return errors.Join(err, l.dropTemps(d, s))
		}
	}
	return nil
}

// dropTemps gives back temporaries that no work has used, inside
// d.enter/leave. On a lost device the context holds them, and is gone.
func (l *launch) dropTemps(d *Device, s *stream) error {
	var err error
	switch {
	case d.lost.Load() != nil:
	case l.block != nil:
		err = d.temps.put(l.block, 0)
	default:
		err = d.check(&d.c.MemFreeAsync, res(purego.SyscallN(d.c.MemFreeAsync.Addr, uintptr(l.temps), s.h)))
	}
	l.temps, l.block = 0, nil
	return err
}

// Run enqueues task number task on bs.
func (l *launch) Run(task int, bs backend.Stream) error {
	m := l.m
	if task < 0 || task >= len(m.tasks) {
		return fmt.Errorf("%s: Run of task %d; the kernel has %d", m.d.Arch(), task, len(m.tasks))
	}
	d := m.d
	s, err := d.asStream(bs)
	if err != nil {
		return err
	}
	g := l.grids[task]
	if g == 0 {
		return nil // an empty range: nothing to launch
	}
	a := &l.kargs[task]
	a[1] = uintptr(g)
	a[8] = s.h
	switch {
	case m.dependent && s.cap.Load() != nil:
		err = l.launchDependent(d, a)
	case d.mayCallUnbound() && res(purego.SyscallN(d.c.LaunchKernel.Addr, a[:]...)) == 0:
		// runOn, written out: a frame less to return through after the
		// driver's deep call, which leaves return predictions stale.
	default:
		err = d.run(&d.c.LaunchKernel, a[:])
	}
	runtime.KeepAlive(l) // a holds the addresses of l.ptrs and l.vals
	if err == nil {
		return nil
	}
	if de := (*DriverError)(nil); errors.As(err, &de) {
		return fmt.Errorf("%s: kernel entry %s: %w", d.Arch(), m.tasks[task].Entry, err)
	}
	return err // the device's own state (closed, lost): not the entry's doing
}

// Reusable reports whether the launch holds nothing but its argument
// block (no temporaries, no violation record): Run may then enqueue it
// again with the same arguments (backend.Reusable).
func (l *launch) Reusable() bool { return l.m.numTemps == 0 && !l.m.bounds && l.temps == 0 }

// End gives the temporaries back in the order of bs and recycles the block.
// The Launch must not be used afterwards.
func (l *launch) End(bs backend.Stream) error {
	m := l.m
	d := m.d
	var err error
	if m.bounds && l.temps != 0 {
		err = l.sendRecord(d, bs)
	}
	if l.temps != 0 {
		err = errors.Join(err, l.freeTemps(d, bs))
		l.temps, l.block = 0, nil
	}
	m.launches.Put(l)
	return err
}

func (l *launch) freeTemps(d *Device, bs backend.Stream) error {
	var sh uintptr
	s, serr := d.asStream(bs)
	if serr == nil {
		sh = s.h
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if serr != nil {
		// No stream to order the release by: wait for all work instead.
		err := d.call0(&d.c.Synchronize)
		if l.block == nil {
			err = errors.Join(err, d.call1(&d.c.MemFree, uintptr(l.temps)))
		} else {
			err = errors.Join(err, d.temps.put(l.block, 0))
		}
		return errors.Join(serr, err)
	}
	if l.block == nil {
		f := getFrame()
		f.a[0], f.a[1] = uintptr(l.temps), sh
		r := res(purego.SyscallN(d.c.MemFreeAsync.Addr, f.a[:2]...))
		putFrame(f)
		return d.check(&d.c.MemFreeAsync, r)
	}
	return d.temps.put(l.block, sh)
}

// Programmatic dependent launches in graphs.
//
// A graph replays its kernels back to back, so between two dependent
// kernels it pays the second's launch latency with the GPU idle: about
// 1.5 µs per kernel on an H100. Captured as a programmatic dependent
// launch, the second kernel starts while the first still runs and waits,
// inside, for the first to complete (kabi.Module.AwaitsPredecessors): the
// latency overlaps the first's execution. Outside a capture the runtime
// keeps the plain launch, whose host cost is lower and which the host, not
// the GPU, bounds there.

// launchConfig is the driver's launch configuration (CUlaunchConfig).
type launchConfig struct {
	grid   [3]uint32
	block  [3]uint32
	shared uint32
	_      uint32
	stream uintptr
	attrs  uintptr // *launchAttr
	nattrs uint32
	_      uint32
}

// launchAttr is one launch attribute: an id and a 64-byte value union,
// 8-byte aligned (CUlaunchAttribute).
type launchAttr struct {
	id  uint32
	_   uint32
	val [8]uint64
}

// dependent is the configuration of a programmatic dependent launch. It
// lives in the heap, in the launch's block: the driver reads it through
// plain addresses, which a goroutine stack moved by growth would leave
// pointing at freed memory.
type dependent struct {
	cfg  launchConfig
	attr launchAttr
}

// dependentLaunches reports whether captured launches may be
// programmatic dependent launches (of entries that wait for their
// predecessors: loadedModule.dependent).
func (d *Device) dependentLaunches() bool {
	return d.codes.ProgrammaticLaunch != 0 && d.c.LaunchKernelEx.Bound()
}

// launchDependent launches a's kernel (the arguments of
// Calls.LaunchKernel) as a programmatic dependent launch.
func (l *launch) launchDependent(d *Device, a *[11]uintptr) error {
	if l.dep == nil {
		l.dep = new(dependent)
	}
	dep := l.dep
	dep.attr = launchAttr{id: d.codes.ProgrammaticLaunch}
	dep.attr.val[0] = 1 // allowed
	dep.cfg = launchConfig{
		grid:   [3]uint32{uint32(a[1]), uint32(a[2]), uint32(a[3])},
		block:  [3]uint32{uint32(a[4]), uint32(a[5]), uint32(a[6])},
		shared: uint32(a[7]),
		stream: a[8],
		attrs:  uintptr(unsafe.Pointer(&dep.attr)),
		nattrs: 1,
	}
	err := d.runOn(&d.c.LaunchKernelEx, []uintptr{uintptr(unsafe.Pointer(&dep.cfg)), a[0], a[9], a[10]})
	runtime.KeepAlive(l)
	return err
}
