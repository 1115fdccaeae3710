package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// spinBound bounds the spin kernel's polls: seconds of polling on a GPU,
// so a rendezvous that never happens fails quickly instead of hanging.
const spinBound = 2_000_000

func TestOpen(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		p := d.Props()
		t.Logf("%s; memory pools %v; priorities %d..%d", d.Describe(), p.MemPools, p.PriorityLeast, p.PriorityGreatest)
		if p.Name == "" || p.Target == "" || p.Units < 1 || p.ThreadsPerUnit < 1 || p.MaxBlockDim < 64 || p.MemoryBytes == 0 {
			t.Errorf("implausible device properties: %+v", p)
		}
		if p.WarpSize != 32 && p.WarpSize != 64 {
			t.Errorf("warp size %d", p.WarpSize)
		}
		least, greatest := d.PriorityRange()
		if least < greatest {
			t.Errorf("PriorityRange() = %d, %d: least must be ≥ greatest", least, greatest)
		}
		if d.Arch() != d.Driver().Arch() {
			t.Errorf("Arch() = %q", d.Arch())
		}
		if _, err := gpu.Open(d.Driver(), 1<<20); !errors.Is(err, gpu.ErrNoDevice) {
			t.Errorf("Open of a missing ordinal: %v", err)
		}
	})
}

func TestCloseIdempotent(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d0 *gpu.Device) {
		d, err := gpu.Open(d0.Driver(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := d.Alloc(16); !errors.Is(err, gpu.ErrDeviceClosed) {
			t.Errorf("Alloc after Close: %v", err)
		}
	})
}

func TestCopyRoundTrip(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		const n = 1<<16 + 3
		a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i*2654435761) ^ 0x5a5a
		}
		writeU32(t, a, s, src)
		if err := b.CopyFrom(s, a, 4*n); err != nil {
			t.Fatal(err)
		}
		got := readU32(t, b, s, n)
		for i := range got {
			if got[i] != src[i] {
				t.Fatalf("element %d: %#x, want %#x", i, got[i], src[i])
			}
		}
		if err := a.CopyFromHost(s, unsafe.Pointer(&src[0]), 4*n+4); err == nil {
			t.Error("an oversized copy succeeded")
		}
		if err := a.CopyToHost(s, nil, 0); err != nil {
			t.Errorf("empty copy: %v", err)
		}
		small := mustAlloc(t, d, 8)
		if err := b.CopyFrom(s, small, 16); err == nil {
			t.Error("CopyFrom past the source's end succeeded")
		}
	})
}

func TestZero(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		b := mustAlloc(t, d, 4*1000)
		ones := make([]uint32, 1000)
		for i := range ones {
			ones[i] = 1 // not zero: Zero must show where no kernel runs too
		}
		writeU32(t, b, s, ones)
		launch(t, build(t, d, fillKernel()), s, &backend.Args{Scalars: []uint64{0, 5}, Arrays: []backend.ArrayArg{arr(b, 1000)}})
		if err := b.(backend.Zeroer).Zero(s); err != nil {
			t.Fatal(err)
		}
		for i, v := range readU32(t, b, s, 1000) {
			if v != 0 {
				t.Fatalf("element %d = %d after Zero", i, v)
			}
		}
	})
}

func TestAllocErrors(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		if _, err := d.Alloc(0); err == nil {
			t.Error("Alloc(0) succeeded")
		}
		_, err := d.Alloc(1 << 50) // 1 PiB
		if !errors.Is(err, backend.ErrOutOfMemory) {
			t.Errorf("huge Alloc: %v, want ErrOutOfMemory", err)
		}
		b := mustAlloc(t, d, 64)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestFillKernel(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d)
		s := mustStream(t, d, 0)
		fill := build(t, d, fillKernel())
		const n = 1 << 20
		buf := mustAlloc(t, d, 4*n)
		launch(t, fill, s, &backend.Args{Scalars: []uint64{0, 0xC0FFEE}, Arrays: []backend.ArrayArg{arr(buf, n)}})
		for i, v := range readU32(t, buf, s, n) {
			if v != 0xC0FFEE {
				t.Fatalf("element %d = %#x", i, v)
			}
		}
		// A shape of the first 10 elements: only those change.
		launch(t, fill, s, &backend.Args{Scalars: []uint64{0, 7}, Arrays: []backend.ArrayArg{arr(buf, 10)}})
		got := readU32(t, buf, s, 11)
		if got[9] != 7 || got[10] != 0xC0FFEE {
			t.Errorf("partial fill: %v", got)
		}
	})
}

