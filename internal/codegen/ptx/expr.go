package ptx

import "github.com/quadrants-go/qd/internal/ir"

// expr writes the code of e and returns the register holding its value.
// Reading a local or a parameter returns its own register without a copy:
// expressions never assign locals, so the register cannot change under them.
func (f *fnWriter) expr(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.Const:
		if !e.T.Valid() {
			f.fail("constant of invalid type %v", e.T)
		}
		return f.constant(e.T, e.Bits)
	case *ir.ParamRef:
		if e.Param.IsArray() {
			f.fail("array %s used as a scalar", e.Param.Name)
		}
		return f.scalar(e.Param)
	case *ir.VarRef:
		return f.varReg(e.Var)
	case *ir.Len:
		return f.dim(e.Array, e.Dim)
	case *ir.Unary:
		return f.unary(e)
	case *ir.Binary:
		return f.binary(e)
	case *ir.Convert:
		return f.convert(e.To, e.X.Type(), f.expr(e.X))
	case *ir.Bitcast:
		return f.bitcast(e.To, e.X.Type(), f.expr(e.X))
	case *ir.Select:
		return f.sel(e)
	case *ir.Call:
		return f.call(e)
	case *ir.Load:
		if r, ok := f.hoisted[e]; ok {
			return r
		}
		if r := f.vectorLoaded(e); r != "" {
			return r
		}
		t := e.Type()
		addr, ok := f.memAddr(e.Array, e.Index, e.Leaf)
		r := f.reg(t)
		if ok != "" {
			f.zeroOf(t, r)
		}
		f.guarded(ok, func() { f.in(e.Array, func() { f.loadInto(t, r, "["+addr+"]") }) })
		return r
	case *ir.Atomic:
		return f.atomic(e, true)
	case nil:
		f.fail("missing expression")
	}
	f.fail("unknown expression %T", e)
	return ""
}

func (f *fnWriter) unary(e *ir.Unary) string {
	t := e.X.Type()
	x := f.expr(e.X)
	r := f.reg(t)
	switch {
	case e.Op == ir.Not && t == ir.Bool:
		f.emit("not.pred %s, %s", r, x)
	case e.Op == ir.Neg && t.IsFloat():
		f.emit("neg.%s %s, %s", opType(t), r, x) // flips the sign bit: -0, NaN as Go
	case e.Op == ir.Neg && t.IsInteger():
		// neg.s* is two's complement negation, which wraps as Go does for
		// signed and unsigned operands alike.
		f.emit("neg.s%d %s, %s", t.Bits(), r, x)
	case e.Op == ir.BitNot && t.IsInteger():
		f.emit("not.%s %s, %s", bitType(t), r, x)
	default:
		f.fail("unary operator %d on %v", e.Op, t)
	}
	return r
}

func (f *fnWriter) binary(e *ir.Binary) string {
	if e.Op.IsLogical() {
		return f.logical(e)
	}
	t := e.X.Type()
	if e.Op == ir.Div && t.IsFloat() && isOne(e.X) {
		return f.reciprocal(t, e.Y)
	}
	x := f.expr(e.X)
	if r, ok := f.divByConstant(e, t, x); ok {
		return r
	}
	y := f.expr(e.Y)
	switch {
	case e.Op.IsShift():
		return f.shift(e.Op, t, x, e.Y.Type(), y)
	case e.Op.IsComparison():
		return f.compare(e.Op, t, x, y)
	case t == ir.Bool:
		return f.boolOp(e.Op, x, y)
	case t.IsFloat():
		return f.floatOp(e.Op, t, x, y)
	case t.IsInteger():
		return f.intOp(e.Op, t, x, y)
	}
	f.fail("binary operator %d on %v", e.Op, t)
	return ""
}

// logical writes && and || with a branch, so Y (which may hold an atomic)
// runs only when Go would run it.
func (f *fnWriter) logical(e *ir.Binary) string {
	if e.X.Type() != ir.Bool || e.Y.Type() != ir.Bool {
		f.fail("logical operator on %v and %v", e.X.Type(), e.Y.Type())
	}
	if cheapOperand(e.Y) {
		// Evaluating Y when Go would not changes nothing (it reads only
		// registers and cannot fault), and a predicate operation keeps
		// the condition in one basic block: ptxas can then predicate what
		// it guards instead of branching, and schedule the guarded loads
		// of an unrolled body together.
		x := f.expr(e.X)
		op := ir.And
		if e.Op == ir.LOr {
			op = ir.Or
		}
		return f.boolOp(op, x, f.expr(e.Y))
	}
	r := f.reg(ir.Bool)
	f.mov(ir.Bool, r, f.expr(e.X))
	done := f.label()
	f.braIf(r, e.Op == ir.LAnd, done)
	f.mov(ir.Bool, r, f.expr(e.Y))
	f.place(done)
	return r
}

