package frontend

import (
	"runtime"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// kernel20 is the kernel of the compile benchmarks (suitekernels.Kernel20).
var kernel20 = []byte(suitekernels.Kernel20)

// BenchmarkParse20Lines measures source → IR for a 20-line kernel.
func BenchmarkParse20Lines(b *testing.B) {
	if _, err := Parse("step.go", kernel20); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("step.go", kernel20); err != nil {
			b.Fatal(err)
		}
	}
}

// longExpr is a kernel whose one statement adds n terms: x[i] = x[i]+1+1+....
func longExpr(n int) []byte {
	return []byte("package k\n\n//qd:kernel\nfunc k(x []float32) {\n\tfor i := range x {\n\t\tx[i] = x[i]" +
		strings.Repeat("+1", n) + "\n\t}\n}\n")
}

// TestLongExprLinear checks (BenchmarkCompileLongExpr in package qd times
// it), without a clock, that parsing grows linearly
// with the length of an expression: the bytes allocated for 8× the terms
// must stay within 16× (a quadratic front end allocated about 60× more).
// It also compiles 40k terms (10k with -short), which took 47 s once.
func TestLongExprLinear(t *testing.T) {
	allocated := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Parse("k.go", longExpr(n)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	allocated(100) // load the standard library's declarations first
	small, large := allocated(1000), allocated(8000)
	if large > 16*small {
		t.Errorf("parsing 8000 terms allocated %d bytes, %.0f× the %d of 1000 terms: not linear", large, float64(large)/float64(small), small)
	}
	n := 40_000
	if testing.Short() {
		n = 10_000
	}
	if _, err := Parse("k.go", longExpr(n)); err != nil {
		t.Fatal(err)
	}
}
