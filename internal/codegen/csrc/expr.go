package csrc

import (
	"fmt"
	"math"
	"strconv"

	"github.com/quadrants-go/qd/internal/codegen/devmath"
	"github.com/quadrants-go/qd/internal/ir"
)

// literal writes a constant exactly: floats as hexadecimal floating
// literals (through their bits when not finite), integers in decimal with
// the suffix of their type, negative ones parenthesised.
func literal(t ir.Type, bits uint64) string {
	switch t {
	case ir.Bool:
		return strconv.FormatBool(bits != 0)
	case ir.F32:
		x := math.Float32frombits(uint32(bits))
		if math.IsInf(float64(x), 0) || x != x {
			return fmt.Sprintf("qd_f32_from(0x%08Xu)", uint32(bits))
		}
		return "(" + strconv.FormatFloat(float64(x), 'x', -1, 32) + "f)"
	case ir.F64:
		x := math.Float64frombits(bits)
		if math.IsInf(x, 0) || x != x {
			return fmt.Sprintf("qd_f64_from(0x%016XULL)", bits)
		}
		return "(" + strconv.FormatFloat(x, 'x', -1, 64) + ")"
	case ir.U32:
		return strconv.FormatUint(uint64(uint32(bits)), 10) + "u"
	case ir.U64:
		return strconv.FormatUint(bits, 10) + "ULL"
	case ir.I32:
		v := int32(bits)
		if v == math.MinInt32 {
			return "(qd_i32)0x80000000u" // -2147483648 is the negation of an unsigned literal in C
		}
		return signed(int64(v), "")
	case ir.I64:
		v := int64(bits)
		if v == math.MinInt64 {
			return "(qd_i64)0x8000000000000000ULL"
		}
		return signed(v, "LL")
	case ir.I8, ir.I16, ir.U8, ir.U16:
		return fmt.Sprintf("((%s)%d)", cType(t), int64(bits)) // canonical bits: the value itself
	}
	return "0"
}

func signed(v int64, suffix string) string {
	if v < 0 {
		return "(" + strconv.FormatInt(v, 10) + suffix + ")"
	}
	return strconv.FormatInt(v, 10) + suffix
}

// expr writes the code of e and returns a C operand holding its value: a
// literal, a parameter, a local or a fresh temporary. Locals are returned
// by name without a copy: no expression assigns a local, so the name cannot
// change meaning before the caller uses it.
func (f *fn) expr(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.VarRef:
		return f.local(e.Var, false)
	case *ir.Const:
		if !e.T.Valid() {
			f.fail("constant of invalid type %v", e.T)
		}
		return literal(e.T, e.Bits)
	case *ir.Load:
		t := e.Type()
		elem, ok := f.checked(e.Array, e.Index, e.Leaf)
		if t == ir.Bool {
			elem += " != 0"
		}
		if ok != "" {
			return f.tmp(t, "%s ? (%s) : %s", ok, elem, literal(t, 0))
		}
		return f.tmp(t, "%s", elem)
	case *ir.Bitcast:
		return f.bitcast(e.To, e.X.Type(), f.expr(e.X))
	case *ir.Binary:
		return f.binary(e)
	case *ir.ParamRef:
		if e.Param.IsArray() {
			f.fail("array %s used as a scalar", e.Param.Name)
		}
		return f.scalar(e.Param)
	case *ir.Call:
		return f.call(e)
	case *ir.Convert:
		x := f.expr(e.X)
		return f.convert(e.To, e.X.Type(), x)
	case *ir.Atomic:
		return f.atomic(e, true)
	case *ir.Unary:
		return f.unary(e)
	case *ir.Select:
		t := e.X.Type()
		if e.Cond.Type() != ir.Bool || e.Y.Type() != t {
			f.fail("select of %v and %v on %v", t, e.Y.Type(), e.Cond.Type())
		}
		c, x, y := f.expr(e.Cond), f.expr(e.X), f.expr(e.Y) // all three, in order
		return f.tmp(t, "%s ? %s : %s", c, x, y)
	case *ir.Len:
		return f.dim(e.Array, e.Dim)
	case nil:
		f.fail("missing expression")
	}
	f.fail("unknown expression %T", e)
	return ""
}

// unsignedOf is the C unsigned type of t's width, in which wrapping
// arithmetic is defined.
func unsignedOf(t ir.Type) string {
	if t.Size() == 8 {
		return "qd_u64"
	}
	return "qd_u32"
}