// cheapOperand reports whether e is a few register operations that cannot
// fault or have effects: no memory, no call, no division.
func cheapOperand(e ir.Expr) bool {
	ok, n := true, 0
	ir.InspectExpr(e, func(x ir.Node) bool {
		n++
		switch x := x.(type) {
		case *ir.Const, *ir.ParamRef, *ir.VarRef, *ir.Len, *ir.Unary, *ir.Convert:
		case *ir.Binary:
			ok = ok && x.Op != ir.Div && x.Op != ir.Rem
		default:
			ok = false
		}
		return ok
	})
	return ok && n <= 8
}

func (f *fnWriter) boolOp(op ir.BinOp, x, y string) string {
	r := f.reg(ir.Bool)
	switch op {
	case ir.And:
		f.emit("and.pred %s, %s, %s", r, x, y)
	case ir.Or:
		f.emit("or.pred %s, %s, %s", r, x, y)
	case ir.Xor:
		f.emit("xor.pred %s, %s, %s", r, x, y)
	default:
		f.fail("operator %d on bool", op)
	}
	return r
}

var cmpName = map[ir.BinOp]string{ir.Eq: "eq", ir.Ne: "ne", ir.Lt: "lt", ir.Le: "le", ir.Gt: "gt", ir.Ge: "ge"}

func (f *fnWriter) compare(op ir.BinOp, t ir.Type, x, y string) string {
	r := f.reg(ir.Bool)
	switch {
	case t == ir.Bool && (op == ir.Eq || op == ir.Ne):
		f.emit("xor.pred %s, %s, %s", r, x, y)
		if op == ir.Eq {
			f.emit("not.pred %s, %s", r, r)
		}
	case t.IsFloat() && op == ir.Ne:
		// Go's != is true when either operand is NaN: the unordered compare.
		f.emit("setp.neu.%s %s, %s, %s", opType(t), r, x, y)
	case t.IsNumeric():
		// The ordered compares are false on NaN, as Go's ==, <, <=, >, >=.
		f.emit("setp.%s.%s %s, %s, %s", cmpName[op], opType(t), r, x, y)
	default:
		f.fail("comparison %d on %v", op, t)
	}
	return r
}

func (f *fnWriter) floatOp(op ir.BinOp, t ir.Type, x, y string) string {
	r := f.reg(t)
	ty := opType(t)
	switch op {
	// The explicit .rn keeps ptxas from contracting a*b+c into an fma, so
	// results match the CPU backend's bit for bit.
	case ir.Add:
		f.emit("add%s.%s %s, %s, %s", f.rnd(t), ty, r, x, y)
	case ir.Sub:
		f.emit("sub%s.%s %s, %s, %s", f.rnd(t), ty, r, x, y)
	case ir.Mul:
		f.emit("mul%s.%s %s, %s, %s", f.rnd(t), ty, r, x, y)
	case ir.Div:
		if f.m.opts.FastMath && t == ir.F32 {
			f.emit("div.full.ftz.f32 %s, %s, %s", r, x, y) // at most 2 ulp
		} else {
			f.emit("div.rn.%s %s, %s, %s", ty, r, x, y) // IEEE, correctly rounded
		}
	case ir.Min, ir.Max:
		return f.floatMinMax(op, t, x, y)
	default:
		f.fail("operator %d on %v", op, t)
	}
	return r
}

// floatMinMax is Go's min and max (gosem.MinMaxFloat): NaN if either
// operand is NaN, and min(-0, +0) = -0, max(-0, +0) = +0. PTX min/max return the non-NaN operand,
// and their choice between zeros of opposite sign is not Go's, so both cases
// are patched: equal operands combine their bits (OR keeps a minus sign, AND
// drops it), and a NaN operand makes the result x+y, which is NaN.
func (f *fnWriter) floatMinMax(op ir.BinOp, t ir.Type, x, y string) string {
	ty, bt := opType(t), bitType(t)
	name, zero := "min", "or"
	if op == ir.Max {
		name, zero = "max", "and"
	}
	r := f.reg(t)
	f.emit("%s.%s %s, %s, %s", name, ty, r, x, y)
	eq, z := f.reg(ir.Bool), f.reg(t)
	f.emit("setp.eq.%s %s, %s, %s", ty, eq, x, y)
	f.emit("%s.%s %s, %s, %s", zero, bt, z, x, y)
	f.emit("selp.%s %s, %s, %s, %s", ty, r, z, r, eq)
	nan, s := f.reg(ir.Bool), f.reg(t)
	f.emit("setp.nan.%s %s, %s, %s", ty, nan, x, y)
	f.emit("add.rn.%s %s, %s, %s", ty, s, x, y)
	f.emit("selp.%s %s, %s, %s, %s", ty, r, s, r, nan)
	return r
}

