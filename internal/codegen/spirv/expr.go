package spirv

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Expressions compute their operands left to right, as Go does, each into
// an SSA id. Where SPIR-V leaves a result undefined and Go does not (or qd
// fixes one where Go panics) the code computes Go's, following the rules
// of package gosem: integer division by zero gives all ones and the
// remainder the dividend (gosem.DivZero), MinInt / -1 wraps, shift counts
// at or past the width give 0 or the sign (gosem.ShiftWide, a negative
// signed count counting as huge: gosem.ShiftNegative), float-to-integer
// conversion saturates with NaN giving 0 (gosem.FloatToInt), min and max
// propagate NaN and order the zeros (gosem.MinMaxFloat). Float + - * are
// decorated NoContraction, so no compiler fuses them into an fma.

func (g *gen) zero(t ir.Type) ID { return g.constant(t, 0) }

// constant is the constant of type t with bits (ir.Const's encoding).
func (g *gen) constant(t ir.Type, bits uint64) ID {
	switch {
	case t == ir.Bool:
		return g.m.ConstBool(bits != 0)
	case t.IsFloat():
		return g.m.ConstFloat(t.Bits(), bits)
	case t.IsInteger():
		return g.m.ConstInt(regBits(t), bits) // small ones canonical: Bits is extended
	}
	g.fail("constant of invalid type %v", t)
	return 0
}

func (g *gen) expr(e ir.Expr) ID {
	f := g.f
	switch e := e.(type) {
	case *ir.VarRef:
		return f.Op(OpLoad, g.typ(e.Var.Type), g.local(e.Var, false))
	case *ir.Const:
		return g.constant(e.T, e.Bits)
	case *ir.Load:
		t := e.Type()
		ptr, ok := g.element(e.Array, e.Index, e.Leaf)
		if ok == 0 {
			return g.loadAt(ptr, t)
		}
		// A load out of range gives zero: through a local, written only
		// when the indices are in range.
		r := f.Var(g.typ(t))
		f.Void(OpStore, r, g.zero(t))
		g.ifThen(ok, func() { f.Void(OpStore, r, g.loadAt(ptr, t)) })
		return f.Op(OpLoad, g.typ(t), r)
	case *ir.Bitcast:
		from := e.X.Type()
		if e.To.Size() != from.Size() || e.To.IsSmall() || !e.To.IsNumeric() || !from.IsNumeric() {
			g.fail("bit cast of %v to %v", from, e.To)
		}
		x := g.expr(e.X)
		if g.typ(e.To) == g.typ(from) {
			return x // integers of one width share a type
		}
		return f.Op(OpBitcast, g.typ(e.To), x)
	case *ir.Binary:
		return g.binary(e)
	case *ir.ParamRef:
		if e.Param.IsArray() {
			g.fail("array %s used as a scalar", e.Param.Name)
		}
		return g.scalar(e.Param)
	case *ir.Call:
		return g.call(e)
	case *ir.Convert:
		return g.convert(e.To, e.X.Type(), g.expr(e.X))
	case *ir.Atomic:
		return g.atomic(e, true)
	case *ir.Unary:
		return g.unary(e)
	case *ir.Select:
		t := e.X.Type()
		if e.Cond.Type() != ir.Bool || e.Y.Type() != t {
			g.fail("select of %v and %v on %v", t, e.Y.Type(), e.Cond.Type())
		}
		c, x, y := g.expr(e.Cond), g.expr(e.X), g.expr(e.Y) // all three, in order
		return f.Op(OpSelect, g.typ(t), c, x, y)
	case *ir.Len:
		return g.dim(e.Array, e.Dim)
	case nil:
		g.fail("missing expression")
	}
	g.fail("unknown expression %T", e)
	return 0
}

