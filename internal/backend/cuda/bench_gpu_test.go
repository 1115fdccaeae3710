package cuda

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// Benchmarks of host costs on the GPU. Launch benchmarks synchronize every
// syncEvery launches so the driver's queue never fills (a full queue would
// make cuLaunchKernel wait for the GPU and measure the GPU instead).
const syncEvery = 256

// benchSink forces benchmark storage whose address is passed as uintptr to
// the heap, where it never moves.
var benchSink []any

// rawLaunch measures cuLaunchKernel through SyscallN with prebuilt
// arguments on a thread locked for the whole loop: the floor for any Go
// launch path.
func rawLaunch(b *testing.B, d *device, h *moduleHandle, s backend.Stream, vals []uint64) {
	ptrs := make([]uintptr, len(vals))
	for i := range vals {
		ptrs[i] = uintptr(unsafe.Pointer(&vals[i]))
	}
	args := new([11]uintptr)
	benchSink = append(benchSink, ptrs, args, vals)
	args[0] = h.m.tasks[0].fn
	args[1], args[2], args[3], args[4], args[5], args[6] = 1, 1, 1, 1, 1, 1
	args[8] = s.Handle()
	if len(ptrs) > 0 {
		args[9] = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	sargs := []uintptr{s.Handle()}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	call1(d.sym.ctxSetCurrent, d.ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if r := callRes(purego.SyscallN(d.sym.launchKernel, args[:]...)); r != cudaSuccess {
			b.Fatalf("cuLaunchKernel: %d", r)
		}
		if i%syncEvery == syncEvery-1 {
			purego.SyscallN(d.sym.streamSynchronize, sargs...)
		}
	}
	purego.SyscallN(d.sym.streamSynchronize, sargs...)
}

func BenchmarkLaunchRawEmpty(b *testing.B) {
	d := openGPU(b)
	rawLaunch(b, d, testKernel(b, d, "empty"), mustStream(b, d, 0), nil)
}

func BenchmarkLaunchRaw4Args(b *testing.B) {
	d := openGPU(b)
	buf := mustAlloc(b, d, 64)
	p := buf.(*buffer).ptr
	rawLaunch(b, d, testKernel(b, d, "nop4"), mustStream(b, d, 0), []uint64{p, p, 7, 9})
}

// qdLaunch measures Begin/Run/End, the path package qd takes.
func qdLaunch(b *testing.B, d *device, h *moduleHandle, s backend.Stream, args *backend.Args) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l, err := h.Begin(s, args)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Run(0, s); err != nil {
			b.Fatal(err)
		}
		l.End(s)
		if i%syncEvery == syncEvery-1 {
			s.Synchronize()
		}
	}
	s.Synchronize()
}

func nop4Args(b *testing.B, d *device) *backend.Args {
	buf := mustAlloc(b, d, 64)
	return &backend.Args{Scalars: []uint64{0, 0, 7, 9}, Arrays: []backend.ArrayArg{arr(buf, 16), arr(buf, 16), {}, {}}}
}

func BenchmarkLaunchPathEmpty(b *testing.B) {
	d := openGPU(b)
	qdLaunch(b, d, testKernel(b, d, "empty"), mustStream(b, d, 0), &backend.Args{})
}

func BenchmarkLaunchPath4Args(b *testing.B) {
	d := openGPU(b)
	qdLaunch(b, d, testKernel(b, d, "nop4"), mustStream(b, d, 0), nop4Args(b, d))
}

// The same with a cuCtxGetCurrent compare instead of an unconditional
// cuCtxSetCurrent on every call path.
func BenchmarkLaunchPath4ArgsCtxCheck(b *testing.B) {
	d := openGPU(b)
	ctxCheckFirst = true
	defer func() { ctxCheckFirst = false }()
	qdLaunch(b, d, testKernel(b, d, "nop4"), mustStream(b, d, 0), nop4Args(b, d))
}

// Begin/Run/End of a kernel with temporaries: memory pool vs free list.
func benchTemps(b *testing.B, pools bool) {
	d := openGPU(b)
	if pools && !d.memPools {
		b.Skip("no memory pools on this device")
	}
	saved := d.memPools
	d.memPools = pools
	defer func() { d.memPools = saved }()
	out := mustAlloc(b, d, 8)
	qdLaunch(b, d, testKernel(b, d, "temps_rw"), mustStream(b, d, 0),
		&backend.Args{Scalars: []uint64{0, 5}, Arrays: []backend.ArrayArg{{Buf: out}}})
}

func BenchmarkLaunchTempsPool(b *testing.B)     { benchTemps(b, true) }
func BenchmarkLaunchTempsFreeList(b *testing.B) { benchTemps(b, false) }

// The two ways to make the context current, alone (thread locked).
func BenchmarkCtxSetCurrent(b *testing.B) {
	d := openGPU(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	for range b.N {
		purego.SyscallN(d.sym.ctxSetCurrent, d.ctxArgs...)
	}
}

func BenchmarkCtxGetCurrent(b *testing.B) {
	d := openGPU(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f := getFrame()
	f.a[0] = f.outAddr(0)
	b.ReportAllocs()
	for range b.N {
		purego.SyscallN(d.sym.ctxGetCurrent, f.a[:1]...)
		if uintptr(f.out[0]) != d.ctx {
			b.Fatal("context not current")
		}
	}
}

// One fork/join edge: record on s1, wait on s2.
func BenchmarkEventRecordWait(b *testing.B) {
	d := openGPU(b)
	s1, s2 := mustStream(b, d, 0), mustStream(b, d, 0)
	e, err := d.NewEvent(false)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := e.Record(s1); err != nil {
			b.Fatal(err)
		}
		if err := s2.WaitEvent(e); err != nil {
			b.Fatal(err)
		}
		if i%syncEvery == syncEvery-1 {
			s2.Synchronize()
		}
	}
	s2.Synchronize()
}

func BenchmarkAllocFree1MiB(b *testing.B) {
	d := openGPU(b)
	b.ReportAllocs()
	for range b.N {
		buf, err := d.Alloc(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		buf.Close()
	}
}

func BenchmarkStreamQuery(b *testing.B) {
	d := openGPU(b)
	s := mustStream(b, d, 0)
	b.ReportAllocs()
	for range b.N {
		if _, err := s.Query(); err != nil {
			b.Fatal(err)
		}
	}
}

// Device-to-device copy bandwidth (bytes counted once).
func BenchmarkCopyDtoD256MiB(b *testing.B) {
	d := openGPU(b)
	const n = 256 << 20
	src, dst := mustAlloc(b, d, n), mustAlloc(b, d, n)
	s := mustStream(b, d, 0)
	b.SetBytes(n)
	b.ResetTimer()
	for range b.N {
		if err := dst.(*buffer).CopyFromBuffer(s, src, n); err != nil {
			b.Fatal(err)
		}
	}
	s.Synchronize()
}