func (f *fnWriter) intOp(op ir.BinOp, t ir.Type, x, y string) string {
	r := f.reg(t)
	ty, bt := opType(t), bitType(t)
	// Two's complement add, sub and mul.lo wrap like Go's integer arithmetic;
	// the signedness of the suffix does not change the bits.
	switch op {
	case ir.Add:
		f.emit("add.%s %s, %s, %s", ty, r, x, y)
	case ir.Sub:
		f.emit("sub.%s %s, %s, %s", ty, r, x, y)
	case ir.Mul:
		f.emit("mul.lo.%s %s, %s, %s", ty, r, x, y)
	case ir.Div, ir.Rem:
		f.intDivRem(op, t, r, x, y)
	case ir.And:
		f.emit("and.%s %s, %s, %s", bt, r, x, y)
	case ir.Or:
		f.emit("or.%s %s, %s, %s", bt, r, x, y)
	case ir.Xor:
		f.emit("xor.%s %s, %s, %s", bt, r, x, y)
	case ir.AndNot:
		ny := f.reg(t)
		f.emit("not.%s %s, %s", bt, ny, y)
		f.emit("and.%s %s, %s, %s", bt, r, x, ny)
	case ir.Min, ir.Max:
		f.emit("%s.%s %s, %s, %s", map[ir.BinOp]string{ir.Min: "min", ir.Max: "max"}[op], ty, r, x, y)
	default:
		f.fail("operator %d on %v", op, t)
	}
	return r
}

// divByConstant writes x / c or x % c for a constant c other than 0 and
// (signed) -1 with c as an immediate: ptxas turns that into a multiply
// by a magic number and shifts, where a divisor in a register, even one
// set to a constant just before, becomes a call of its 64-bit division
// routine (measured: 41 such calls in a tiled matrix product's entry, most
// of its time). Go's MinInt / -1 rule needs no fix-up for other divisors.
func (f *fnWriter) divByConstant(e *ir.Binary, t ir.Type, x string) (string, bool) {
	c, ok := e.Y.(*ir.Const)
	if !ok || e.Op != ir.Div && e.Op != ir.Rem || !t.IsInteger() || t.Size() < 4 || c.Bits == 0 || t.IsSigned() && c.Int() == -1 {
		return "", false
	}
	if t.Size() == 4 && uint64(uint32(c.Bits)) == 0 {
		return "", false
	}
	bits := t.Bits()
	v := c.Bits
	if bits == 32 {
		v = uint64(uint32(v))
	}
	if k := bitsPow2(v); k >= 0 && (!t.IsSigned() || int64(c.Bits) > 0) {
		return f.divPow2(e.Op, t, x, k), true
	}
	r := f.reg(t)
	name := "div"
	if e.Op == ir.Rem {
		name = "rem"
	}
	f.emit("%s.%s %s, %s, %s", name, opType(t), r, x, literal(t, c.Bits))
	return r, true
}

// bitsPow2 is k when v is 2^k, else -1.
func bitsPow2(v uint64) int {
	if v == 0 || v&(v-1) != 0 {
		return -1
	}
	k := 0
	for v > 1 {
		v >>= 1
		k++
	}
	return k
}

// divPow2 writes x / 2^k or x % 2^k with shifts and masks, as Go rounds
// them (toward zero): ptxas writes 64-bit division, by an immediate too,
// as a call of its division routine.
func (f *fnWriter) divPow2(op ir.BinOp, t ir.Type, x string, k int) string {
	bits, bt, ty := t.Bits(), bitType(t), opType(t)
	r := f.reg(t)
	if k == 0 {
		if op == ir.Div {
			f.mov(t, r, x)
		} else {
			f.emit("mov.%s %s, 0", bt, r)
		}
		return r
	}
	if !t.IsSigned() {
		if op == ir.Div {
			f.emit("shr.u%d %s, %s, %d", bits, r, x, k)
		} else {
			f.emit("and.%s %s, %s, %d", bt, r, x, uint64(1)<<k-1)
		}
		return r
	}
	// q = (x + (x < 0 ? 2^k-1 : 0)) >> k, arithmetic: truncation toward 0.
	sign, bias, sum, q := f.reg(t), f.reg(t), f.reg(t), f.reg(t)
	f.emit("shr.s%d %s, %s, %d", bits, sign, x, bits-1)
	f.emit("shr.u%d %s, %s, %d", bits, bias, sign, bits-k)
	f.emit("add.%s %s, %s, %s", ty, sum, x, bias)
	f.emit("shr.s%d %s, %s, %d", bits, q, sum, k)
	if op == ir.Div {
		return q
	}
	back := f.reg(t)
	f.emit("shl.b%d %s, %s, %d", bits, back, q, k)
	f.emit("sub.%s %s, %s, %s", ty, r, x, back)
	return r
}

