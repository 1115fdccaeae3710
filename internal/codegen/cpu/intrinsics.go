package cpu

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Intrinsics give exactly Go's math results. F32 arguments are widened to
// float64, the math function applied and the result rounded to float32, as
// Go code calling math on a float32 does. For Sqrt this double rounding is
// provably the correctly rounded float32 result (53 >= 2*24+2); Floor, Ceil,
// Trunc, Round, Mod and Abs are exact in float64, so rounding back is exact.
// Abs is done on the bits instead so that a NaN keeps its payload.

var unaryMath = map[ir.Intrinsic]func(float64) float64{
	ir.Exp: math.Exp, ir.Exp2: math.Exp2, ir.Log: math.Log, ir.Log2: math.Log2, ir.Log10: math.Log10,
	ir.Sin: math.Sin, ir.Cos: math.Cos, ir.Tan: math.Tan, ir.Asin: math.Asin, ir.Acos: math.Acos,
	ir.Atan: math.Atan, ir.Sinh: math.Sinh, ir.Cosh: math.Cosh, ir.Tanh: math.Tanh,
	ir.Round: math.Round,
}

var binaryMath = map[ir.Intrinsic]func(float64, float64) float64{
	ir.Atan2: math.Atan2, ir.Pow: math.Pow, ir.Mod: math.Mod, ir.Hypot: math.Hypot,
}

func (c *compiler) call(e *ir.Call) value {
	if e.Fn.Arity() == 0 || len(e.Args) != e.Fn.Arity() {
		c.failf("intrinsic %v takes %d arguments, got %d", e.Fn, e.Fn.Arity(), len(e.Args))
	}
	args := make([]value, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a)
		if args[i].typ() != args[0].typ() {
			c.failf("arguments of %v have types %v and %v", e.Fn, args[0].typ(), args[i].typ())
		}
	}
	switch x := args[0].(type) {
	case *ev[float32]:
		if len(args) == 2 {
			return callMath2(c, e.Fn, x, as[float32](c, args[1]))
		}
		return callMath1(c, e.Fn, x)
	case *ev[float64]:
		if len(args) == 2 {
			return callMath2(c, e.Fn, x, as[float64](c, args[1]))
		}
		return callMath1(c, e.Fn, x)
	}
	c.failf("intrinsic %v applies to f32 or f64, not %v", e.Fn, args[0].typ())
	return nil
}

// callMath1 compiles a one-argument intrinsic. The ones Go compiles to an
// instruction get their own loops so the call is inlined; the rest go
// through a function value, whose call is small next to the function.
func callMath1[T float](c *compiler, fn ir.Intrinsic, x *ev[T]) value {
	var v func(d, a []T)
	switch fn {
	case ir.Sqrt:
		v = func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Sqrt(float64(a[i])))
			}
		}
	case ir.Floor:
		v = func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Floor(float64(a[i])))
			}
		}
	case ir.Ceil:
		v = func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Ceil(float64(a[i])))
			}
		}
	case ir.Trunc:
		v = func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Trunc(float64(a[i])))
			}
		}
	case ir.Abs:
		v = absVec[T]()
	default:
		g, ok := unaryMath[fn]
		if !ok {
			c.failf("unknown intrinsic %v", fn)
		}
		v = func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(g(float64(a[i])))
			}
		}
	}
	return unaryOp(c, x, v, scalarMath[T](fn))
}

// scalarMath is the uniform form of a one-argument intrinsic.
func scalarMath[T float](fn ir.Intrinsic) func(T) T {
	var g func(float64) float64
	switch fn {
	case ir.Sqrt:
		g = math.Sqrt
	case ir.Floor:
		g = math.Floor
	case ir.Ceil:
		g = math.Ceil
	case ir.Trunc:
		g = math.Trunc
	case ir.Abs:
		var z T
		if _, ok := any(z).(float32); ok {
			return func(a T) T { return T(math.Float32frombits(math.Float32bits(float32(a)) &^ (1 << 31))) }
		}
		g = math.Abs
	default:
		g = unaryMath[fn]
	}
	return func(a T) T { return T(g(float64(a))) }
}

func absVec[T float]() func(d, a []T) {
	var z T
	if _, ok := any(z).(float32); ok {
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Float32frombits(math.Float32bits(float32(a[i])) &^ (1 << 31)))
			}
		}
	}
	return func(d, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = T(math.Abs(float64(a[i])))
		}
	}
}

func callMath2[T float](c *compiler, fn ir.Intrinsic, x, y *ev[T]) value {
	g, ok := binaryMath[fn]
	if !ok {
		c.failf("unknown intrinsic %v", fn)
	}
	ss := func(a, b T) T { return T(g(float64(a), float64(b))) }
	return apply(c, kern[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(g(float64(a[i]), float64(b[i])))
			}
		},
		vs: func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(g(float64(a[i]), float64(s)))
			}
		},
		sv: func(d []T, s T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = T(g(float64(s), float64(b[i])))
			}
		},
		ss: ss,
	}, x, y)
}