func (f *fn) unary(e *ir.Unary) string {
	t := e.X.Type()
	x := f.expr(e.X)
	switch {
	case e.Op == ir.Not && t == ir.Bool:
		return f.tmp(t, "!%s", x)
	case e.Op == ir.Neg && t.IsFloat():
		return f.tmp(t, "-%s", x) // flips the sign bit: -0 and NaN as Go
	case e.Op == ir.Neg && t.IsInteger():
		return f.tmp(t, "(%s)((%s)0 - (%s)%s)", cType(t), unsignedOf(t), unsignedOf(t), x)
	case e.Op == ir.BitNot && t.IsInteger():
		return f.tmp(t, "(%s)~%s", cType(t), x)
	}
	f.fail("unary operator %d on %v", e.Op, t)
	return ""
}

var cCompare = map[ir.BinOp]string{ir.Eq: "==", ir.Ne: "!=", ir.Lt: "<", ir.Le: "<=", ir.Gt: ">", ir.Ge: ">="}

func (f *fn) binary(e *ir.Binary) string {
	if e.Op.IsLogical() {
		return f.logical(e)
	}
	t := e.X.Type()
	x := f.expr(e.X)
	y := f.expr(e.Y)
	op := e.Op
	switch {
	case op.IsShift():
		if !t.IsInteger() || !e.Y.Type().IsInteger() {
			f.fail("shift of %v by %v", t, e.Y.Type())
		}
		// Go's count is unsigned: a negative signed count (which panics
		// in Go) counts as huge (gosem.ShiftNegative; the helpers do
		// gosem.ShiftWide).
		// C's conversion of a negative int to qd_u64 sign-extends.
		count := "(qd_u64)" + y
		name := map[ir.BinOp]string{ir.Shl: "shl", ir.Shr: "shr"}[op]
		return f.tmp(t, "qd_%s_%v(%s, %s)", name, t, x, count)
	case op.IsComparison():
		// C's == < <= > >= are false on NaN and != is true, as Go's.
		if t == ir.Bool && op != ir.Eq && op != ir.Ne || !t.Valid() {
			f.fail("comparison %d on %v", op, t)
		}
		return f.tmp(ir.Bool, "%s %s %s", x, cCompare[op], y)
	case t == ir.Bool:
		switch op {
		case ir.And:
			return f.tmp(t, "%s && %s", x, y)
		case ir.Or:
			return f.tmp(t, "%s || %s", x, y)
		case ir.Xor:
			return f.tmp(t, "%s != %s", x, y)
		}
	case t.IsFloat():
		switch op {
		case ir.Add, ir.Sub, ir.Mul, ir.Div:
			// IEEE, correctly rounded, never contracted: the compilers run
			// with contraction off and IEEE division (see CompilerOptions).
			return f.tmp(t, "%s %s %s", x, map[ir.BinOp]string{ir.Add: "+", ir.Sub: "-", ir.Mul: "*", ir.Div: "/"}[op], y)
		case ir.Min, ir.Max:
			// gosem.MinMaxFloat, in the helpers.
			return f.tmp(t, "qd_%s_%v(%s, %s)", map[ir.BinOp]string{ir.Min: "min", ir.Max: "max"}[op], t, x, y)
		}
	case t.IsInteger():
		return f.intOp(op, t, x, y)
	}
	f.fail("binary operator %d on %v", op, t)
	return ""
}

// intOp writes Go's integer arithmetic: + - * wrap (computed unsigned, as
// C's signed overflow is undefined), / and % truncate with Go's MinInt / -1
// (helpers, gosem.Division, which also keep a division by zero away from
// C: gosem.DivZero).
func (f *fn) intOp(op ir.BinOp, t ir.Type, x, y string) string {
	ct, ut := cType(t), unsignedOf(t)
	switch op {
	case ir.Add, ir.Sub, ir.Mul:
		sym := map[ir.BinOp]string{ir.Add: "+", ir.Sub: "-", ir.Mul: "*"}[op]
		return f.tmp(t, "(%s)((%s)%s %s (%s)%s)", ct, ut, x, sym, ut, y)
	case ir.Div:
		return f.tmp(t, "qd_div_%v(%s, %s)", t, x, y)
	case ir.Rem:
		return f.tmp(t, "qd_rem_%v(%s, %s)", t, x, y)
	case ir.And:
		return f.tmp(t, "%s & %s", x, y)
	case ir.Or:
		return f.tmp(t, "%s | %s", x, y)
	case ir.Xor:
		return f.tmp(t, "%s ^ %s", x, y)
	case ir.AndNot:
		return f.tmp(t, "%s & (%s)~%s", x, ct, y)
	case ir.Min:
		return f.tmp(t, "%s < %s ? %s : %s", x, y, x, y)
	case ir.Max:
		return f.tmp(t, "%s > %s ? %s : %s", x, y, x, y)
	}
	f.fail("operator %d on %v", op, t)
	return ""
}