// intDivRem writes truncating division or remainder, as Go's / and %
// (gosem.Division). PTX leaves x/0 unspecified (no trap; the hardware
// sequence gives all ones for the quotient today), and qd does not check
// it on the GPU: gosem.DivZero's PTX outcome is Unspecified. The signed
// case MinInt / -1 is made Go's (MinInt, remainder 0) explicitly rather
// than left to the division routine.
//
// A 64-bit division whose operands both lie in [0, 2^31) at run time (a
// block index over a tile count, an element index over a row length:
// nearly every division in a kernel) takes a 32-bit division instead:
// ptxas inlines that in about 20 instructions where the 64-bit one is a
// call of a routine several times as long. The quotient is sign-extended
// so that x / 0 stays all ones (x % 0 is x either way).
func (f *fnWriter) intDivRem(op ir.BinOp, t ir.Type, r, x, y string) {
	if t.Size() != 8 {
		f.divRem(op, t, r, x, y)
		return
	}
	both, high, small := f.reg(ir.U64), f.reg(ir.U64), f.reg(ir.Bool)
	f.emit("or.b64 %s, %s, %s", both, x, y)
	f.emit("and.b64 %s, %s, 0xFFFFFFFF80000000", high, both)
	f.emit("setp.eq.u64 %s, %s, 0", small, high)
	wide, done := f.label(), f.label()
	f.braIf(small, true, wide)
	x32, y32, r32 := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("cvt.u32.u64 %s, %s", x32, x)
	f.emit("cvt.u32.u64 %s, %s", y32, y)
	f.divRem(op, ir.U32, r32, x32, y32)
	ext := "u64.u32"
	if op == ir.Div {
		ext = "s64.s32"
	}
	f.emit("cvt.%s %s, %s", ext, r, r32)
	f.bra(done)
	f.place(wide)
	f.divRem(op, t, r, x, y)
	f.place(done)
}

// divRem writes the division or remainder instruction of type t, with
// Go's MinInt / -1 for signed types.
func (f *fnWriter) divRem(op ir.BinOp, t ir.Type, r, x, y string) {
	ty, bt := opType(t), bitType(t)
	name := "div"
	if op == ir.Rem {
		name = "rem"
	}
	f.emit("%s.%s %s, %s, %s", name, ty, r, x, y)
	if !t.IsSigned() {
		return
	}
	m1 := f.reg(ir.Bool)
	f.emit("setp.eq.%s %s, %s, -1", ty, m1, y)
	fix := f.reg(t)
	if op == ir.Div {
		f.emit("neg.%s %s, %s", ty, fix, x)
	} else {
		f.emit("mov.%s %s, 0", bt, fix)
	}
	f.emit("selp.%s %s, %s, %s, %s", bt, r, fix, r, m1)
}

// shift writes Go's << and >> (gosem.ShiftWide, gosem.ShiftNegative): the
// count is unsigned (a negative signed count, which panics in Go, counts as
// huge), a count of at least the width gives 0, or all sign bits for >> of
// a negative signed value. PTX shl/shr
// clamp a .u32 count to the width, which is exactly that, so only a 64-bit
// count needs narrowing: it is clamped to 64 first so the truncation cannot
// wrap a huge count to a small one.
func (f *fnWriter) shift(op ir.BinOp, t ir.Type, x string, ct ir.Type, y string) string {
	if !t.IsInteger() || !ct.IsInteger() {
		f.fail("shift of %v by %v", t, ct)
	}
	count := y
	if ct.Size() == 8 {
		c64, c32 := f.reg(ir.U64), f.reg(ir.U32)
		f.emit("min.u64 %s, %s, 64", c64, y)
		f.emit("cvt.u32.u64 %s, %s", c32, c64)
		count = c32
	}
	r := f.reg(t)
	switch {
	case op == ir.Shl:
		f.emit("shl.%s %s, %s, %s", bitType(t), r, x, count)
	case t.IsSigned():
		f.emit("shr.s%d %s, %s, %s", t.Bits(), r, x, count)
	default:
		f.emit("shr.u%d %s, %s, %s", t.Bits(), r, x, count)
	}
	return r
}

