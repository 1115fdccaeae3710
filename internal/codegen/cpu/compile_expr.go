package cpu

import (
	"math/bits"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// expr compiles an expression.
func (c *compiler) expr(e ir.Expr) value {
	switch e := e.(type) {
	case *ir.Const:
		return byType(e.T, c, constant{e.Bits})
	case *ir.ParamRef:
		if e.Param == nil || e.Param.IsArray() {
			c.failf("array used as a scalar")
		}
		return byType(e.Param.Elem, c, paramRef{e.Param.Index})
	case *ir.VarRef:
		return c.varRef(e.Var)
	case *ir.Len:
		return c.lenOf(e)
	case *ir.Unary:
		return c.unary(e)
	case *ir.Binary:
		return c.binary(e)
	case *ir.Convert:
		return c.convert(e)
	case *ir.Select:
		return c.selectExpr(e)
	case *ir.Call:
		return c.call(e)
	case *ir.Load:
		return c.load(e)
	case *ir.Bitcast:
		return c.bitcast(e)
	case *ir.Atomic:
		return c.atomic(e, false)
	case nil:
		c.failf("missing expression")
	}
	c.failf("unsupported expression %T", e)
	return nil
}

func (c *compiler) unary(e *ir.Unary) value {
	x := c.expr(e.X)
	switch t := x.typ(); {
	case e.Op == ir.Not && t == ir.Bool:
		b := as[bool](c, x)
		r := unaryOp(c, b, func(d, a []bool) {
			a = a[:len(d)]
			for i := range d {
				d[i] = !a[i]
			}
		}, func(a bool) bool { return !a })
		if r.v != nil {
			r.rng, r.rngMasked = notRange(b), b.rngMasked
		}
		return r
	case e.Op == ir.Neg && t.IsNumeric(), e.Op == ir.BitNot && t.IsInteger():
		switch x := x.(type) {
		case *ev[int32]:
			return unaryNum(c, e.Op, x)
		case *ev[int64]:
			return unaryNum(c, e.Op, x)
		case *ev[uint32]:
			return unaryNum(c, e.Op, x)
		case *ev[uint64]:
			return unaryNum(c, e.Op, x)
		case *ev[float32]:
			return unaryOp(c, x, negVec[float32], func(a float32) float32 { return -a })
		case *ev[float64]:
			return unaryOp(c, x, negVec[float64], func(a float64) float64 { return -a })
		}
	}
	c.failf("unary operator %d does not apply to %v", e.Op, x.typ())
	return nil
}

func negVec[T number](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = -a[i]
	}
}

func unaryNum[T integer](c *compiler, op ir.UnOp, x *ev[T]) value {
	if op == ir.Neg {
		return unaryOp(c, x, negVec[T], func(a T) T { return -a })
	}
	return unaryOp(c, x, func(d, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = ^a[i]
		}
	}, func(a T) T { return ^a })
}

func unaryOp[T, R scalar](c *compiler, x *ev[T], v func(d []R, a []T), s func(T) R) *ev[R] {
	if x.k != nil {
		return known(s(*x.k))
	}
	if x.u != nil {
		xu := x.u
		return uni(func(f *frame) R { return s(xu(f)) })
	}
	xv, r := x.v, c.tmp()
	return vary(func(f *frame) []R {
		d := reg[R](f, r)
		v(d, xv(f))
		return d
	})
}

func (c *compiler) binary(e *ir.Binary) value {
	if e.Op.IsLogical() {
		return c.logical(e)
	}
	if e.Op == ir.Add {
		if v := c.mulAdd(e); v != nil {
			return v
		}
	}
	if e.Op == ir.Sub {
		if v := c.mulSub(e); v != nil {
			return v
		}
	}
	x := c.expr(e.X)
	if e.Op.IsShift() {
		return c.shift(e, x)
	}
	y := c.expr(e.Y)
	if x.typ() != y.typ() {
		c.failf("operands of binary operator %d have types %v and %v", e.Op, x.typ(), y.typ())
	}
	switch x := x.(type) {
	case *ev[bool]:
		if k, ok := eqKern[bool](e.Op); ok {
			return apply(c, k, x, as[bool](c, y))
		}
	case *ev[int32]:
		return binaryInt(c, e.Op, x, as[int32](c, y))
	case *ev[int64]:
		return binaryInt(c, e.Op, x, as[int64](c, y))
	case *ev[uint32]:
		return binaryInt(c, e.Op, x, as[uint32](c, y))
	case *ev[uint64]:
		return binaryInt(c, e.Op, x, as[uint64](c, y))
	case *ev[float32]:
		return binaryFloat(c, e.Op, x, as[float32](c, y))
	case *ev[float64]:
		return binaryFloat(c, e.Op, x, as[float64](c, y))
	}
	c.failf("binary operator %d does not apply to %v", e.Op, x.typ())
	return nil
}

