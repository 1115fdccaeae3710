package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
)

func TestGPUOpen(t *testing.T) {
	d := openGPU(t)
	desc := d.Describe()
	t.Logf("%s; memory pools %v; priorities %d..%d", desc, d.memPools, d.prioLeast, d.prioGreatest)
	if d.name == "" || d.ccMajor < 3 || d.smCount < 1 || d.totalMem == 0 || !strings.Contains(desc, "compute capability") {
		t.Errorf("implausible device properties: %s", desc)
	}
	least, greatest := d.PriorityRange()
	if least < greatest {
		t.Errorf("PriorityRange() = %d, %d: least must be ≥ greatest", least, greatest)
	}
	if d.Arch() != "cuda" {
		t.Errorf("Arch() = %q", d.Arch())
	}
	if v := os.Getenv(maxConnectionsEnv); v == "" {
		t.Errorf("%s not set at driver start", maxConnectionsEnv)
	}
	if _, err := Open(d.drv.devices); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Open of a missing ordinal: %v", err)
	}
}

func TestGPUCloseIdempotent(t *testing.T) {
	requireGPU(t)
	d, err := open(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := d.Alloc(16); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
}

func TestGPUCopyRoundTrip(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	const n = 1<<16 + 3
	a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i*2654435761) ^ 0x5a5a
	}
	writeU32(t, a, s, src)
	if err := b.(*buffer).CopyFromBuffer(s, a, 4*n); err != nil {
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
}

func TestGPUAllocErrors(t *testing.T) {
	d := openGPU(t)
	if _, err := d.Alloc(0); err == nil {
		t.Error("Alloc(0) succeeded")
	}
	_, err := d.Alloc(1 << 50) // 1 PiB
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("huge Alloc: %v, want ErrOutOfMemory", err)
	}
	b := mustAlloc(t, d, 64)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestGPUFillKernel(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	fill := testKernel(t, d, "fill")
	const n = 1 << 20
	buf := mustAlloc(t, d, 4*n)
	launch1(t, fill, s, &backend.Args{Scalars: []uint64{0, 0xC0FFEE}, Arrays: []backend.ArrayArg{arr(buf, n), {}}})
	for i, v := range readU32(t, buf, s, n) {
		if v != 0xC0FFEE {
			t.Fatalf("element %d = %#x", i, v)
		}
	}
	// A view of the first 10 elements: only those change.
	launch1(t, fill, s, &backend.Args{Scalars: []uint64{0, 7}, Arrays: []backend.ArrayArg{arr(buf, 10), {}}})
	got := readU32(t, buf, s, 11)
	if got[9] != 7 || got[10] != 0xC0FFEE {
		t.Errorf("partial fill: %v", got)
	}
}