// spinArgs are the spin kernel's arguments: poll flag, report in out, then
// set the n elements of p to v.
func spinArgs(flag, out, p backend.Buffer, n int, v uint32) *backend.Args {
	return &backend.Args{
		Scalars: []uint64{0, 0, 0, spinBound, uint64(v)},
		Arrays:  []backend.ArrayArg{arr(flag, 1), arr(out, 1), arr(p, n)},
	}
}

// Work recorded on s1 orders later work on s2, and Query sees unfinished
// work without blocking: s1's kernel waits for a flag that only a copy on
// a third stream sets, so the event cannot complete before that copy.
func TestStreamEventOrdering(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d)
		s1, s2, s3 := mustStream(t, d, 0), mustStream(t, d, 0), mustStream(t, d, 0)
		spin, add1 := build(t, d, spinKernel()), build(t, d, add1Kernel())
		const n = 4096
		flag, out := mustAlloc(t, d, 4), mustAlloc(t, d, 4)
		x, y := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		writeU32(t, flag, s1, []uint32{0})
		e, err := d.NewEvent(false)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		launch(t, spin, s1, spinArgs(flag, out, x, n, 41))
		if err := e.Record(s1); err != nil {
			t.Fatal(err)
		}
		if done, err := e.Query(); err != nil || done {
			t.Errorf("event Query behind a waiting kernel: %v, %v", done, err)
		}
		if done, err := s1.Query(); err != nil || done {
			t.Errorf("stream Query of a waiting kernel: %v, %v", done, err)
		}
		if err := s2.WaitEvent(e); err != nil {
			t.Fatal(err)
		}
		launch(t, add1, s2, &backend.Args{Arrays: []backend.ArrayArg{arr(x, n), arr(y, n)}})
		writeU32(t, flag, s3, []uint32{1})
		for i, v := range readU32(t, y, s2, n) {
			if v != 42 {
				t.Fatalf("y[%d] = %d: s2 did not wait for s1", i, v)
			}
		}
		if got := readU32(t, out, s1, 1)[0]; got != 1 {
			t.Fatalf("spin kernel ended with %d (2: it never saw the flag)", got)
		}
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("Query after the work: %v, %v", done, err)
		}
		if done, err := s1.Query(); err != nil || !done {
			t.Errorf("stream Query after Synchronize: %v, %v", done, err)
		}
	})
}

func TestEventTiming(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		fill := build(t, d, fillKernel())
		start, _ := d.NewEvent(true)
		end, _ := d.NewEvent(true)
		plain, _ := d.NewEvent(false)
		defer start.Close()
		defer end.Close()
		defer plain.Close()
		const n = 1 << 22
		buf := mustAlloc(t, d, 4*n)
		if err := start.Record(s); err != nil {
			t.Fatal(err)
		}
		launch(t, fill, s, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{arr(buf, n)}})
		end.Record(s)
		plain.Record(s)
		if err := end.Synchronize(); err != nil {
			t.Fatal(err)
		}
		el, err := start.Elapsed(end)
		if err != nil {
			t.Fatal(err)
		}
		// Only the sign is checked: how long the kernel takes belongs to
		// benchmarks, not tests.
		if el <= 0 {
			t.Errorf("Elapsed around a kernel = %v, want > 0", el)
		}
		if _, err := start.Elapsed(plain); err == nil {
			t.Error("Elapsed with a non-timing event succeeded")
		}
	})
}

// WrapStream uses a stream made by the raw binding; Close does not destroy
// it.
func TestWrapStream(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		c, codes := d.Driver().Calls(), d.Driver().Codes()
		fill := build(t, d, fillKernel())
		var raw uintptr
		if r := d.RawCall(&c.StreamCreate, uintptr(unsafe.Pointer(&raw)), codes.StreamNonBlocking, 0); r != 0 {
			t.Fatalf("raw %s: %d", c.StreamCreate.Name, r)
		}
		w, err := d.WrapStream(raw)
		if err != nil {
			t.Fatal(err)
		}
		buf := mustAlloc(t, d, 4*100)
		launch(t, fill, w, &backend.Args{Scalars: []uint64{0, 9}, Arrays: []backend.ArrayArg{arr(buf, 100)}})
		if got := readU32(t, buf, w, 100)[99]; computes(t, d) && got != 9 {
			t.Errorf("fill on a wrapped stream: %d", got)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if r := d.RawCall(&c.StreamQuery, raw); r != 0 {
			t.Errorf("the raw stream after closing its wrapper: %s = %d", c.StreamQuery.Name, r)
		}
		if r := d.RawCall(&c.StreamDestroy, raw); r != 0 {
			t.Errorf("destroying the raw stream: %d", r)
		}
		for _, h := range []uintptr{0, 1, 2} {
			if _, err := d.WrapStream(h); err == nil || !strings.Contains(err.Error(), "default stream") {
				t.Errorf("WrapStream(%d): %v", h, err)
			}
		}
	})
}