// convert writes Go's conversion of x (of type from) to type to.
func (f *fnWriter) convert(to, from ir.Type, x string) string {
	if to == from {
		return x
	}
	if to == ir.Bool || from == ir.Bool || !to.Valid() || !from.Valid() {
		f.fail("conversion from %v to %v", from, to)
	}
	if to.IsSmall() || from.IsSmall() {
		return f.convertSmall(to, from, x) // values.go
	}
	r := f.reg(to)
	switch {
	case to.IsInteger() && from.IsInteger():
		switch {
		case to.Size() == from.Size():
			f.mov(to, r, x) // same bits, reinterpreted
		case to.Size() > from.Size():
			// Widening extends by the source's signedness.
			f.emit("cvt.%s.%s %s, %s", opType(widen(from)), opType(from), r, x)
		default:
			f.emit("cvt.u32.u64 %s, %s", r, x) // narrowing keeps the low bits
		}
	case to.IsFloat() && from.IsInteger():
		f.emit("cvt.rn.%s.%s %s, %s", opType(to), opType(from), r, x)
	case to.IsInteger() && from.IsFloat():
		// Truncation toward zero. Out-of-range values saturate and NaN
		// gives 0 (gosem.FloatToInt: Go leaves both implementation-defined).
		f.emit("cvt.rzi.%s.%s %s, %s", opType(to), opType(from), r, x)
	case to == ir.F64:
		f.emit("cvt.f64.f32 %s, %s", r, x) // exact
	default:
		f.emit("cvt.rn.f32.f64 %s, %s", r, x)
	}
	return r
}

// widen is the 64-bit integer type of t's signedness.
func widen(t ir.Type) ir.Type {
	if t.IsSigned() {
		return ir.I64
	}
	return ir.U64
}

// sel is cond ? x : y with both evaluated (the IR's Select).
func (f *fnWriter) sel(e *ir.Select) string {
	t := e.X.Type()
	if e.Cond.Type() != ir.Bool || e.Y.Type() != t {
		f.fail("select of %v and %v on %v", t, e.Y.Type(), e.Cond.Type())
	}
	c := f.expr(e.Cond)
	x := f.expr(e.X)
	y := f.expr(e.Y)
	r := f.reg(t)
	if t == ir.Bool {
		// selp has no .pred form: (c && x) || (!c && y).
		a, nc := f.reg(ir.Bool), f.reg(ir.Bool)
		f.emit("and.pred %s, %s, %s", a, c, x)
		f.emit("not.pred %s, %s", nc, c)
		f.emit("and.pred %s, %s, %s", nc, nc, y)
		f.emit("or.pred %s, %s, %s", r, a, nc)
		return r
	}
	f.emit("selp.%s %s, %s, %s, %s", movType(t), r, x, y, c)
	return r
}

// index64 is an index expression as a signed 64-bit register.
func (f *fnWriter) index64(e ir.Expr) string {
	t := e.Type()
	if !t.IsInteger() {
		f.fail("index of type %v", t)
	}
	x := f.expr(e)
	if t.Size() == 8 {
		return x
	}
	return f.convert(widen(t), t, x)
}

// address is the global address of a[index...], row-major, from the array's
// extents (the element's first byte: a record's leaf is at an offset from
// it). Indices are not checked against the extents on the GPU: an out
// of range index reads or writes whatever lies there, or faults.
func (f *fnWriter) address(a *ir.Param, index []ir.Expr) string {
	if !a.IsArray() || len(index) != a.Dims {
		f.fail("array %s (%d dims) indexed with %d indices", a.Name, a.Dims, len(index))
	}
	if a.IsShared() {
		return f.sharedAddress(a, index) // blocks.go
	}
	size := a.ElemSize()
	if len(index) == 1 && index[0].Type().Size() == 4 {
		// A 32-bit index widens and scales in one instruction.
		i := f.expr(index[0])
		off, addr := f.reg(ir.I64), f.reg(ir.I64)
		f.emit("mul.wide.%s %s, %s, %d", opType(index[0].Type()), off, i, size)
		f.emit("add.s64 %s, %s, %s", addr, f.array(a), off)
		return addr
	}
	off := f.index64(index[0])
	for d := 1; d < len(index); d++ {
		n := f.reg(ir.I64)
		f.emit("mad.lo.s64 %s, %s, %s, %s", n, off, f.dim(a, d), f.index64(index[d]))
		off = n
	}
	addr := f.reg(ir.I64)
	f.emit("mad.lo.s64 %s, %s, %d, %s", addr, off, size, f.array(a))
	return addr
}