// logical writes && and || so that Y, which may hold an atomic, runs only
// when Go would run it.
func (f *fn) logical(e *ir.Binary) string {
	if e.X.Type() != ir.Bool || e.Y.Type() != ir.Bool {
		f.fail("logical operator on %v and %v", e.X.Type(), e.Y.Type())
	}
	r := f.tmp(ir.Bool, "%s", f.expr(e.X))
	neg := ""
	if e.Op == ir.LOr {
		neg = "!"
	}
	f.line("if (%s%s) {", neg, r)
	f.indent++
	f.line("%s = %s;", r, f.expr(e.Y))
	f.indent--
	f.line("}")
	return r
}

// convert writes Go's conversion of x (of type from) to type to.
func (f *fn) convert(to, from ir.Type, x string) string {
	switch {
	case to == from:
		return x
	case !to.IsNumeric() || !from.IsNumeric():
		f.fail("cannot convert %v to %v: conversions are between numeric types", from, to)
	case to.IsSmall() && from.IsFloat():
		// Through int32, as Go converts (gosem.FloatToInt), then C's
		// conversion to the low bits.
		return f.tmp(to, "(%s)qd_cvt_i32_%v(%s)", cType(to), from, x)
	case to.IsInteger() && from.IsFloat():
		// Truncation; out of range saturates and NaN gives 0 (a helper,
		// gosem.FloatToInt: C leaves both undefined).
		return f.tmp(to, "qd_cvt_%v_%v(%s)", to, from, x)
	}
	// The rest is C's conversion: integers widen by the source's
	// signedness and narrow to the low bits; integer to float and f64 to
	// f32 round to nearest; f32 to f64 is exact.
	return f.tmp(to, "(%s)%s", cType(to), x)
}

// call writes a math intrinsic: the exact ones through the prelude, the
// transcendental ones through devmath's C rendering of the PTX path's
// functions, defined once per unit.
func (f *fn) call(e *ir.Call) string {
	var t ir.Type
	if len(e.Args) > 0 {
		t = e.Args[0].Type()
	}
	args := ""
	for i, a := range e.Args {
		if len(e.Args) != e.Fn.Arity() || !t.IsFloat() || a.Type() != t {
			f.fail("%v takes %d float32 or float64 arguments of one type", e.Fn, e.Fn.Arity())
		}
		if i > 0 {
			args += ", "
		}
		args += f.expr(a)
	}
	if args == "" {
		f.fail("%v without arguments", e.Fn)
	}
	if e.Fn.Exact() {
		return f.tmp(t, "qd_%v_%v(%s)", e.Fn, t, args)
	}
	name, def, err := devmath.CFunc(e.Fn, t) // cached in devmath
	if err != nil {
		f.fail("%v", err)
	}
	if old, ok := f.u.funcs[name]; ok && old != def {
		f.fail("two different definitions of math function %s", name)
	}
	f.u.funcs[name] = def
	return f.tmp(t, "%s(%s)", name, args)
}

// index64 is an index expression as an int64 operand.
func (f *fn) index64(e ir.Expr) string {
	t := e.Type()
	if !t.IsInteger() {
		f.fail("index of type %v", t)
	}
	x := f.expr(e)
	if t == ir.I64 {
		return x
	}
	return f.tmp(ir.I64, "(qd_i64)%s", x) // u32 zero-extends, i32 sign-extends
}

// element is the C lvalue of leaf of a[index...], row-major over the
// array's extents with wrapping int64 arithmetic, as the PTX generator
// computes it. Indices are not checked against the extents on the GPU.
func (f *fn) element(a *ir.Param, index []ir.Expr, leaf int) string {
	if !a.IsArray() || len(index) != a.Dims {
		f.fail("array %s (%d dims) indexed with %d indices", a.Name, a.Dims, len(index))
	}
	off := f.index64(index[0])
	for d := 1; d < len(index); d++ {
		i := f.index64(index[d])
		off = f.tmp(ir.I64, "(qd_i64)((qd_u64)%s * (qd_u64)%s + (qd_u64)%s)", off, f.dim(a, d), i)
	}
	return f.at(a, off, leaf)
}