// Temporaries work from the memory pool and from the free list, and
// launches in flight never share them.
func TestTemps(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		k := build(t, d, tempsKernel())
		s := mustStream(t, d, 0)
		out := mustAlloc(t, d, 8*4)
		check := computes(t, d)
		p := d.Props()
		pools := p.MemPools
		defer func() { p.MemPools = pools }()
		for _, usePools := range []bool{true, false} {
			if usePools && !pools {
				continue
			}
			p.MemPools = usePools
			for i := range 4 {
				args := &backend.Args{Scalars: []uint64{0, uint64(1000 + i)}, Arrays: []backend.ArrayArg{{Buf: gpu.SubBuffer(out, 8*i), Shape: [4]int{1, 1, 1, 1}}}}
				launch(t, k, s, args)
			}
			got := make([]uint64, 4)
			out.CopyToHost(s, unsafe.Pointer(&got[0]), 32)
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if check && v != uint64(1000+i) {
					t.Errorf("pools=%v: launch %d read %d back from its temporaries", usePools, i, v)
				}
			}
		}
		if n := d.TempBlocks(); n == 0 || n > 4 {
			t.Errorf("the free list made %d blocks for 4 sequential launches, want 1..4", n)
		}
	})
}

// An illegal address loses the device: the error surfaces, and every later
// call fails fast saying why. It runs in a child process, since a lost
// context stays broken until its last user lets it go.
func TestLostDevice(t *testing.T) {
	if drv := os.Getenv("QD_GPU_LOST_CHILD"); drv != "" {
		lostChild(t, drv)
		return
	}
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d) // the fault is a kernel's illegal store
		cmd := exec.Command(os.Args[0], "-test.run=^TestLostDevice$", "-test.v")
		cmd.Env = append(os.Environ(), "QD_GPU_LOST_CHILD="+d.Arch())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "LOST-OK") {
			t.Fatalf("child did not confirm:\n%s", out)
		}
	})
}

func lostChild(t *testing.T, arch string) {
	for _, dc := range drivers {
		drv, err := dc.get()
		if err != nil || drv.Arch() != arch {
			continue
		}
		// Not closed with a check: Close of a lost device reports the loss.
		d, err := gpu.Open(drv, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := mustStream(t, d, 0)
		poke := build(t, d, pokeKernel())
		buf := mustAlloc(t, d, 4)
		poke.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(buf, 1)}})
		err = s.Synchronize()
		if !errors.Is(err, backend.ErrDeviceLost) {
			t.Fatalf("Synchronize after an illegal store: %v", err)
		}
		_, err = d.Alloc(16)
		if !errors.Is(err, backend.ErrDeviceLost) || !d.Lost() {
			t.Fatalf("Alloc on a lost device: %v", err)
		}
		if cerr := d.Close(); !errors.Is(cerr, backend.ErrDeviceLost) {
			t.Errorf("Close of a lost device: %v, want the loss reported", cerr)
		}
		// Only a new process recovers (the vendors say so): a new device in
		// this one fails at once, saying why.
		if d2, err := gpu.Open(drv, 0); err == nil {
			if _, err = d2.Alloc(16); !errors.Is(err, backend.ErrDeviceLost) {
				t.Errorf("Alloc on a new device after the loss: %v, want ErrDeviceLost", err)
			}
			d2.Close()
		} else if !errors.Is(err, backend.ErrDeviceLost) {
			t.Errorf("Open after the loss: %v, want ErrDeviceLost", err)
		}
		t.Logf("LOST-OK: %v", err)
		return
	}
	t.Fatalf("no %s driver in the child", arch)
}

// fatalLoad is a driver whose module loads fail with a fatal code, as a
// load does after a fault: the driver returns the context's sticky error.
type fatalLoad struct{ gpu.Driver }

