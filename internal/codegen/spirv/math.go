package spirv

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// call writes a math intrinsic. Abs clears the sign bit; Floor, Ceil and
// Trunc are GLSL.std.450's, exact by Vulkan's precision rules; Round is
// Go's (half away from zero, which GLSL's Round leaves to the device);
// Sqrt is GLSL's, a float32 one through float64 (sqrtFloat). The
// transcendental functions are devmath's (mathfn.go).
func (g *gen) call(e *ir.Call) ID {
	if len(e.Args) != e.Fn.Arity() || len(e.Args) == 0 {
		g.fail("%v takes %d float32 or float64 arguments of one type", e.Fn, e.Fn.Arity())
	}
	t := e.Args[0].Type()
	args := make([]ID, len(e.Args))
	for i, a := range e.Args {
		if !t.IsFloat() || a.Type() != t {
			g.fail("%v takes %d float32 or float64 arguments of one type", e.Fn, e.Fn.Arity())
		}
		args[i] = g.expr(a)
	}
	f, ty := g.f, g.typ(t)
	x := args[0]
	switch e.Fn {
	case ir.Abs:
		return g.abs(t, x)
	case ir.Floor:
		return f.Ext(ty, GLSLFloor, x)
	case ir.Ceil:
		return f.Ext(ty, GLSLCeil, x)
	case ir.Trunc:
		return f.Ext(ty, GLSLTrunc, x)
	case ir.Sqrt:
		return g.sqrtFloat(t, x)
	case ir.Round:
		// t = trunc(x); t + copysign(1, x) when |x - t| ≥ 0.5 (x - t is
		// exact); NaN and infinities stay as trunc leaves them.
		tr := f.Ext(ty, GLSLTrunc, x)
		it := g.m.Int(t.Bits())
		sign := f.Op(OpBitwiseAnd, it, f.Op(OpBitcast, it, x), g.m.ConstInt(t.Bits(), 1<<(t.Bits()-1)))
		one := g.floatConst(t, 1)
		s := f.Op(OpBitcast, ty, f.Op(OpBitwiseOr, it, sign, f.Op(OpBitcast, it, one)))
		diff := f.Op(OpFSub, ty, x, tr)
		g.m.Decorate(diff, DecorationNoContraction)
		far := f.Op(OpFOrdGreaterThanEqual, g.m.Bool(), g.abs(t, diff), g.floatConst(t, 0.5))
		up := f.Op(OpFAdd, ty, tr, s)
		g.m.Decorate(up, DecorationNoContraction)
		return f.Op(OpSelect, ty, far, up, tr)
	}
	return f.Op(OpFunctionCall, ty, append([]uint32{g.mathFunc(e.Fn, t)}, args...)...)
}

// abs clears the sign bit of x, a float of type t.
func (g *gen) abs(t ir.Type, x ID) ID {
	it := g.m.Int(t.Bits())
	mask := g.m.ConstInt(t.Bits(), 1<<(t.Bits()-1)-1)
	return g.f.Op(OpBitcast, g.typ(t), g.f.Op(OpBitwiseAnd, it, g.f.Op(OpBitcast, it, x), mask))
}

// floatConst is the constant v of float type t.
func (g *gen) floatConst(t ir.Type, v float64) ID {
	if t == ir.F32 {
		return g.m.ConstFloat(32, uint64(math.Float32bits(float32(v))))
	}
	return g.m.ConstF64(v)
}