// Work recorded on s1 orders later work on s2: add1 on s2 reads what a
// delayed fill on s1 wrote.
func TestGPUStreamEventOrdering(t *testing.T) {
	d := openGPU(t)
	s1, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
	delay, add1 := testKernel(t, d, "delay_fill"), testKernel(t, d, "add1")
	const n = 4096
	x, y := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	e, err := d.NewEvent(false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	launch1(t, delay, s1, &backend.Args{Scalars: []uint64{0, 41, 50_000_000}, Arrays: []backend.ArrayArg{arr(x, n)}})
	if err := e.Record(s1); err != nil {
		t.Fatal(err)
	}
	if done, err := e.Query(); err != nil || done {
		t.Errorf("Query right after recording behind a 50 ms kernel: %v, %v", done, err)
	}
	if err := s2.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	launch1(t, add1, s2, &backend.Args{Arrays: []backend.ArrayArg{arr(x, n), arr(y, n)}})
	for i, v := range readU32(t, y, s2, n) {
		if v != 42 {
			t.Fatalf("y[%d] = %d: s2 did not wait for s1", i, v)
		}
	}
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done, err := e.Query(); err != nil || !done {
		t.Errorf("Query after Synchronize: %v, %v", done, err)
	}
}

// Query reports unfinished work without blocking: a kernel spins until a
// flag that a copy on another stream sets.
func TestGPUStreamQuery(t *testing.T) {
	d := openGPU(t)
	s1, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
	spin := testKernel(t, d, "spin")
	flag, out := mustAlloc(t, d, 4), mustAlloc(t, d, 4)
	writeU32(t, flag, s1, []uint32{0})
	writeU32(t, out, s1, []uint32{0})
	launch1(t, spin, s1, &backend.Args{Arrays: []backend.ArrayArg{arr(flag, 1), arr(out, 1)}})
	time.Sleep(10 * time.Millisecond)
	if done, err := s1.Query(); err != nil || done {
		t.Errorf("Query of a spinning stream: %v, %v", done, err)
	}
	one := []uint32{1}
	writeU32(t, flag, s2, one)
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if got := readU32(t, out, s1, 1)[0]; got != 1 {
		t.Fatalf("spin kernel ended with %d (2: it never saw the flag)", got)
	}
	if done, err := s1.Query(); err != nil || !done {
		t.Errorf("Query after Synchronize: %v, %v", done, err)
	}
}

func TestGPUEventTiming(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	delay := testKernel(t, d, "delay_fill")
	start, _ := d.NewEvent(true)
	end, _ := d.NewEvent(true)
	plain, _ := d.NewEvent(false)
	defer start.Close()
	defer end.Close()
	defer plain.Close()
	buf := mustAlloc(t, d, 4)
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	launch1(t, delay, s, &backend.Args{Scalars: []uint64{0, 1, 2_000_000}, Arrays: []backend.ArrayArg{arr(buf, 1)}})
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
}

// WrapStream uses a stream made by the raw binding; Close does not destroy
// it.
func TestGPUWrapStream(t *testing.T) {
	d := openGPU(t)
	fill := testKernel(t, d, "fill")
	if err := d.enter(); err != nil {
		t.Fatal(err)
	}
	var raw uintptr
	r := callRes(purego.SyscallN(d.sym.streamCreateWithPriority, uintptr(unsafe.Pointer(&raw)), streamNonBlocking, 0))
	d.leave()
	if r != cudaSuccess {
		t.Fatalf("raw cuStreamCreateWithPriority: %d", r)
	}
	w, err := d.WrapStream(raw)
	if err != nil {
		t.Fatal(err)
	}
	buf := mustAlloc(t, d, 4*100)
	launch1(t, fill, w, &backend.Args{Scalars: []uint64{0, 9}, Arrays: []backend.ArrayArg{arr(buf, 100), {}}})
	if got := readU32(t, buf, w, 100)[99]; got != 9 {
		t.Errorf("fill on a wrapped stream: %d", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.enter(); err != nil {
		t.Fatal(err)
	}
	defer d.leave()
	if r := call1(d.sym.streamQuery, raw); r != cudaSuccess {
		t.Errorf("the raw stream after closing its wrapper: cuStreamQuery = %d", r)
	}
	if r := call1(d.sym.streamDestroy, raw); r != cudaSuccess {
		t.Errorf("destroying the raw stream: %d", r)
	}
}

func TestGPUStreamPriorities(t *testing.T) {
	d := openGPU(t)
	getPrio, err := purego.Dlsym(d.drv.lib, "cuStreamGetPriority")
	if err != nil {
		t.Fatal(err)
	}
	least, greatest := d.PriorityRange()
	fill := testKernel(t, d, "fill")
	buf := mustAlloc(t, d, 4*64)
	for _, c := range []struct{ ask, want int }{
		{least, least}, {greatest, greatest}, {greatest - 100, greatest}, {least + 100, least},
	} {
		s := mustStream(t, d, c.ask)
		if err := d.enter(); err != nil {
			t.Fatal(err)
		}
		var p int32
		r := callRes(purego.SyscallN(getPrio, s.Handle(), uintptr(unsafe.Pointer(&p))))
		d.leave()
		if r != cudaSuccess || int(p) != c.want {
			t.Errorf("NewStream(%d): priority %d (r=%d), want %d", c.ask, p, r, c.want)
		}
		launch1(t, fill, s, &backend.Args{Scalars: []uint64{0, 3}, Arrays: []backend.ArrayArg{arr(buf, 64), {}}})
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	}
}

// Temporaries work from the memory pool and from the free list, and two
// launches in flight never share them.
func TestGPUTemps(t *testing.T) {
	d := openGPU(t)
	k := testKernel(t, d, "temps_rw")
	s := mustStream(t, d, 0)
	out := mustAlloc(t, d, 8*4)
	pools := d.memPools
	defer func() { d.memPools = pools }()
	for _, usePools := range []bool{true, false} {
		if usePools && !pools {
			continue
		}
		d.memPools = usePools
		for i := range 4 {
			args := &backend.Args{Scalars: []uint64{0, uint64(1000 + i)}, Arrays: []backend.ArrayArg{{Buf: sub(out, 8*i)}}}
			launch1(t, k, s, args)
		}
		got := make([]uint64, 4)
		out.CopyToHost(s, unsafe.Pointer(&got[0]), 32)
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != uint64(1000+i) {
				t.Errorf("pools=%v: launch %d read %d back from its temporaries", usePools, i, v)
			}
		}
	}
	if len(d.temps.all) == 0 {
		t.Error("the free-list path never allocated a block")
	}
	if len(d.temps.all) > 4 {
		t.Errorf("free list holds %d blocks after 4 sequential launches", len(d.temps.all))
	}
}

// An illegal address poisons the context: the error surfaces, and every
// later call fails fast saying why. It runs in a child process, since a
// poisoned primary context stays broken for the whole process.
func TestGPUPoison(t *testing.T) {
	if os.Getenv("QD_CUDA_POISON_CHILD") == "1" {
		poisonChild(t)
		return
	}
	requireGPU(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUPoison$", "-test.v")
	cmd.Env = append(os.Environ(), "QD_CUDA_POISON_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "POISON-OK") {
		t.Fatalf("child did not confirm:\n%s", out)
	}
}

func poisonChild(t *testing.T) {
	d, err := open(0) // not closed: Close of a poisoned device reports the poison
	if err != nil {
		t.Fatal(err)
	}
	s := mustStream(t, d, 0)
	poke := testKernel(t, d, "poke")
	l, err := poke.Begin(s, &backend.Args{Scalars: []uint64{0x10}})
	if err != nil {
		t.Fatal(err)
	}
	l.Run(0, s)
	l.End(s)
	err = s.Synchronize()
	if !errors.Is(err, ErrContextPoisoned) {
		t.Fatalf("Synchronize after an illegal store: %v", err)
	}
	_, err = d.Alloc(16)
	if !errors.Is(err, ErrContextPoisoned) || !strings.Contains(err.Error(), "cuStreamSynchronize") {
		t.Fatalf("Alloc on a poisoned device: %v", err)
	}
	t.Logf("POISON-OK: %v", err)
}

// A JIT failure carries the JIT's error log and wraps ErrInvalidPTX.
func TestGPUBadPTX(t *testing.T) {
	d := openGPU(t)
	bad := ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32 %f1;\n\tret;\n}\n"
	_, err := d.load(&compiled{ptx: bad, tasks: []task{{Task: kabi.Task{Entry: "k", Kind: 1, BlockDim: 1}}}}, 0)
	var de *DriverError
	if !errors.As(err, &de) || !errors.Is(err, ErrInvalidPTX) || de.Log == "" {
		t.Fatalf("bad PTX: %v", err)
	}
	t.Logf("%v", err)
	if d.poison.Load() != nil {
		t.Error("a JIT failure poisoned the device")
	}
	_, err = d.load(&compiled{ptx: testPTX, tasks: []task{{Task: kabi.Task{Entry: "no_such_entry", Kind: 1, BlockDim: 1}}}}, 0)
	if err == nil || !strings.Contains(err.Error(), "no_such_entry") {
		t.Errorf("missing entry: %v", err)
	}
}

// Many goroutines launch the same kernel on their own streams at once, with
// different arguments and temporaries; goroutines migrate between OS
// threads meanwhile. Every launch must see its own arguments.
func TestGPUConcurrentLaunches(t *testing.T) {
	d := openGPU(t)
	fill, tk := testKernel(t, d, "fill"), testKernel(t, d, "temps_rw")
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
				for _, c := range []struct {
					h    *moduleHandle
					args *backend.Args
				}{
					{fill, &backend.Args{Scalars: []uint64{0, v}, Arrays: []backend.ArrayArg{arr(buf, n), {}}}},
					{tk, &backend.Args{Scalars: []uint64{0, v}, Arrays: []backend.ArrayArg{{Buf: out}}}},
				} {
					l, err := c.h.Begin(s, c.args)
					if err != nil {
						errs <- err
						return
					}
					err = l.Run(0, s)
					if endErr := l.End(s); err == nil {
						err = endErr
					}
					if err != nil {
						errs <- err
						return
					}
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
}