func (d fatalLoad) Load(*gpu.Image) (uintptr, error) {
	code, _ := fakedriver.CodeFor(d.Driver, gpu.Fatal)
	return 0, gpu.NewDriverError(d, "load", code)
}

// A fatal code from a module load loses the device, as from any call.
func TestFatalLoadLosesDevice(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d0 *gpu.Device) {
		d, err := gpu.Open(fatalLoad{d0.Driver()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := lower.Lower(fillKernel())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Compile(plan, backend.CompileOptions{}); !errors.Is(err, backend.ErrDeviceLost) {
			t.Errorf("Compile: %v, want ErrDeviceLost", err)
		}
		if _, err := d.Alloc(16); !errors.Is(err, backend.ErrDeviceLost) || !d.Lost() {
			t.Errorf("Alloc after a fatal load: %v, want ErrDeviceLost", err)
		}
		if err := d.Close(); !errors.Is(err, backend.ErrDeviceLost) {
			t.Errorf("Close: %v, want the loss reported", err)
		}
	})
}

// Many goroutines launch the same kernels on their own streams at once,
// with different arguments and temporaries; goroutines migrate between OS
// threads meanwhile. Every launch must see its own arguments.
func TestConcurrentLaunches(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		fill, tk := build(t, d, fillKernel()), build(t, d, tempsKernel())
		check := computes(t, d)
		const workers, iters, n = 8, 200, 1000
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := mustStream(t, d, 0)
			buf, out := mustAlloc(t, d, 4*n), mustAlloc(t, d, 8)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range iters {
					v := uint64(w*100000 + i)
					if err := fill.launch(s, &backend.Args{Scalars: []uint64{0, v}, Arrays: []backend.ArrayArg{arr(buf, n)}}); err != nil {
						errs <- err
						return
					}
					if err := tk.launch(s, &backend.Args{Scalars: []uint64{0, v}, Arrays: []backend.ArrayArg{arr(out, 1)}}); err != nil {
						errs <- err
						return
					}
					if i%50 == 0 {
						runtime.Gosched()
					}
				}
				got := make([]uint32, n)
				var got64 uint64
				buf.CopyToHost(s, unsafe.Pointer(&got[0]), 4*n)
				out.CopyToHost(s, unsafe.Pointer(&got64), 8)
				if err := s.Synchronize(); err != nil {
					errs <- err
					return
				}
				if !check {
					return
				}
				want := uint32(w*100000 + iters - 1)
				for j, g := range got {
					if g != want {
						errs <- fmt.Errorf("worker %d: element %d = %d, want %d", w, j, g, want)
						return
					}
				}
				if got64 != uint64(want) {
					errs <- fmt.Errorf("worker %d: temporaries gave %d, want %d", w, got64, want)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// Stream-parallel groups of one plan run their tasks on different streams:
// task 0 spins until a flag that task 1, on another stream, sets. Neither
// can finish unless both run at once.
func TestStreamsOverlap(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d)
		spin, fill := build(t, d, spinKernel()), build(t, d, fillKernel())
		s1, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
		flag, out, p := mustAlloc(t, d, 4), mustAlloc(t, d, 4), mustAlloc(t, d, 4)
		writeU32(t, flag, s1, []uint32{0})
		if err := s1.Synchronize(); err != nil {
			t.Fatal(err)
		}
		launch(t, spin, s1, spinArgs(flag, out, p, 1, 3))
		launch(t, fill, s2, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{arr(flag, 1)}})
		if got := readU32(t, out, s1, 1)[0]; got != 1 {
			t.Fatalf("the kernel on s1 never saw s2's write (out = %d): the streams did not overlap", got)
		}
	})
}

func TestSaxpy(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d)
		s := mustStream(t, d, 0)
		k := build(t, d, saxpyKernel())
		for _, n := range []int{1, 1000, 1 << 22} {
			xs, ys := make([]float32, n), make([]float32, n)
			for i := range xs {
				xs[i], ys[i] = float32(i), float32(2*i+1)
			}
			x, y := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
			x.CopyFromHost(s, unsafe.Pointer(&xs[0]), 4*n)
			y.CopyFromHost(s, unsafe.Pointer(&ys[0]), 4*n)
			a := float32(3)
			launch(t, k, s, &backend.Args{
				Scalars: []uint64{uint64(math.Float32bits(a)), 0, 0, uint64(n)},
				Arrays:  []backend.ArrayArg{{}, arr(x, n), arr(y, n), {}},
			})
			got := make([]float32, n)
			y.CopyToHost(s, unsafe.Pointer(&got[0]), 4*n)
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if want := a*xs[i] + ys[i]; v != want {
					t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, v, want)
				}
			}
		}
	})
}