func (g *gen) unary(e *ir.Unary) ID {
	t := e.X.Type()
	x := g.expr(e.X)
	f := g.f
	switch {
	case e.Op == ir.Not && t == ir.Bool:
		return f.Op(OpLogicalNot, g.typ(t), x)
	case e.Op == ir.Neg && t.IsFloat():
		return g.negateFloat(t, x)
	case e.Op == ir.Neg && t.IsInteger():
		return g.norm(t, f.Op(OpSNegate, g.typ(t), x)) // wraps
	case e.Op == ir.BitNot && t.IsInteger():
		return g.norm(t, f.Op(OpNot, g.typ(t), x))
	}
	g.fail("unary operator %d on %v", e.Op, t)
	return 0
}

// negateFloat flips the sign bit, which is Go's -x for zeros and NaN too
// (OpFNegate's sign of a NaN is not specified).
func (g *gen) negateFloat(t ir.Type, x ID) ID {
	it := g.m.Int(t.Bits())
	bits := g.f.Op(OpBitcast, it, x)
	sign := g.m.ConstInt(t.Bits(), 1<<(t.Bits()-1))
	return g.f.Op(OpBitcast, g.typ(t), g.f.Op(OpBitwiseXor, it, bits, sign))
}

func (g *gen) binary(e *ir.Binary) ID {
	if e.Op.IsLogical() {
		return g.logical(e)
	}
	t := e.X.Type()
	x := g.expr(e.X)
	y := g.expr(e.Y)
	op := e.Op
	f, b := g.f, g.m.Bool()
	switch {
	case op.IsShift():
		if !t.IsInteger() || !e.Y.Type().IsInteger() {
			g.fail("shift of %v by %v", t, e.Y.Type())
		}
		return g.shift(op, t, x, e.Y.Type(), y)
	case op.IsComparison():
		if t == ir.Bool {
			switch op {
			case ir.Eq:
				return f.Op(OpLogicalEqual, b, x, y)
			case ir.Ne:
				return f.Op(OpLogicalNotEqual, b, x, y)
			}
			g.fail("comparison %d on bool", op)
		}
		return f.Op(compareOp(op, t), b, x, y)
	case t == ir.Bool:
		switch op {
		case ir.And:
			return f.Op(OpLogicalAnd, b, x, y)
		case ir.Or:
			return f.Op(OpLogicalOr, b, x, y)
		case ir.Xor:
			return f.Op(OpLogicalNotEqual, b, x, y)
		}
	case t.IsFloat():
		switch op {
		case ir.Div:
			return g.divFloat(t, x, y)
		case ir.Add, ir.Sub, ir.Mul:
			code := map[ir.BinOp]uint32{ir.Add: OpFAdd, ir.Sub: OpFSub, ir.Mul: OpFMul}[op]
			r := f.Op(code, g.typ(t), x, y)
			g.m.Decorate(r, DecorationNoContraction)
			return r
		case ir.Min, ir.Max:
			return g.minMaxFloat(op == ir.Min, t, x, y)
		}
	case t.IsInteger():
		return g.intOp(op, t, x, y)
	}
	g.fail("binary operator %d on %v", op, t)
	return 0
}

// divFloat is x / y correctly rounded, which Vulkan does not promise (it
// allows 2.5 ulp, and NVIDIA's driver is 1 ulp off in float32 and
// float64): a float32 quotient is the float64 one rounded once (exact, as
// 53 ≥ 2·24+2 bits); the float64 one is the device's, corrected by one
// step on its residual (div64).
func (g *gen) divFloat(t ir.Type, x, y ID) ID {
	f := g.f
	if t == ir.F32 {
		f64 := g.m.Float(64)
		q := g.div64(f.Op(OpFConvert, f64, x), f.Op(OpFConvert, f64, y))
		return f.Op(OpFConvert, g.typ(t), q)
	}
	return g.div64(x, y)
}