func binaryCommon[T number](c *compiler, op ir.BinOp, x, y *ev[T]) value {
	if k, ok := eqKern[T](op); ok {
		return apply(c, k, x, y)
	}
	if k, ok := ordKern[T](op); ok {
		return apply(c, k, x, y)
	}
	if k, ok := numKern[T](op); ok {
		return apply(c, k, x, y)
	}
	return nil
}

func binaryFloat[T float](c *compiler, op ir.BinOp, x, y *ev[T]) value {
	if k, ok := simdKern(op, floatScalar[T](op)); ok {
		return apply(c, k, x, y)
	}
	if k, ok := ordKern[T](op); ok {
		if s, ok := simdCmp(op, k.ss); ok {
			return apply(c, s, x, y)
		}
	}
	if k, ok := eqKern[T](op); ok {
		if s, ok := simdCmp(op, k.ss); ok {
			return apply(c, s, x, y)
		}
	}
	if op == ir.Div {
		return apply(c, floatDiv[T](), x, y)
	}
	if v := binaryCommon(c, op, x, y); v != nil {
		return v
	}
	c.failf("binary operator %d does not apply to %v", op, irType[T]())
	return nil
}

func binaryInt[T integer](c *compiler, op ir.BinOp, x, y *ev[T]) value {
	if op == ir.Div || op == ir.Rem {
		return withQuasiT(c, divRem(c, op == ir.Rem, x, y), op, x, y)
	}
	if k, ok := bitKern[T](op); ok {
		return withQuasiT(c, apply(c, k, x, y), op, x, y)
	}
	if v := binaryCommon(c, op, x, y); v != nil {
		switch r := v.(type) {
		case *ev[T]:
			if r.v != nil {
				return withQuasiT(c, withLin(r, op, x, y), op, x, y)
			}
		case *ev[bool]:
			cmpRange(r, op, x, y)
			if r.rng == nil && r.v != nil {
				quasiCmp(c, r, op, x, y)
			}
		}
		return v
	}
	c.failf("binary operator %d does not apply to %v", op, irType[T]())
	return nil
}

// divRem is integer / and % (gosem.Division). A zero divisor is a kernel
// error (gosem.DivZero: the CPU's outcome is Go's run-time panic, as an
// error, where the GPUs give a value), but only on an active lane, so the vector form walks the mask; a uniform divisor
// is checked once and the loop needs no mask at all (Go's MinInt / -1
// wraps instead of trapping, so garbage lanes are harmless).
func divRem[T integer](c *compiler, rem bool, x, y *ev[T]) value {
	msg := c.rtError("integer divide by zero")
	op := func(a, b T) T { return a / b }
	if rem {
		op = func(a, b T) T { return a % b }
	}
	if x.u != nil && y.u != nil {
		xu, yu := x.u, y.u
		return uni(func(f *frame) T {
			a, b := xu(f), yu(f)
			if b == 0 {
				f.fail(msg)
				return 0
			}
			return op(a, b)
		})
	}
	r := c.tmp()
	if y.k != nil && *y.k > 0 && *y.k&(*y.k-1) == 0 && x.v != nil {
		// A constant power of two: shifts and masks, as Go compiles it,
		// instead of a division instruction per lane.
		xv, k := x.v, uint(bits.TrailingZeros64(uint64(*y.k)))
		return vary(func(f *frame) []T {
			d := reg[T](f, r)
			divPow2(d, xv(f), k, rem)
			return d
		})
	}
	if y.u != nil {
		xv, yu := x.v, y.u
		return vary(func(f *frame) []T {
			d, a := reg[T](f, r), xv(f)
			b := yu(f)
			if b == 0 {
				f.fail(msg)
				return d
			}
			a = a[:len(d)]
			if rem {
				for i := range d {
					d[i] = a[i] % b
				}
			} else {
				for i := range d {
					d[i] = a[i] / b
				}
			}
			return d
		})
	}
	xv, yv := vec(c, x), y.v
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		a, b := xv(f), yv(f)
		for _, k := range f.m.idx {
			if b[k] == 0 {
				f.fail(msg)
				return d
			}
			d[k] = op(a[k], b[k])
		}
		return d
	})
}

