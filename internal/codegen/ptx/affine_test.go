package ptx

import (
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
	body := mainLoop(t, m.PTX, `st\.global\.f32`)
	if n := count(body, `ld\.global\.f32`); n != 4 {
		t.Fatalf("%d loads before the store, want 4:\n%s", n, numbered(m.PTX))
	}
	// in[v0][j] is the base plus one element, an immediate; the others
	// reach other rows: the base plus a register computed before the loop.
	asm(t, m.PTX, `ld\.global\.f32 %f\d+, \[%rd\d+\+4\];`)
	if n := count(body, `add\.s64 %rd\d+, %rd\d+, %rd\d+;`); n < 4 {
		t.Errorf("%d base-plus-offset adds, want 4 (3 loads, the store)", n)
	}
	// Two bases per trip (in, out), no per-access row arithmetic: the only
	// 64-bit multiply-adds after the loop label are the bases'.
	loop := body[len(mainLoop(t, m.PTX, `\$L1:`)):]
	if n := count(loop, `mad\.lo\.s64`); n != 4 {
		t.Errorf("%d mad.lo.s64 in the loop, want 4 (2 per base):\n%s", n, numbered(m.PTX))
	}
	text, _, err := Generate(mustLower(t, stencilKernel()), testTarget, Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	asm(t, text, `!\[%rd\d+\+4\]`)
}