// div64 corrects the device's float64 quotient q of x / y by its exact
// residual r = x - q·y (an fma): q + r·(1/y), which rounds to the
// correctly rounded quotient from a q within an ulp or two. Where q is
// infinite or NaN, x is zero, or 1/y is zero or infinite, q stands (the
// special cases are the device's IEEE ones).
func (g *gen) div64(x, y ID) ID {
	f, m := g.f, g.m
	f64, b := m.Float(64), m.Bool()
	q := f.Op(OpFDiv, f64, x, y)
	if !g.opts.ExactFMA {
		return q
	}
	r := f.Ext(f64, GLSLFma, g.negateFloat(ir.F64, q), y, x)
	rcp := f.Op(OpFDiv, f64, m.ConstF64(1), y)
	q1 := f.Ext(f64, GLSLFma, r, rcp, q)
	// Corrected where q and 1/y are finite and x is not zero: a q of 0
	// may be a subnormal quotient the device rounded away, and a 1/y that
	// overflows (a subnormal y) would make a NaN of the correction.
	finite := func(v ID) ID {
		return f.Op(OpLogicalNot, b, f.Op(OpLogicalOr, b, f.Op(OpIsInf, b, v), f.Op(OpIsNan, b, v)))
	}
	ok := f.Op(OpLogicalAnd, b, finite(q), g.finiteNonZero(rcp))
	ok = f.Op(OpLogicalAnd, b, ok, f.Op(OpFUnordNotEqual, b, x, m.ConstF64(0)))
	return f.Op(OpSelect, f64, ok, q1, q)
}

// finiteNonZero says whether a float64 is neither zero nor infinite nor
// NaN.
func (g *gen) finiteNonZero(x ID) ID {
	f, m := g.f, g.m
	b := m.Bool()
	bad := f.Op(OpLogicalOr, b, f.Op(OpIsInf, b, x), f.Op(OpIsNan, b, x))
	bad = f.Op(OpLogicalOr, b, bad, f.Op(OpFOrdEqual, b, x, m.ConstF64(0)))
	return f.Op(OpLogicalNot, b, bad)
}

// sqrtFloat is the square root correctly rounded, as divFloat: a
// float32 one through float64, a float64 one corrected once (sqrt64).
func (g *gen) sqrtFloat(t ir.Type, x ID) ID {
	f := g.f
	if t == ir.F32 {
		f64 := g.m.Float(64)
		return f.Op(OpFConvert, g.typ(t), g.sqrt64(f.Op(OpFConvert, f64, x)))
	}
	return g.sqrt64(x)
}

// sqrt64 corrects the device's float64 square root s of x by its exact
// residual r = x - s·s: s + r·(0.5/s), where s is finite and positive.
// (Division has no such scaling yet: a quotient of a subnormal dividend
// may stay 1 ulp off on a device whose division is not exact.)
func (g *gen) sqrt64(x ID) ID {
	f, m := g.f, g.m
	f64, b := m.Float(64), m.Bool()
	if !g.opts.ExactFMA {
		return f.Ext(f64, GLSLSqrt, x)
	}
	// Below 2^-900 the residual would underflow: x·2^256 has the root
	// sqrt(x)·2^128, scaled back exactly (the root of a subnormal is
	// normal).
	tiny := f.Op(OpFOrdLessThan, b, x, m.ConstF64(math.Ldexp(1, -900)))
	xs := f.Op(OpSelect, f64, tiny, f.Op(OpFMul, f64, x, m.ConstF64(math.Ldexp(1, 256))), x)
	s := f.Ext(f64, GLSLSqrt, xs)
	r := f.Ext(f64, GLSLFma, g.negateFloat(ir.F64, s), s, xs)
	h := f.Op(OpFDiv, f64, m.ConstF64(0.5), s)
	s1 := f.Ext(f64, GLSLFma, r, h, s)
	ok := f.Op(OpLogicalAnd, b, g.finiteNonZero(s), f.Op(OpFOrdGreaterThan, b, s, m.ConstF64(0)))
	s1 = f.Op(OpSelect, f64, ok, s1, s)
	return f.Op(OpSelect, f64, tiny, f.Op(OpFMul, f64, s1, m.ConstF64(math.Ldexp(1, -128))), s1)
}