// divPow2 is d = a / 2^k (or a % 2^k) with Go's truncated division: a
// negative dividend is biased by 2^k - 1 before the arithmetic shift. One
// loop per case, so that no loop tests the case per element.
func divPow2[T integer](d, a []T, k uint, rem bool) {
	var z T
	width := uint(unsafe.Sizeof(z)) * 8
	mask := T(1)<<k - 1
	a = a[:len(d)]
	switch signed := z-1 < 0; {
	case !signed && rem:
		for i, v := range a {
			d[i] = v & mask
		}
	case !signed:
		for i, v := range a {
			d[i] = v >> k
		}
	case rem:
		// v>>(width-1) is -1 for a negative v, 0 otherwise.
		for i, v := range a {
			d[i] = v - (v+(v>>(width-1))&mask)>>k<<k
		}
	default:
		for i, v := range a {
			d[i] = (v + (v>>(width-1))&mask) >> k
		}
	}
}

// shift is << and >>. The count may have any integer type; it becomes a
// uint64 first, where a negative signed count is a kernel error on an
// active lane (gosem.ShiftNegative: an error here, a huge count on the
// GPUs). Go's shifts already give 0 (or -1 for >> of a negative value) for
// counts of at least the width (gosem.ShiftWide).
func (c *compiler) shift(e *ir.Binary, x value) value {
	cnt := c.shiftCount(c.expr(e.Y))
	switch x := x.(type) {
	case *ev[int32]:
		return shiftOp(c, e.Op, x, cnt)
	case *ev[int64]:
		return shiftOp(c, e.Op, x, cnt)
	case *ev[uint32]:
		return shiftOp(c, e.Op, x, cnt)
	case *ev[uint64]:
		return shiftOp(c, e.Op, x, cnt)
	}
	c.failf("shift of %v, want an integer type", x.typ())
	return nil
}

func (c *compiler) shiftCount(y value) *ev[uint64] {
	switch y := y.(type) {
	case *ev[int32]:
		return signedCount(c, y)
	case *ev[int64]:
		return signedCount(c, y)
	case *ev[uint32]:
		return convertOp[uint32, uint64](c, y)
	case *ev[uint64]:
		return y
	}
	c.failf("shift count has type %v, want an integer type", y.typ())
	return nil
}

func signedCount[T int32 | int64](c *compiler, y *ev[T]) *ev[uint64] {
	if y.u != nil {
		yu := y.u
		return uni(func(f *frame) uint64 {
			s := yu(f)
			if s < 0 {
				f.fail(c.rtError("negative shift amount %d", s))
				return 0
			}
			return uint64(s)
		})
	}
	yv, r, pos, kname := y.v, c.tmp(), c.pos, c.kname
	return vary(func(f *frame) []uint64 {
		d, s := reg[uint64](f, r), yv(f)
		for _, k := range f.m.idx {
			if s[k] < 0 {
				f.fail(ir.Errorf(pos, kname, "negative shift amount %d", s[k]))
				return d
			}
			d[k] = uint64(s[k])
		}
		return d
	})
}

func shiftOp[T integer](c *compiler, op ir.BinOp, x *ev[T], cnt *ev[uint64]) value {
	if x.u != nil && cnt.u != nil {
		xu, cu := x.u, cnt.u
		if op == ir.Shl {
			return uni(func(f *frame) T { return xu(f) << cu(f) })
		}
		return uni(func(f *frame) T { return xu(f) >> cu(f) })
	}
	if cu := cnt.u; cu != nil {
		// A count the same on every lane (a constant, as in s>>31) is read
		// once, not broadcast into a register every pass.
		res := shiftUniform(vec(c, x), cu, c.tmp(), op == ir.Shl)
		if cnt.k != nil && *cnt.k < 63 {
			return withQuasiT(c, res, op, x, known(T(*cnt.k)))
		}
		return res
	}
	xv, cv, r := vec(c, x), vec(c, cnt), c.tmp()
	if op == ir.Shl {
		return vary(func(f *frame) []T {
			d := reg[T](f, r)
			a, s := xv(f), cv(f)
			a, s = a[:len(d)], s[:len(d)]
			for i := range d {
				d[i] = a[i] << s[i]
			}
			return d
		})
	}
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		a, s := xv(f), cv(f)
		a, s = a[:len(d)], s[:len(d)]
		for i := range d {
			d[i] = a[i] >> s[i]
		}
		return d
	})
}

