package gpu_test

import (
	"fmt"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Benchmarks of host costs on the GPU, per driver. Launch benchmarks
// synchronize every syncEvery launches so the driver's queue never fills (a
// full queue would make a launch wait for the GPU and measure the GPU
// instead).
const syncEvery = 256

// saxpy4 is a compiled saxpy with its 4 arguments on 16-element buffers.
func saxpy4(b *testing.B, d *gpu.Device) (*kernel, *backend.Args) {
	x, y := mustAlloc(b, d, 64), mustAlloc(b, d, 64)
	return build(b, d, saxpyKernel()), &backend.Args{
		Scalars: []uint64{uint64(math.Float32bits(2)), 0, 0, 16},
		Arrays:  []backend.ArrayArg{{}, arr(x, 16), arr(y, 16), {}},
	}
}

// BenchmarkLaunchRaw4Args is the floor for any Go launch path: the
// driver's launch function through SyscallN with prebuilt arguments on a
// thread locked for the whole loop (RawLaunchCost), as ns/launch.
func BenchmarkLaunchRaw4Args(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		k, args := saxpy4(b, d)
		s := mustStream(b, d, 0)
		rl := k.Module.(backend.RawLauncher)
		b.ResetTimer()
		cost, err := rl.RawLaunchCost(args, s, b.N, syncEvery)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cost.Nanoseconds()), "ns/launch")
	})
}

// qdLaunch measures Begin/Run/End, the path package qd takes.
func qdLaunch(b *testing.B, k *kernel, s backend.Stream, args *backend.Args) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := k.launch(s, args); err != nil {
			b.Fatal(err)
		}
		if i%syncEvery == syncEvery-1 {
			s.Synchronize()
		}
	}
	s.Synchronize()
}

func BenchmarkLaunchPath4Args(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		k, args := saxpy4(b, d)
		qdLaunch(b, k, mustStream(b, d, 0), args)
	})
}

// Begin/Run/End of a kernel with temporaries: memory pool vs free list.
func BenchmarkLaunchTemps(b *testing.B) {
	for _, pools := range []bool{true, false} {
		name := map[bool]string{true: "pool", false: "freelist"}[pools]
		b.Run(name, func(b *testing.B) {
			forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
				p := d.Props()
				if pools && !p.MemPools {
					b.Skip("no memory pools on this device")
				}
				saved := p.MemPools
				p.MemPools = pools
				defer func() { p.MemPools = saved }()
				out := mustAlloc(b, d, 8)
				qdLaunch(b, build(b, d, tempsKernel()), mustStream(b, d, 0),
					&backend.Args{Scalars: []uint64{0, 5}, Arrays: []backend.ArrayArg{arr(out, 1)}})
			})
		})
	}
}

// BenchmarkMakeCurrent is the call every call path begins with.
func BenchmarkMakeCurrent(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		c := d.Driver().Calls()
		arg := d.Props().CurrentArg
		b.ReportAllocs()
		for range b.N {
			d.RawCall(&c.MakeCurrent, arg)
		}
	})
}

// One fork/join edge: record on s1, wait on s2.
func BenchmarkEventRecordWait(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
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
	})
}

func BenchmarkAllocFree1MiB(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		b.ReportAllocs()
		for range b.N {
			buf, err := d.Alloc(1 << 20)
			if err != nil {
				b.Fatal(err)
			}
			buf.Close()
		}
	})
}

func BenchmarkStreamQuery(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		s := mustStream(b, d, 0)
		b.ReportAllocs()
		for range b.N {
			if _, err := s.Query(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Device-to-device copy bandwidth (bytes counted once).
func BenchmarkCopyDtoD256MiB(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		const n = 256 << 20
		src, dst := mustAlloc(b, d, n), mustAlloc(b, d, n)
		s := mustStream(b, d, 0)
		b.SetBytes(n)
		b.ResetTimer()
		for range b.N {
			if err := dst.CopyFrom(s, src, n); err != nil {
				b.Fatal(err)
			}
		}
		s.Synchronize()
	})
}

// Stream-ordered memory, 1 MiB: what NewNdarrayOn + Close cost the host
// in the runtime (AllocOn, Zero, FreeOn), piece by piece, and the bare
// driver calls on a thread with the device current.
func BenchmarkStreamOrderedMemory(b *testing.B) {
	const n = 1 << 20
	ops := []struct {
		name string
		op   func(d *gpu.Device, s backend.Stream) error
	}{
		{"AllocOn+FreeOn", func(d *gpu.Device, s backend.Stream) error {
			buf, err := d.AllocOn(s, n)
			if err != nil {
				return err
			}
			return buf.FreeOn(s)
		}},
		{"AllocOn+Zero+FreeOn", func(d *gpu.Device, s backend.Stream) error {
			buf, err := d.AllocOn(s, n)
			if err != nil {
				return err
			}
			if err := buf.(backend.Zeroer).Zero(s); err != nil {
				return err
			}
			return buf.FreeOn(s)
		}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
				if !d.Props().MemPools {
					b.Skip("no memory pools on this device")
				}
				s := mustStream(b, d, 0)
				b.ReportAllocs()
				for i := range b.N {
					if err := o.op(d, s); err != nil {
						b.Fatal(err)
					}
					if i%syncEvery == syncEvery-1 {
						s.Synchronize()
					}
				}
				s.Synchronize()
			})
		})
	}
	// The bare calls, n of each, in one call path (no MakeCurrent each).
	b.Run("raw", func(b *testing.B) {
		forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
			if !d.Props().MemPools {
				b.Skip("no memory pools on this device")
			}
			c := d.Driver().Calls()
			s := mustStream(b, d, 0)
			h := s.Handle()
			ptr := new(uint64)
			var alloc, zero, free time.Duration
			err := d.Do(func() error {
				for i := range b.N {
					t0 := time.Now()
					if r, _, _ := purego.SyscallN(c.MemAllocAsync.Addr, uintptr(unsafe.Pointer(ptr)), n, h); r != 0 {
						return fmt.Errorf("MemAllocAsync: %d", r)
					}
					t1 := time.Now()
					if r, _, _ := purego.SyscallN(c.MemsetD8Async.Addr, uintptr(*ptr), 0, n, h); r != 0 {
						return fmt.Errorf("MemsetD8Async: %d", r)
					}
					t2 := time.Now()
					if r, _, _ := purego.SyscallN(c.MemFreeAsync.Addr, uintptr(*ptr), h); r != 0 {
						return fmt.Errorf("MemFreeAsync: %d", r)
					}
					free += time.Since(t2)
					alloc, zero = alloc+t1.Sub(t0), zero+t2.Sub(t1)
					if i%syncEvery == syncEvery-1 {
						purego.SyscallN(c.StreamSynchronize.Addr, h)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			s.Synchronize()
			b.ReportMetric(float64(alloc.Nanoseconds())/float64(b.N), "ns-alloc")
			b.ReportMetric(float64(zero.Nanoseconds())/float64(b.N), "ns-memset")
			b.ReportMetric(float64(free.Nanoseconds())/float64(b.N), "ns-free")
		})
	})
}