// compareOp is the SPIR-V comparison of op on t. Go's == < <= > >= are
// false on NaN and != is true: ordered compares, and an unordered !=.
func compareOp(op ir.BinOp, t ir.Type) uint32 {
	if t.IsFloat() {
		return map[ir.BinOp]uint32{ir.Eq: OpFOrdEqual, ir.Ne: OpFUnordNotEqual, ir.Lt: OpFOrdLessThan,
			ir.Le: OpFOrdLessThanEqual, ir.Gt: OpFOrdGreaterThan, ir.Ge: OpFOrdGreaterThanEqual}[op]
	}
	if t.IsSigned() {
		return map[ir.BinOp]uint32{ir.Eq: OpIEqual, ir.Ne: OpINotEqual, ir.Lt: OpSLessThan,
			ir.Le: OpSLessThanEqual, ir.Gt: OpSGreaterThan, ir.Ge: OpSGreaterThanEqual}[op]
	}
	return map[ir.BinOp]uint32{ir.Eq: OpIEqual, ir.Ne: OpINotEqual, ir.Lt: OpULessThan,
		ir.Le: OpULessThanEqual, ir.Gt: OpUGreaterThan, ir.Ge: OpUGreaterThanEqual}[op]
}

// intOp writes Go's integer arithmetic. + - * wrap in SPIR-V as in Go.
func (g *gen) intOp(op ir.BinOp, t ir.Type, x, y ID) ID {
	f, ty, b := g.f, g.typ(t), g.m.Bool()
	zero, ones := g.constant(t, 0), g.constant(t, math.MaxUint64)
	if t.IsUnsigned() && t.IsSmall() {
		ones = g.constant(t, 1<<t.Bits()-1) // canonical: zero-extended
	}
	switch op {
	case ir.Add:
		return g.norm(t, f.Op(OpIAdd, ty, x, y))
	case ir.Sub:
		return g.norm(t, f.Op(OpISub, ty, x, y))
	case ir.Mul:
		return g.norm(t, f.Op(OpIMul, ty, x, y))
	case ir.Div, ir.Rem:
		// gosem.DivZero: x / 0 is all ones, x % 0 is x. For signed
		// types, y == -1 is x negated (wrapping MinInt) and a remainder
		// of 0, which SDiv and SRem leave undefined for MinInt. The
		// divisor is replaced by 1 where it is special, so that no
		// undefined division is executed at all.
		isZero := f.Op(OpIEqual, b, y, zero)
		special := isZero
		var isMinus1 ID
		if t.IsSigned() {
			isMinus1 = f.Op(OpIEqual, b, y, ones)
			special = f.Op(OpLogicalOr, b, isZero, isMinus1)
		}
		safe := f.Op(OpSelect, ty, special, g.constant(t, 1), y)
		var q ID
		switch {
		case op == ir.Div && t.IsSigned():
			q = f.Op(OpSDiv, ty, x, safe)
			q = f.Op(OpSelect, ty, isMinus1, g.norm(t, f.Op(OpSNegate, ty, x)), q)
			return f.Op(OpSelect, ty, isZero, ones, q)
		case op == ir.Div:
			return f.Op(OpSelect, ty, isZero, ones, f.Op(OpUDiv, ty, x, safe))
		case t.IsSigned():
			// x - (x/y)·y has the dividend's sign, as Go's %. OpSRem
			// should too, but NVIDIA's driver (580) gives a result of
			// the divisor's sign for a negative dividend.
			q = f.Op(OpISub, ty, x, f.Op(OpIMul, ty, f.Op(OpSDiv, ty, x, safe), safe))
			q = f.Op(OpSelect, ty, isMinus1, zero, q)
			return f.Op(OpSelect, ty, isZero, x, q)
		}
		return f.Op(OpSelect, ty, isZero, x, f.Op(OpUMod, ty, x, safe))
	case ir.And:
		return f.Op(OpBitwiseAnd, ty, x, y)
	case ir.Or:
		return f.Op(OpBitwiseOr, ty, x, y)
	case ir.Xor:
		return f.Op(OpBitwiseXor, ty, x, y)
	case ir.AndNot:
		return f.Op(OpBitwiseAnd, ty, x, f.Op(OpNot, ty, y))
	case ir.Min, ir.Max:
		lt := f.Op(compareOp(ir.Lt, t), b, x, y)
		if op == ir.Min {
			return f.Op(OpSelect, ty, lt, x, y)
		}
		return f.Op(OpSelect, ty, lt, y, x)
	}
	g.fail("operator %d on %v", op, t)
	return 0
}