// shiftUniform is x shifted by a count the same on every lane. A count
// below the width is masked to it, which tells the Go compiler that no lane
// needs the wide-count case, so that each lane is one shift instruction.
func shiftUniform[T integer](xv func(*frame) []T, cu func(*frame) uint64, r int, left bool) value {
	bits := uint64(unsafe.Sizeof(T(0)) * 8)
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		a, s := xv(f), cu(f)
		a = a[:len(d)]
		switch {
		case s >= bits:
			for i := range d {
				d[i] = shiftWide(a[i], s, left)
			}
		case left:
			m := s & (bits - 1)
			for i := range d {
				d[i] = a[i] << m
			}
		default:
			m := s & (bits - 1)
			for i := range d {
				d[i] = a[i] >> m
			}
		}
		return d
	})
}

// shiftWide is a shifted by s, s at least the width: what Go gives.
func shiftWide[T integer](a T, s uint64, left bool) T {
	if left {
		return a << s
	}
	return a >> s
}

// logical is && and ||: Y runs only on the lanes whose result X does not
// decide, so a guard such as i < n && x[i] > 0 protects the load.
func (c *compiler) logical(e *ir.Binary) value {
	x, y := as[bool](c, c.expr(e.X)), as[bool](c, c.expr(e.Y))
	and := e.Op == ir.LAnd
	if x.u != nil && y.u != nil {
		xu, yu := x.u, y.u
		if and {
			return uni(func(f *frame) bool { return xu(f) && yu(f) })
		}
		return uni(func(f *frame) bool { return xu(f) || yu(f) })
	}
	var rng rangeFn
	if boolRange(x) != nil && boolRange(y) != nil {
		rng = logicRange(x, y, and, c.scratchSlot())
	}
	r := c.tmp()
	yv := vec(c, y)
	if x.u != nil {
		xu := x.u
		return &ev[bool]{rng: rng, rngMasked: true, v: func(f *frame) []bool {
			if xu(f) == and {
				return yv(f)
			}
			d := reg[bool](f, r)
			fill(d, !and)
			return d
		}}
	}
	if n := 0; cheapExpr(e.Y, &n) && n <= convMax {
		// Y cannot fail and costs a few passes: evaluating it on every
		// lane is unobservable, and cheaper than narrowing the mask.
		xv := x.v
		return &ev[bool]{rng: rng, rngMasked: true, v: func(f *frame) []bool {
			a := xv(f)
			b := yv(f)
			d := reg[bool](f, r)
			logicVec(d, a, b, and)
			return d
		}}
	}
	xv, s := x.v, c.maskSlot()
	return &ev[bool]{rng: rng, rngMasked: true, v: func(f *frame) []bool {
		a := xv(f)
		m := f.m
		sub := narrow(f.slot(s), m, a, and)
		if sub.empty() {
			return a
		}
		f.m = sub
		b := yv(f)
		f.m = m
		if sub.all {
			return b
		}
		d := reg[bool](f, r)
		copy(d, a)
		for _, k := range sub.idx {
			d[k] = b[k]
		}
		return d
	}}
}

// logicVec is d = a && b (or a || b) on every lane, on the bytes of the
// bools (0 or 1), without a branch per lane.
func logicVec(d, a, b []bool, and bool) {
	d8 := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
	a8 := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(a))), len(d))
	b8 := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(b))), len(d))
	if and {
		for i := range d8 {
			d8[i] = a8[i] & b8[i]
		}
		return
	}
	for i := range d8 {
		d8[i] = a8[i] | b8[i]
	}
}

