package ptx

import (
	"regexp"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// stencilKernel: out[i+1][j+1] = in[i][j+1] + in[i+2][j+1] + in[i+1][j] +
// in[i+1][j+2] over the interior, with the indices through locals.
func stencilKernel() *ir.Kernel {
	b := ir.NewBuilder("stencil")
	in, out := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	two := ir.I64c(2)
	b.ParallelN([]ir.Expr{ir.Op(ir.Sub, ir.LenOf(out, 0), two), ir.Op(ir.Sub, ir.LenOf(out, 1), two)}, func(v []*ir.Var) {
		i := b.Decl("i", ir.Op(ir.Add, ir.Ref(v[0]), ir.I64c(1)))
		j := b.Decl("j", ir.Op(ir.Add, ir.Ref(v[1]), ir.I64c(1)))
		sum := ir.Op(ir.Add, ir.Ld(in, ir.Ref(v[0]), ir.Ref(j)), ir.Ld(in, ir.Op(ir.Add, ir.Ref(i), ir.I64c(1)), ir.Ref(j)))
		sum = ir.Op(ir.Add, sum, ir.Ld(in, ir.Ref(i), ir.Ref(v[1])))
		sum = ir.Op(ir.Add, sum, ir.Ld(in, ir.Ref(i), ir.Op(ir.Add, ir.Ref(j), ir.I64c(1))))
		b.Store(out, sum, ir.Ref(i), ir.Ref(j))
	})
	return b.Kernel()
}

// In a 2-D loop each array gets one element base per trip, and each
// access is that base plus an immediate (same row) or an offset register
// computed before the loop; with Debug every access keeps its own checked
// address.
func TestAffineAddresses(t *testing.T) {
	m := compileKernel(t, stencilKernel())
	// The body is written twice: in the row-chunked loop and in the flat one.
	if n := count(m.PTX, `ld\.global\.f32`); n != 8 {
		t.Fatalf("%d loads, want 8 (4 per body, 2 bodies):\n%s", n, numbered(m.PTX))
	}
	// in[v0][j] is the base plus one element, an immediate; the others
	// reach other rows: the base plus a register computed before the loop.
	asm(t, m.PTX, `ld\.global\.f32 %f\d+, \[%rd\d+\+4\];`)
	// Between each body's first load and its store: no row arithmetic.
	rest := m.PTX
	for body := 0; body < 2; body++ {
		ld := regexp.MustCompile(`ld\.global\.f32`).FindStringIndex(rest)
		st := regexp.MustCompile(`st\.global\.f32`).FindStringIndex(rest)
		if ld == nil || st == nil || st[0] < ld[0] {
			t.Fatalf("body %d: no load before a store:\n%s", body, numbered(m.PTX))
		}
		if n := count(rest[ld[0]:st[0]], `mad\.lo\.s64`); n != 0 {
			t.Errorf("body %d: %d mad.lo.s64 among the loads, want 0:\n%s", body, n, numbered(m.PTX))
		}
		rest = rest[st[1]:]
	}
	text, _, err := Generate(mustLower(t, stencilKernel()), testTarget, stubbed(Options{Debug: true}))
	if err != nil {
		t.Fatal(err)
	}
	asm(t, text, `!\[%rd\d+\+4\]`)
}