// shift writes Go's shifts: a count of at least the width (a negative
// signed one counts as huge) gives 0, or the sign for >> of a negative
// signed value. SPIR-V leaves such counts undefined, so the count is
// clamped first.
func (g *gen) shift(op ir.BinOp, t ir.Type, x ID, ct ir.Type, y ID) ID {
	f, m, b := g.f, g.m, g.m.Bool()
	ty := g.typ(t)
	width := uint64(t.Bits()) // a small type's own width: its values are 32-bit
	// The count as u64: a signed one sign-extends, so a negative count
	// is huge.
	count := y
	if ct.Bits() < 64 {
		conv := uint32(OpUConvert)
		if ct.IsSigned() {
			conv = OpSConvert
		}
		count = f.Op(conv, m.Int(64), y)
	}
	wide := f.Op(OpUGreaterThanEqual, b, count, m.ConstInt(64, width))
	// A count below the width, in x's type (SPIR-V takes any integer
	// type for the count, but the same width is simplest for drivers).
	small := f.Op(OpSelect, m.Int(64), wide, m.ConstInt(64, width-1), count)
	if width != 64 {
		small = f.Op(OpUConvert, ty, small)
	}
	switch {
	case op == ir.Shl:
		return f.Op(OpSelect, ty, wide, g.constant(t, 0), g.norm(t, f.Op(OpShiftLeftLogical, ty, x, small)))
	case t.IsSigned():
		// x >> (width-1) is already the sign fill for a wide count.
		return f.Op(OpShiftRightArithmetic, ty, x, small)
	}
	return f.Op(OpSelect, ty, wide, g.constant(t, 0), f.Op(OpShiftRightLogical, ty, x, small))
}

// minMaxFloat is Go's min or max of floats: NaN if either is NaN; of equal
// operands (±0 among them) min takes the OR of the bits (-0 wins) and max
// the AND (+0 wins); else the smaller or larger.
func (g *gen) minMaxFloat(isMin bool, t ir.Type, x, y ID) ID {
	f, b, ty := g.f, g.m.Bool(), g.typ(t)
	it := g.m.Int(t.Bits())
	nan := f.Op(OpLogicalOr, b, f.Op(OpIsNan, b, x), f.Op(OpIsNan, b, y))
	bx, by := f.Op(OpBitcast, it, x), f.Op(OpBitcast, it, y)
	var eq, pick ID
	if isMin {
		eq = f.Op(OpBitcast, ty, f.Op(OpBitwiseOr, it, bx, by))
		pick = f.Op(OpSelect, ty, f.Op(OpFOrdLessThan, b, x, y), x, y)
	} else {
		eq = f.Op(OpBitcast, ty, f.Op(OpBitwiseAnd, it, bx, by))
		pick = f.Op(OpSelect, ty, f.Op(OpFOrdGreaterThan, b, x, y), x, y)
	}
	sum := f.Op(OpFAdd, ty, x, y) // a NaN operand's NaN
	r := f.Op(OpSelect, ty, f.Op(OpFOrdEqual, b, x, y), eq, pick)
	return f.Op(OpSelect, ty, nan, sum, r)
}

// logical writes && and || so that Y, which may hold an atomic, runs only
// when Go would run it.
func (g *gen) logical(e *ir.Binary) ID {
	if e.X.Type() != ir.Bool || e.Y.Type() != ir.Bool {
		g.fail("logical operator on %v and %v", e.X.Type(), e.Y.Type())
	}
	f, b := g.f, g.m.Bool()
	r := f.Var(b)
	x := g.expr(e.X)
	f.Void(OpStore, r, x)
	run := x
	if e.Op == ir.LOr {
		run = f.Op(OpLogicalNot, b, x)
	}
	g.ifThen(run, func() { f.Void(OpStore, r, g.expr(e.Y)) })
	return f.Op(OpLoad, b, r)
}