// A kernel with two stream-parallel groups, each task run on its own
// stream with fork and join events, as package qd does it.
func TestGroupsOnStreams(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		b := ir.NewBuilder("twoJobs")
		p, q := b.Array("p", ir.I32, 1), b.Array("q", ir.I32, 1)
		b.Group(func() { b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) { b.Store(p, ir.I32c(1), ir.Ref(i)) }) })
		b.Group(func() { b.Parallel(ir.LenOf(q, 0), func(i *ir.Var) { b.Store(q, ir.I32c(2), ir.Ref(i)) }) })
		k := build(t, d, b.Kernel())
		const n = 1 << 16
		pb, qb := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		args := &backend.Args{Scalars: make([]uint64, 2), Arrays: []backend.ArrayArg{arr(pb, n), arr(qb, n)}}
		fork, _ := d.NewEvent(false)
		defer fork.Close()
		l, err := k.Begin(s, args)
		if err != nil {
			t.Fatal(err)
		}
		fork.Record(s)
		var joins []backend.Event
		for task := range k.tasks {
			gs := mustStream(t, d, 0)
			gs.WaitEvent(fork)
			if err := l.Run(task, gs); err != nil {
				t.Fatalf("task %d: %v", task, err)
			}
			j, _ := d.NewEvent(false)
			defer j.Close()
			j.Record(gs)
			joins = append(joins, j)
		}
		for _, j := range joins {
			s.WaitEvent(j)
		}
		if err := l.End(s); err != nil {
			t.Fatal(err)
		}
		gp, gq := readU32(t, pb, s, n), readU32(t, qb, s, n)
		if !computes(t, d) {
			return
		}
		for i := range n {
			if gp[i] != 1 || gq[i] != 2 {
				t.Fatalf("element %d: p=%d q=%d", i, gp[i], gq[i])
			}
		}
	})
}

// Calls from a thread where the device is not current still act, in the
// device's context: where the driver lets calls that name a stream skip
// MakeCurrent (Props.ContextChecked), the call that finds no context fails
// and is repeated after it. Every such call is made once from a thread
// whose context was unbound: a stream-ordered allocation, a fill, a copy,
// a launch, an event record and wait, a free.
func TestCallsWithoutCurrentContext(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		if !d.Props().ContextChecked {
			t.Skipf("%s makes the device current before every call", d.Arch())
		}
		s1, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
		fill := build(t, d, fillKernel())
		const n = 1 << 10
		buf := mustAlloc(t, d, 4*n)
		ev, err := d.NewEvent(false)
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		unbound := func(what string, f func() error) {
			t.Helper()
			done := make(chan error)
			go func() {
				runtime.LockOSThread() // the thread loses its context for good: let it exit with the goroutine
				if r := d.RawCall(&d.Driver().Calls().MakeCurrent, 0); r != 0 {
					done <- fmt.Errorf("unbinding the context: result %d", r)
					return
				}
				done <- f()
			}()
			if err := <-done; err != nil {
				t.Fatalf("%s on a thread without the context: %v", what, err)
			}
		}
		var tmp backend.Buffer
		if d.Props().MemPools {
			unbound("AllocOn", func() (err error) { tmp, err = d.AllocOn(s1, 4*n); return err })
			unbound("Zero", func() error { return tmp.(backend.Zeroer).Zero(s1) })
		}
		unbound("launch", func() error {
			return fill.launch(s1, &backend.Args{Scalars: []uint64{0, 5}, Arrays: []backend.ArrayArg{arr(buf, n)}})
		})
		unbound("Record", func() error { return ev.Record(s1) })
		unbound("WaitEvent", func() error { return s2.WaitEvent(ev) })
		if tmp != nil {
			unbound("CopyFrom", func() error { return tmp.CopyFrom(s2, buf, 4*n) })
			unbound("FreeOn", func() error { return tmp.FreeOn(s2) })
		}
		for i, v := range readU32(t, buf, s2, n) {
			if v != 5 {
				t.Fatalf("element %d = %d", i, v)
			}
		}
	})
}
