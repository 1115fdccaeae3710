package benchsuite

import (
	"os"
	"testing"
	"time"

	"github.com/quadrants-go/qd"
)

// BenchmarkCPU runs every CPU construct kernel through qd (kernel/qd) and
// its plain-Go reference (kernel/go), reporting ns per element, for
// benchstat: `go test -run XXX -bench CPU -cpu 1,2 -count 10`. The qd side
// uses GOMAXPROCS cores (-cpu), the reference one goroutine.
func BenchmarkCPU(b *testing.B) {
	benchCPUTable(b, cpuKernelSource, "cpu_kernels.go", cpuCases())
}

// BenchmarkCPUBlocks is BenchmarkCPU for the block kernels
// (cpu_blocks.go): `go test -run XXX -bench CPUBlocks -cpu 1,2 -count 10`.
func BenchmarkCPUBlocks(b *testing.B) {
	benchCPUTable(b, blocksSrc, "blocks.go", cpuBlockCases())
}

func benchCPUTable(b *testing.B, src, file string, cases []cpuCase) {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	mod, err := qd.Compile(p, src, qd.WithFilename(file))
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close()
	st, err := p.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, c := range cases {
		// Set up inside b.Run, so that a -bench filter skips the set-up of
		// the cases it does not run.
		b.Run(benchName(c), func(b *testing.B) { benchCPUCase(b, p, mod, st, c) })
	}
}

// benchName is a case's sub-benchmark name: its kernel, or its id for a
// case of several launches.
func benchName(c cpuCase) string {
	if c.kernel != "" {
		return c.kernel
	}
	return c.id
}

func benchCPUCase(b *testing.B, p *qd.Program, mod *qd.Module, st *qd.Stream, c cpuCase) {
	n, m := c.size(os.Getenv("QD_BENCH_QUICK") != "")
	run, err := c.prepare(p, mod, n, m)
	if err != nil {
		b.Fatal(err)
	}
	defer run.close()
	if err := checkCPURun(st, run); err != nil {
		b.Fatalf("%s: %v", c.name, err)
	}
	// ns/element is wall-clock time; cpu-ns/element the process's CPU
	// time, which on a shared machine does not count what other processes
	// take (on two cores, both cores' time: the cost per element).
	var cpu0 time.Duration
	start := func() { cpu0, _ = cpuTime() }
	perElement := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/element")
		if cpu1, ok := cpuTime(); ok {
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/element")
		}
	}
	b.Run("qd", func(b *testing.B) {
		start()
		for b.Loop() {
			if err := run.launch(st); err != nil {
				b.Fatal(err)
			}
			if err := st.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
		perElement(b)
	})
	b.Run("go", func(b *testing.B) {
		start()
		for b.Loop() {
			run.plain()
		}
		perElement(b)
	})
}
