package qd

import (
	"math/rand/v2"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestCheckAliasesSweep compares the sweep of checkAliases with trying
// every pair, on random spans over a small address range.
func TestCheckAliasesSweep(t *testing.T) {
	kernel := &ir.Kernel{Name: "k"}
	for i, name := range []string{"a", "b", "c", "d"} {
		kernel.Params = append(kernel.Params, &ir.Param{Name: name, Elem: ir.F32, Dims: 1, Index: i})
	}
	k := &kernelCore{name: "k", plan: &lower.Plan{Kernel: kernel}}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20000 {
		k.written = []bool{rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(3) == 0, false}
		spans := make([]span, rng.IntN(6))
		for i := range spans {
			lo := uintptr(rng.IntN(40))
			spans[i] = span{lo: lo, hi: lo + 1 + uintptr(rng.IntN(8)), param: rng.IntN(4), row: [2]int{-1, -1}}
		}
		want := false
		for i := range spans {
			for j := range i {
				x, y := spans[i], spans[j]
				if x.lo < y.hi && y.lo < x.hi && (k.written[x.param] || k.written[y.param]) {
					want = true
				}
			}
		}
		if got := k.checkAliases(append([]span(nil), spans...)) != nil; got != want {
			t.Fatalf("round %d: spans %v written %v: error %v, want %v", round, spans, k.written, got, want)
		}
	}
}
