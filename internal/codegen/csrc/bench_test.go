package csrc

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// BenchmarkGenerate times writing the source of a small kernel (docs/semantics.md#performance-bars:
// a 20-line kernel to source in ≤ 5 ms) and of the corpus's float64
// kernel, which calls every math function.
func BenchmarkGenerate(b *testing.B) {
	for _, k := range []struct {
		name string
		plan *lower.Plan
	}{{"saxpy", mustLower(b, saxpy())}, {"floats_f64", mustLower(b, floatOps(ir.F64))}} {
		tg := mustTarget(b, "gfx90a")
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := Generate(k.plan, tg, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustLower(t testing.TB, k *ir.Kernel) *lower.Plan {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