// convert writes Go's conversion of x (of type from) to type to.
func (g *gen) convert(to, from ir.Type, x ID) ID {
	f := g.f
	ty := g.typ(to)
	switch {
	case to == from:
		return x
	case !to.IsNumeric() || !from.IsNumeric():
		g.fail("cannot convert %v to %v: conversions are between numeric types", from, to)
	case to.IsInteger() && from.IsInteger():
		// Widths of the values (32 for the small types), then the
		// small target's own bits.
		tb, fb := regBits(to), regBits(from)
		switch {
		case tb == fb:
		case tb < fb:
			x = f.Op(OpUConvert, ty, x) // the low bits
		case from.IsSigned():
			x = f.Op(OpSConvert, ty, x)
		default:
			x = f.Op(OpUConvert, ty, x)
		}
		if to.IsSmall() && (to.Bits() < from.Bits() || to.IsSigned() != from.IsSigned()) {
			x = g.norm(to, x)
		}
		return x
	case to.IsFloat() && from.IsFloat():
		return f.Op(OpFConvert, ty, x) // f64 → f32 rounds to nearest, f32 → f64 is exact
	case to.IsFloat():
		if from.IsSigned() {
			return f.Op(OpConvertSToF, ty, x)
		}
		return f.Op(OpConvertUToF, ty, x)
	case to.IsSmall():
		// Through int32, as Go converts (gosem.FloatToInt), then the low
		// bits.
		return g.norm(to, g.floatToInt(ir.I32, from, x))
	}
	return g.floatToInt(to, from, x)
}

// floatToInt truncates x toward zero; out of range saturates and NaN
// gives 0 (gosem.FloatToInt), where SPIR-V leaves both undefined.
func (g *gen) floatToInt(to, from ir.Type, x ID) ID {
	f, b := g.f, g.m.Bool()
	ty, ft := g.typ(to), g.typ(from)
	bits := to.Bits()
	fc := func(v float64) ID {
		if from == ir.F32 {
			return g.m.ConstFloat(32, uint64(math.Float32bits(float32(v))))
		}
		return g.m.ConstF64(v)
	}
	// Clamp into the convertible range first, so the conversion itself is
	// always defined; then fix the ends and NaN.
	if to.IsSigned() {
		hi := math.Ldexp(1, bits-1) // 2^(n-1): too big
		lo := -hi                   // converts exactly
		tooBig := f.Op(OpFOrdGreaterThanEqual, b, x, fc(hi))
		tooSmall := f.Op(OpFOrdLessThanEqual, b, x, fc(lo))
		nan := f.Op(OpIsNan, b, x)
		safe := f.Op(OpSelect, ft, f.Op(OpLogicalOr, b, f.Op(OpLogicalOr, b, tooBig, tooSmall), nan), fc(0), x)
		r := f.Op(OpConvertFToS, ty, safe)
		maxV, minV := uint64(1)<<(bits-1)-1, uint64(1)<<(bits-1)
		r = f.Op(OpSelect, ty, tooBig, g.m.ConstInt(bits, maxV), r)
		return f.Op(OpSelect, ty, tooSmall, g.m.ConstInt(bits, minV), r)
	}
	hi := math.Ldexp(1, bits)
	tooBig := f.Op(OpFOrdGreaterThanEqual, b, x, fc(hi))
	inRange := f.Op(OpFOrdGreaterThan, b, x, fc(-1)) // false for NaN
	ok := f.Op(OpLogicalAnd, b, inRange, f.Op(OpLogicalNot, b, tooBig))
	safe := f.Op(OpSelect, ft, ok, x, fc(0))
	r := f.Op(OpConvertFToU, ty, safe)
	return f.Op(OpSelect, ty, tooBig, g.m.ConstInt(bits, math.MaxUint64), r)
}

// index64 is an index expression as an int64 value.
func (g *gen) index64(e ir.Expr) ID {
	t := e.Type()
	if !t.IsInteger() {
		g.fail("index of type %v", t)
	}
	return g.convert(ir.I64, t, g.expr(e)) // u32 zero-extends, i32 sign-extends
}