// selectExpr is cond ? x : y with both arms evaluated.
func (c *compiler) selectExpr(e *ir.Select) value {
	cond := as[bool](c, c.expr(e.Cond))
	x, y := c.expr(e.X), c.expr(e.Y)
	if x.typ() != y.typ() {
		c.failf("select arms have types %v and %v", x.typ(), y.typ())
	}
	switch x := x.(type) {
	case *ev[bool]:
		return selectOp(c, cond, x, as[bool](c, y))
	case *ev[int32]:
		return selectOp(c, cond, x, as[int32](c, y))
	case *ev[int64]:
		return selectOp(c, cond, x, as[int64](c, y))
	case *ev[uint32]:
		return selectOp(c, cond, x, as[uint32](c, y))
	case *ev[uint64]:
		return selectOp(c, cond, x, as[uint64](c, y))
	case *ev[float32]:
		return selectOp(c, cond, x, as[float32](c, y))
	case *ev[float64]:
		return selectOp(c, cond, x, as[float64](c, y))
	case *ev[int8]:
		return selectOp(c, cond, x, as[int8](c, y))
	case *ev[int16]:
		return selectOp(c, cond, x, as[int16](c, y))
	case *ev[uint8]:
		return selectOp(c, cond, x, as[uint8](c, y))
	case *ev[uint16]:
		return selectOp(c, cond, x, as[uint16](c, y))
	}
	return nil
}

func selectOp[T scalar](c *compiler, cond *ev[bool], x, y *ev[T]) value {
	if cond.u != nil && x.u != nil && y.u != nil {
		cu, xu, yu := cond.u, x.u, y.u
		return uni(func(f *frame) T {
			cv, a, b := cu(f), xu(f), yu(f)
			if cv {
				return a
			}
			return b
		})
	}
	cv, xv, yv, r := vec(c, cond), vec(c, x), vec(c, y), c.tmp()
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		s, a, b := cv(f), xv(f), yv(f)
		s, a, b = s[:len(d)], a[:len(d)], b[:len(d)]
		for i := range d {
			if s[i] {
				d[i] = a[i]
			} else {
				d[i] = b[i]
			}
		}
		return d
	})
}

// convert is a numeric conversion with Go's rules. A float converted to an
// integer out of range, or NaN, gives what Go gives on this machine
// (gosem.FloatToInt's CPU outcome, HostGo: on amd64 the "integer
// indefinite" pattern, not the GPUs' saturation).
func (c *compiler) convert(e *ir.Convert) value {
	x := c.expr(e.X)
	if x.typ() == e.To {
		return x
	}
	if !x.typ().IsNumeric() || !e.To.IsNumeric() {
		c.failf("cannot convert %v to %v", x.typ(), e.To)
	}
	switch x := x.(type) {
	case *ev[int32]:
		return convertFrom(c, x, e.To)
	case *ev[int64]:
		return convertFrom(c, x, e.To)
	case *ev[uint32]:
		return convertFrom(c, x, e.To)
	case *ev[uint64]:
		return convertFrom(c, x, e.To)
	case *ev[float32]:
		return convertFrom(c, x, e.To)
	case *ev[float64]:
		return convertFrom(c, x, e.To)
	case *ev[int8]:
		return convertFrom(c, x, e.To)
	case *ev[int16]:
		return convertFrom(c, x, e.To)
	case *ev[uint8]:
		return convertFrom(c, x, e.To)
	case *ev[uint16]:
		return convertFrom(c, x, e.To)
	}
	return nil
}

func convertFrom[T convertible](c *compiler, x *ev[T], to ir.Type) value {
	switch to {
	case ir.I32:
		return convertOp[T, int32](c, x)
	case ir.I64:
		return convertOp[T, int64](c, x)
	case ir.U32:
		return convertOp[T, uint32](c, x)
	case ir.U64:
		return convertOp[T, uint64](c, x)
	case ir.F32:
		return convertOp[T, float32](c, x)
	case ir.F64:
		return convertOp[T, float64](c, x)
	case ir.I8:
		return convertOp[T, int8](c, x)
	case ir.I16:
		return convertOp[T, int16](c, x)
	case ir.U8:
		return convertOp[T, uint8](c, x)
	case ir.U16:
		return convertOp[T, uint16](c, x)
	}
	c.failf("cannot convert to %v", to)
	return nil
}

func convertOp[T, U convertible](c *compiler, x *ev[T]) *ev[U] {
	var t T
	var u U
	if one := T(1); one/2 == 0 && U(1)/2 == 0 && unsafe.Sizeof(t) == unsafe.Sizeof(u) && x.k == nil && x.u == nil {
		// Between integers of one size (int32(s>>31) of a uint32) Go's
		// conversion keeps the bits: the lanes are read in place as U, no
		// pass. The view lives as long as x's register, which holds until
		// the statement ends, as any operand's does.
		xv := x.v
		return vary(func(f *frame) []U {
			a := xv(f)
			return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
		})
	}
	return unaryOp(c, x, func(d []U, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = U(a[i])
		}
	}, func(a T) U { return U(a) })
}
