package qd

import (
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Compile-time benchmarks for the bars of docs/semantics.md#performance-bars: a 20-line kernel compiled
// from source in ≤ 5 ms (before the driver's JIT), and a cached compile in
// ≤ 20 µs.

// BenchmarkCompile20Lines is a full, uncached Compile on the CPU backend:
// go/parser, go/types, translation to IR, lowering and hashing, code
// generation into Go closures, and the Module's bookkeeping; then
// Module.Close, which unloads the backend module (its last user) so the next
// iteration misses the Program's module cache too. The process-wide source
// cache is cleared before each iteration (outside the timer). Program
// creation is not measured.
func BenchmarkCompile20Lines(b *testing.B) {
	p, err := Init(WithArch(CPU))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		sourceCache.clear()
		b.StartTimer()
		m, err := Compile(p, suitekernels.Kernel20, WithFilename("step.go"))
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile20LinesPTX is the bar's own path, source → PTX text,
// without a GPU: frontend.Parse, lower.Lower and ptx.Compile for sm_90 (what
// Compile does on CUDA before handing the text to the driver's JIT, which
// is not measured and which the driver caches on disk).
func BenchmarkCompile20LinesPTX(b *testing.B) {
	target, err := ptx.TargetFor(90, 12040)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ks, err := frontend.Parse("step.go", []byte(suitekernels.Kernel20))
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range ks {
			plan, err := lower.Lower(k)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := ptx.Generate(plan, target, ptx.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCompileCached compiles the same source again and again on one
// Program, keeping one Module open so the backend module stays loaded: the
// hit path of both caches (hash the source, look up the plans, look up the
// module by IR hash, make the Kernel and Module objects), then Module.Close
// of the new module (which only drops a reference).
func BenchmarkCompileCached(b *testing.B) {
	p, err := Init(WithArch(CPU))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	keep, err := Compile(p, suitekernels.Kernel20, WithFilename("step.go"))
	if err != nil {
		b.Fatal(err)
	}
	defer keep.Close()
	b.ReportAllocs()
	for b.Loop() {
		m, err := Compile(p, suitekernels.Kernel20, WithFilename("step.go"))
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkCompileLongExpr is an uncached Compile on the CPU backend of a
// kernel whose one statement adds 1k, 10k or 40k terms,
// x[i] = x[i]+1+1+...: the time must grow linearly with the length (it
// grew with its square: 2.7 s for 10k terms, 47 s for 40k).
func BenchmarkCompileLongExpr(b *testing.B) {
	p, err := Init(WithArch(CPU))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, n := range []int{1000, 10_000, 40_000} {
		src := "package k\n\n//qd:kernel\nfunc k(x []float32) {\n\tfor i := range x {\n\t\tx[i] = x[i]" +
			strings.Repeat("+1", n) + "\n\t}\n}\n"
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				sourceCache.clear()
				b.StartTimer()
				m, err := Compile(p, src)
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}
