package qd

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// BenchmarkLaunchCPU is the cost of one LaunchOn of a 4-argument kernel on
// an explicit stream of the CPU backend, with a tiny range so that the
// launch path, not the loop, is measured. The stream drains concurrently;
// the reported time is per launch in steady state.
func BenchmarkLaunchCPU(b *testing.B) { benchLaunch(b, CPU) }

// BenchmarkLaunchGPU is the same on CUDA: the path the launch host-cost
// bar measures, for profiling (-test.cpuprofile) on a GPU machine. It skips
// without a GPU (fails under QD_GPU_RUN=1).
func BenchmarkLaunchGPU(b *testing.B) {
	if p, err := Init(WithArch(CUDA)); err != nil {
		if os.Getenv("QD_GPU_RUN") == "1" {
			b.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
		}
		b.Skipf("no CUDA: %v", err)
	} else {
		p.Close()
	}
	benchLaunch(b, CUDA)
}

func benchLaunch(b *testing.B, arch Arch) {
	p := initProgram(b, WithArch(arch))
	defer p.Close()
	k := build(b, p, suitekernels.SaxpyN())
	x := newNdarray[float32](b, p, 16)
	y := newNdarray[float32](b, p, 16)
	s := newStream(b, p)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := k.LaunchOn(s, float32(2), x, y, int64(16)); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			check(b, s.Synchronize())
		}
	}
	check(b, s.Synchronize())
}

// BenchmarkParallelLoopCPU runs a memory-bound loop (saxpy over 2^22
// elements) and a compute-bound one (a degree-64 polynomial over 2^18
// elements) with one core and with all of them. The bar (docs/semantics.md#performance-bars) is ≥ 1.8× on
// 2 cores; a memory-bound loop is limited by the memory system instead.
func BenchmarkParallelLoopCPU(b *testing.B) {
	cases := []struct {
		name string
		size int
		k    *ir.Kernel
		args func(x, y *Ndarray[float32], n int) []any
	}{
		{"saxpy", 1 << 22, suitekernels.SaxpyN(), func(x, y *Ndarray[float32], n int) []any { return []any{float32(2), x, y, int64(n)} }},
		{"poly64", 1 << 18, suitekernels.Poly(), func(x, y *Ndarray[float32], _ int) []any { return []any{x, y} }},
	}
	for _, c := range cases {
		for _, procs := range []int{1, runtime.NumCPU()} {
			b.Run(fmt.Sprintf("%s/cores=%d", c.name, procs), func(b *testing.B) {
				old := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(old)
				p := initProgram(b, WithArch(CPU))
				defer p.Close()
				k := build(b, p, c.k)
				x := newNdarray[float32](b, p, c.size)
				y := newNdarray[float32](b, p, c.size)
				args := c.args(x, y, c.size)
				b.ReportMetric(float64(c.size), "elements/op")
				b.ResetTimer()
				for b.Loop() {
					check(b, k.Launch(args...))
					check(b, p.DefaultStream().Synchronize())
				}
			})
		}
	}
}

// BenchmarkPoolAcquireRelease is one borrow and return of a pooled stream
// (bar ≤ 0.2 µs, docs/semantics.md#performance-bars).
func BenchmarkPoolAcquireRelease(b *testing.B) {
	p := initProgram(b, WithArch(CPU))
	defer p.Close()
	s := must(p.pool.Get())(b)
	p.pool.Put(s)
	b.ReportAllocs()
	for b.Loop() {
		s, _ := p.pool.Get()
		p.pool.Put(s)
	}
}

// BenchmarkStreamParallelLaunchCPU is the host cost of launching a kernel of
// 4 stream-parallel groups (fork, 3 borrowed streams, joins).
func BenchmarkStreamParallelLaunchCPU(b *testing.B) {
	p := initProgram(b, WithArch(CPU))
	defer p.Close()
	k := build(b, p, suitekernels.Groups(4))
	arr := newNdarray[float32](b, p, 4)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		check(b, k.Launch(arr))
		if i%256 == 255 {
			check(b, p.Synchronize())
		}
	}
	check(b, p.Synchronize())
}
