package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// fastKernel: y[i] = 1/sqrt(x) + x*a + b/x + exp, log, sin, cos, 1/x, in
// float32 and float64.
func fastKernel(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("fast_" + t.String())
	x, y := b.Array("x", t, 1), b.Array("y", t, 1)
	a := b.Scalar("a", t)
	one := ir.F32c(1)
	if t == ir.F64 {
		one = ir.F64c(1)
	}
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		xi := b.Decl("xi", ir.Ld(x, ir.Ref(i)))
		v := ir.Op(ir.Add, ir.Op(ir.Div, one, ir.Fn(ir.Sqrt, ir.Ref(xi))), ir.Op(ir.Mul, ir.Ref(xi), ir.P(a)))
		v = ir.Op(ir.Add, v, ir.Op(ir.Div, ir.P(a), ir.Ref(xi)))
		for _, fn := range []ir.Intrinsic{ir.Exp, ir.Log, ir.Sin, ir.Cos, ir.Exp2, ir.Log2, ir.Sqrt} {
			v = ir.Op(ir.Add, v, ir.Fn(fn, ir.Ref(xi)))
		}
		v = ir.Op(ir.Add, v, ir.Op(ir.Div, one, ir.Ref(xi)))
		b.Store(y, v, ir.Ref(i))
	})
	return b.Kernel()
}

func compileWith(t *testing.T, k *ir.Kernel, opts Options) string {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := Generate(plan, testTarget, stubbed(opts))
	if err != nil {
		t.Fatal(err)
	}
	assemble(t, k.Name+map[bool]string{true: "_fast"}[opts.FastMath], text)
	return text
}

func TestFastMath(t *testing.T) {
	fast := compileWith(t, fastKernel(ir.F32), Options{FastMath: true})
	asm(t, fast, `rsqrt\.approx\.ftz\.f32`, `div\.full\.ftz\.f32`, `rcp\.approx\.ftz\.f32`, `ex2\.approx\.ftz\.f32`,
		`lg2\.approx\.ftz\.f32`, `sin\.approx\.ftz\.f32`, `cos\.approx\.ftz\.f32`, `sqrt\.approx\.ftz\.f32`,
		`mul\.ftz\.f32`, `add\.ftz\.f32`, `!add\.rn\.f32`, `!mul\.rn\.f32`, `!div\.rn\.f32`)
	// float64 only loses the rounding modifier that blocks contraction.
	fast64 := compileWith(t, fastKernel(ir.F64), Options{FastMath: true})
	asm(t, fast64, `add\.f64`, `mul\.f64`, `div\.rn\.f64`, `rcp\.rn\.f64`, `sqrt\.rn\.f64`, `!\.approx`)

	// The default: exact, with 1/x as rcp.rn (the same bits as div.rn).
	exact := compileWith(t, fastKernel(ir.F32), Options{})
	asm(t, exact, `rcp\.rn\.f32`, `sqrt\.rn\.f32`, `add\.rn\.f32`, `mul\.rn\.f32`, `!\.approx`, `!\.ftz`)
}
