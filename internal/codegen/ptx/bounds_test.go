package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// With Debug every access checks its indices and records the first
// violation after the temporaries; each access is one site.
func TestBoundsChecks(t *testing.T) {
	b := ir.NewBuilder("checked")
	x, m := b.Array("x", ir.F32, 1), b.Array("m", ir.I64, 2)
	s := b.Array("s", ir.F64, 1)
	keep := b.Decl("keep", ir.I64c(3)) // a temporary: the record follows it
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(x, ir.Op(ir.Add, ir.Ld(x, ir.Ref(i)), ir.F32c(1)), ir.Ref(i))
		b.Store(m, ir.Ref(keep), ir.Ref(i), ir.I64c(2))
		b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.F64c(1), ir.I64c(0))) // a reduction: checked after the loop
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	text, layout, err := Generate(plan, testTarget, stubbed(Options{Debug: true}))
	if err != nil {
		t.Fatal(err)
	}
	assemble(t, "checked", text)
	if !layout.Bounds || len(layout.Sites) != 4 {
		t.Fatalf("Bounds %v, %d sites: %+v", layout.Bounds, len(layout.Sites), layout.Sites)
	}
	for i, want := range []string{"x", "x", "m", "s"} {
		if layout.Sites[i].Array != want {
			t.Errorf("site %d is %s, want %s", i, layout.Sites[i].Array, want)
		}
	}
	asm(t, text, `setp\.lt\.u64`, `atom\.global\.cas\.b64 %rd\d+, \[%rd\d+\], 0, 1;`, `atom\.global\.cas\.b64 %rd\d+, \[%rd\d+\], 0, 4;`,
		`\.param \.s64 a0_d0`, `!ld\.global\.v4`)
	// Without Debug, nothing of it.
	plain, _, err := Generate(plan, testTarget, stubbed(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	asm(t, plain, `!atom\.global\.cas\.b64`, `!a1_d0`)
}
