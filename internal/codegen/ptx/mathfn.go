package ptx

import (
	"strings"

	"github.com/quadrants-go/qd/internal/codegen/devmath"
	"github.com/quadrants-go/qd/internal/ir"
)

// mathFunc supplies the PTX subroutine of a transcendental intrinsic: its
// name and the full text of a ".func (.reg .fNN %ret) NAME(.reg .fNN %a[, .reg .fNN %b])"
// definition with no other dependencies: devmath's, unless a test
// substitutes a stub (Options.mathFunc).
func (m *modWriter) mathFunc(fn ir.Intrinsic, t ir.Type) (name, def string, err error) {
	if m.opts.mathFunc != nil {
		return m.opts.mathFunc(fn, t)
	}
	return devmath.Func(fn, t)
}

// call writes a math intrinsic. The ones PTX computes exactly are inline;
// the transcendental ones call devmath subroutines, which never use an
// .approx instruction. Under fast math some float32 ones are the hardware's
// approximations instead (fastCall).
func (f *fnWriter) call(e *ir.Call) string {
	if e.Fn.Arity() == 0 || len(e.Args) != e.Fn.Arity() {
		f.fail("math function %v with %d arguments", e.Fn, len(e.Args))
	}
	t := e.Args[0].Type()
	if !t.IsFloat() {
		f.fail("math function %v on %v: it takes float32 or float64", e.Fn, t)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		if a.Type() != t {
			f.fail("math function %v on %v and %v", e.Fn, t, a.Type())
		}
		args[i] = f.expr(a)
	}
	x, ty := args[0], opType(t)
	if r := f.fastCall(e.Fn, t, x); r != "" {
		return r
	}
	r := f.reg(t)
	switch e.Fn {
	case ir.Sqrt:
		f.emit("sqrt.rn.%s %s, %s", ty, r, x) // IEEE, correctly rounded
	case ir.Abs:
		f.emit("abs.%s %s, %s", ty, r, x) // clears the sign bit
	case ir.Floor:
		f.emit("cvt.rmi.%s.%s %s, %s", ty, ty, r, x)
	case ir.Ceil:
		f.emit("cvt.rpi.%s.%s %s, %s", ty, ty, r, x)
	case ir.Trunc:
		f.emit("cvt.rzi.%s.%s %s, %s", ty, ty, r, x)
	case ir.Round:
		f.round(t, r, x)
	default:
		name, def, err := f.m.mathFunc(e.Fn, t)
		if err != nil {
			f.fail("%v", err)
		}
		if strings.Contains(def, ".approx") {
			f.fail("math function %s uses an .approx instruction", name)
		}
		if old, ok := f.m.funcs[name]; ok && old != def {
			f.fail("two different definitions of math function %s", name)
		}
		f.m.funcs[name] = def
		// call.uni tells ptxas all threads call together: true only in
		// serial tasks (one thread); parallel bodies may diverge.
		uni := ""
		if f.serial {
			uni = ".uni"
		}
		f.emit("call%s (%s), %s, (%s)", uni, r, name, strings.Join(args, ", "))
	}
	return r
}

// round is math.Round, half away from zero. t = trunc(x) is exact and so is
// x - t (|x - t| < 1 and shares x's exponent range), so |x - t| >= 0.5
// decides exactly, with no x+0.5 double rounding (0.49999997 stays 0). The
// step is copysign(1, x), which keeps -0.4 → -0. NaN and ±Inf come out as
// trunc gives them (Inf - Inf is NaN, whose compare is false).
func (f *fnWriter) round(t ir.Type, r, x string) {
	ty, bt := opType(t), bitType(t)
	half, sign, one := uint64(0x3FE0000000000000), uint64(1)<<63, uint64(0x3FF0000000000000)
	if t == ir.F32 {
		half, sign, one = f32Bits(0.5), 1<<31, f32Bits(1)
	}
	tr, d, s, u := f.reg(t), f.reg(t), f.reg(t), f.reg(t)
	up := f.reg(ir.Bool)
	f.emit("cvt.rzi.%s.%s %s, %s", ty, ty, tr, x)
	f.emit("sub.rn.%s %s, %s, %s", ty, d, x, tr)
	f.emit("abs.%s %s, %s", ty, d, d)
	f.emit("setp.ge.%s %s, %s, %s", ty, up, d, literal(t, half))
	f.emit("and.%s %s, %s, %s", bt, s, x, literal(uintOfSize(t), sign))
	f.emit("or.%s %s, %s, %s", bt, s, s, literal(uintOfSize(t), one))
	f.emit("add.rn.%s %s, %s, %s", ty, u, tr, s)
	f.emit("selp.%s %s, %s, %s, %s", ty, r, u, tr, up)
}

// uintOfSize is the unsigned integer type as wide as t, for bit-pattern
// literals of float masks.
func uintOfSize(t ir.Type) ir.Type {
	if t.Size() == 8 {
		return ir.U64
	}
	return ir.U32
}
