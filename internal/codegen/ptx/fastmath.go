package ptx

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Fast math (Options.FastMath, qd.WithFastMath) and reciprocals.
//
// By default every float operation is correctly rounded (.rn) and never
// contracted: results are Go's, bit for bit. With fast math:
//
//   - add, sub and mul carry no rounding modifier, which lets ptxas fuse a
//     multiply and an add into one fma (one rounding instead of two: the
//     result differs from Go's in the last bits, usually for the better);
//   - float32 operations flush denormal inputs and results to zero (.ftz);
//   - float32 x/y is div.full (at most 2 ulp), 1/y rcp.approx (1 ulp),
//     sqrt sqrt.approx and 1/sqrt(x) rsqrt.approx (PTX ISA: relative error
//     below 2^-22 and 2^-22.9);
//   - float32 exp2 and log2 are ex2.approx and lg2.approx (relative error
//     2^-22 and 2^-22.6 over the range), exp and log scale them by log2(e)
//     and ln 2 (the product's rounding grows the error with |x| for exp),
//     and sin and cos are sin.approx and cos.approx (absolute error 2^-20.5
//     on [-π, π], growing outside it).
//
// float64 keeps its exact operations except for contraction. Without fast
// math 1/y is rcp.rn, which is correctly rounded like div.rn of 1 by y, so
// the result is the same bit for bit and the division is cheaper.

// isOne reports whether e is the float constant 1.
func isOne(e ir.Expr) bool {
	c, ok := e.(*ir.Const)
	if !ok {
		return false
	}
	switch c.T {
	case ir.F32:
		return uint32(c.Bits) == math.Float32bits(1)
	case ir.F64:
		return c.Bits == math.Float64bits(1)
	}
	return false
}

// rnd is the rounding modifier of float add, sub and mul: ".rn" (no
// contraction) by default, none under fast math, with ".ftz" for float32.
func (f *fnWriter) rnd(t ir.Type) string {
	if !f.m.opts.FastMath {
		return ".rn"
	}
	if t == ir.F32 {
		return ".ftz"
	}
	return ""
}

// reciprocal writes 1/y for float type t. 1/sqrt(x) under fast math is
// rsqrt.approx of x.
func (f *fnWriter) reciprocal(t ir.Type, y ir.Expr) string {
	ty := opType(t)
	r := f.reg(t)
	if f.m.opts.FastMath && t == ir.F32 {
		if c, ok := y.(*ir.Call); ok && c.Fn == ir.Sqrt && len(c.Args) == 1 && c.Args[0].Type() == t {
			f.emit("rsqrt.approx.ftz.f32 %s, %s", r, f.expr(c.Args[0]))
			return r
		}
		f.emit("rcp.approx.ftz.f32 %s, %s", r, f.expr(y))
		return r
	}
	f.emit("rcp.rn.%s %s, %s", ty, r, f.expr(y))
	return r
}

// fastCall writes a float32 math intrinsic with the hardware's approximate
// instructions, or returns "" when fast math does not cover it.
func (f *fnWriter) fastCall(fn ir.Intrinsic, t ir.Type, x string) string {
	if !f.m.opts.FastMath || t != ir.F32 {
		return ""
	}
	r := f.reg(t)
	switch fn {
	case ir.Sqrt:
		f.emit("sqrt.approx.ftz.f32 %s, %s", r, x)
	case ir.Exp2:
		f.emit("ex2.approx.ftz.f32 %s, %s", r, x)
	case ir.Log2:
		f.emit("lg2.approx.ftz.f32 %s, %s", r, x)
	case ir.Exp: // 2^(x·log2 e)
		s := f.reg(t)
		f.emit("mul.ftz.f32 %s, %s, %s", s, x, literal(t, uint64(math.Float32bits(float32(math.Log2E)))))
		f.emit("ex2.approx.ftz.f32 %s, %s", r, s)
	case ir.Log: // log2(x)·ln 2
		s := f.reg(t)
		f.emit("lg2.approx.ftz.f32 %s, %s", s, x)
		f.emit("mul.ftz.f32 %s, %s, %s", r, s, literal(t, uint64(math.Float32bits(float32(math.Ln2)))))
	case ir.Sin:
		f.emit("sin.approx.ftz.f32 %s, %s", r, x)
	case ir.Cos:
		f.emit("cos.approx.ftz.f32 %s, %s", r, x)
	default:
		return ""
	}
	return r
}
