package qd_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/benchsuite"
)

// BenchmarkGPUSuite runs the performance suite (docs/semantics.md#performance-bars) on the
// GPU once and prints its table: every figure beside its reference and its
// bar. Each row is also a sub-benchmark reporting the figure and the ratio
// as metrics, for benchstat. It skips without CUDA (fails under
// QD_GPU_RUN=1); `qd bench` prints the same table.
//
//	go test -run XXX -bench GPUSuite -benchtime 1x
func BenchmarkGPUSuite(b *testing.B) { benchGPUSuite(b, nil) }

// BenchmarkGPUGraphs runs the graph rows of the suite alone (their
// bars): 100 small dependent kernels and a 4-group stream-parallel kernel
// replayed 100 times, each graph replay against launches end to end, and
// the host cost of one Graph.LaunchOn beside a raw cuGraphLaunch.
//
//	QD_GPU_RUN=1 go test -run XXX -bench GPUGraphs -benchtime 1x
func BenchmarkGPUGraphs(b *testing.B) { benchGPUSuite(b, regexp.MustCompile("graphs")) }

// benchGPUSuite runs the measurements of the suite that run selects (nil:
// all of them) and reports them as BenchmarkGPUSuite says.
func benchGPUSuite(b *testing.B, run *regexp.Regexp) {
	p, err := qd.Init(qd.WithArch(qd.CUDA))
	if err != nil {
		if os.Getenv("QD_GPU_RUN") == "1" {
			b.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
		}
		b.Skipf("no CUDA: %v", err)
	}
	defer p.Close()
	rows, err := benchsuite.Run(p, benchsuite.Options{Quick: os.Getenv("QD_BENCH_QUICK") == "1", Run: run})
	if err != nil {
		b.Fatal(err)
	}
	var tab strings.Builder
	benchsuite.WriteTable(&tab, rows)
	b.Logf("%s\n%s", p.Device(), tab.String())
	for _, r := range rows {
		b.Run(r.Name, func(b *testing.B) {
			switch r.Status {
			case benchsuite.Skip:
				b.Skip(r.Note)
			case benchsuite.Fail:
				// Reported, not asserted: bars are benchmarks, never timed
				// tests (docs/semantics.md#performance-bars). The table's status column says FAIL.
				b.Logf("MISSES ITS BAR %s: %.4g %s (ratio %.3g): %s", r.Bar, r.Value, r.Unit, r.Ratio, r.Note)
			}
			unit := strings.ReplaceAll(r.Unit, " ", "_")
			b.ReportMetric(r.Value, unit)
			if r.Ratio != 0 {
				b.ReportMetric(r.Ratio, "ratio")
			}
		})
	}
}
