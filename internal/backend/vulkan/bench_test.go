package vulkan

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// The benchmarks of the Vulkan bars (docs/performance.md): saxpy against
// the device's copy bandwidth through vkCmdCopyBuffer, the host cost of a
// launch against a raw vkQueueSubmit of a pre-recorded dispatch, and K
// latency-bound kernels on K streams against one stream.

func compileFor(b testing.TB, d *Device, plan *lower.Plan) backend.Module {
	b.Helper()
	mod, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mod.Close() })
	return mod
}

func mustLower(b testing.TB, k *ir.Kernel) *lower.Plan {
	b.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		b.Fatal(err)
	}
	return plan
}

// launchAll is one launch of every task of mod on s.
func launchAll(b testing.TB, mod backend.Module, s backend.Stream, ntasks int, args *backend.Args) {
	l, err := mod.Begin(s, args)
	if err != nil {
		b.Fatal(err)
	}
	for t := range ntasks {
		if err := l.Run(t, s); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.End(s); err != nil {
		b.Fatal(err)
	}
}

func sync1(b testing.TB, s backend.Stream) {
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// benchN is the saxpy length: 2^28 on a GPU, less on a device on the CPU.
func benchN(d *Device) int {
	if d.phys.Type == vk.PhysicalDeviceTypeCPU {
		return 1 << 22
	}
	return 1 << 28
}

// BenchmarkCopy is vkCmdCopyBuffer of n float32: GB/s counts the bytes
// read and written.
func BenchmarkCopy(b *testing.B) {
	d := openTestDevice(b)
	n := benchN(d)
	s := newStream(b, d)
	src, dst := alloc(b, d, 4*n), alloc(b, d, 4*n)
	dst.CopyFrom(s, src, 4*n)
	sync1(b, s)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := dst.CopyFrom(s, src, 4*n); err != nil {
			b.Fatal(err)
		}
	}
	sync1(b, s)
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(2*4*n)*float64(b.N)/sec/1e9, "GB/s")
}

// BenchmarkSaxpy is y = a*x + y over n float32: GB/s counts the two reads
// and the write of every element.
func BenchmarkSaxpy(b *testing.B) {
	d := openTestDevice(b)
	n := benchN(d)
	plan := mustLower(b, suitekernels.Saxpy())
	mod := compileFor(b, d, plan)
	s := newStream(b, d)
	x, y := alloc(b, d, 4*n), alloc(b, d, 4*n)
	args := &backend.Args{Scalars: []uint64{uint64(math.Float32bits(0.5)), 0, 0},
		Arrays: []backend.ArrayArg{{}, {Buf: x, Shape: [4]int{n, 1, 1, 1}}, {Buf: y, Shape: [4]int{n, 1, 1, 1}}}}
	launchAll(b, mod, s, len(plan.Tasks), args)
	sync1(b, s)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		launchAll(b, mod, s, len(plan.Tasks), args)
	}
	sync1(b, s)
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(3*4*n)*float64(b.N)/sec/1e9, "GB/s")
}

// BenchmarkLaunch is the host cost of launching saxpy over 1024 elements
// through the backend (Begin, Run, End), with a synchronization every 256
// launches; BenchmarkLaunchRaw submits a pre-recorded command buffer of
// the same dispatch with vkQueueSubmit, ordered by the same kind of
// timeline semaphore, and nothing else.
func BenchmarkLaunch(b *testing.B) {
	d := openTestDevice(b)
	const n = 1024
	plan := mustLower(b, suitekernels.Saxpy())
	mod := compileFor(b, d, plan)
	s := newStream(b, d)
	x, y := alloc(b, d, 4*n), alloc(b, d, 4*n)
	args := &backend.Args{Scalars: []uint64{uint64(math.Float32bits(0.5)), 0, 0},
		Arrays: []backend.ArrayArg{{}, {Buf: x, Shape: [4]int{n, 1, 1, 1}}, {Buf: y, Shape: [4]int{n, 1, 1, 1}}}}
	b.ResetTimer()
	for i := range b.N {
		launchAll(b, mod, s, 1, args)
		if i%256 == 255 {
			sync1(b, s)
		}
	}
	sync1(b, s)
}

func BenchmarkLaunchRaw(b *testing.B) {
	d := openTestDevice(b)
	const n = 1024
	plan := mustLower(b, suitekernels.Saxpy())
	m := compileFor(b, d, plan).(*module)
	x, y := alloc(b, d, 4*n), alloc(b, d, 4*n)
	args := &backend.Args{Scalars: []uint64{uint64(math.Float32bits(0.5)), 0, 0},
		Arrays: []backend.ArrayArg{{}, {Buf: x, Shape: [4]int{n, 1, 1, 1}}, {Buf: y, Shape: [4]int{n, 1, 1, 1}}}}
	s := newStream(b, d)
	b.ResetTimer()
	per, err := m.RawLaunchCost(args, s, b.N, 256)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(per.Nanoseconds()), "ns/launch")
}

// BenchmarkStreams runs K copies of a latency-bound kernel (one
// invocation spinning through a chain of dependent steps) on K streams at
// once and reports the speed-up over running them on one stream.
func BenchmarkStreams(b *testing.B) {
	d := openTestDevice(b)
	plan := mustLower(b, suitekernels.SlowWrite())
	mod := compileFor(b, d, plan)
	iters := uint64(1 << 16)
	if d.phys.Type == vk.PhysicalDeviceTypeCPU {
		iters = 1 << 12
	}
	for _, k := range []int{1, 2, 4, 8, 16} {
		if k > 1 && k > len(d.queues) {
			continue
		}
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			streams := make([]backend.Stream, k)
			args := make([]*backend.Args, k)
			for i := range k {
				streams[i] = newStream(b, d)
				x, st := alloc(b, d, 4), alloc(b, d, 8)
				args[i] = &backend.Args{Scalars: []uint64{0, uint64(math.Float32bits(1)), 0, iters},
					Arrays: []backend.ArrayArg{{Buf: x, Shape: [4]int{1, 1, 1, 1}}, {}, {Buf: st, Shape: [4]int{1, 1, 1, 1}}, {}}}
			}
			run := func(parallel bool) time.Duration {
				start := time.Now()
				var wg sync.WaitGroup
				for i := range k {
					s := streams[0]
					if parallel {
						s = streams[i]
					}
					launchAll(b, mod, s, len(plan.Tasks), args[i])
				}
				for i := range k {
					wg.Go(func() { sync1(b, streams[i]) })
				}
				wg.Wait()
				return time.Since(start)
			}
			run(true)
			var serial, par time.Duration
			for range b.N {
				serial += run(false)
				par += run(true)
			}
			b.ReportMetric(float64(serial)/float64(par), "speedup")
			b.ReportMetric(float64(par.Microseconds())/float64(b.N), "us/K-kernels")
		})
	}
}
