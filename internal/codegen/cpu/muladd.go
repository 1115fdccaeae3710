package cpu

import "github.com/quadrants-go/qd/internal/ir"

// mulAdd compiles x*s + y (or y + x*s), with s uniform, x a vector and y a
// vector or uniform, as one loop instead of two: the a*x+y of saxpy and its
// relatives, and the s*a + c of a linear congruential generator. The
// product is rounded to T before the add (an explicit conversion), so the
// result is the one of two separate operations, never a fused multiply-add.
func (c *compiler) mulAdd(e *ir.Binary) value {
	m, other, mulFirst := e.X, e.Y, true
	if b, ok := m.(*ir.Binary); !ok || b.Op != ir.Mul {
		m, other, mulFirst = e.Y, e.X, false
	}
	mb, ok := m.(*ir.Binary)
	t := e.X.Type()
	if !ok || mb.Op != ir.Mul || !t.IsNumeric() || mb.X.Type() != t || mb.Y.Type() != t || other.Type() != t {
		return nil
	}
	var mx, my, o value
	if mulFirst {
		mx, my = c.expr(mb.X), c.expr(mb.Y)
		o = c.expr(other)
	} else {
		o = c.expr(other)
		mx, my = c.expr(mb.X), c.expr(mb.Y)
	}
	switch mx := mx.(type) {
	case *ev[int32]:
		return mulAddT(c, mulFirst, mx, as[int32](c, my), as[int32](c, o))
	case *ev[int64]:
		return mulAddT(c, mulFirst, mx, as[int64](c, my), as[int64](c, o))
	case *ev[uint32]:
		return mulAddT(c, mulFirst, mx, as[uint32](c, my), as[uint32](c, o))
	case *ev[uint64]:
		return mulAddT(c, mulFirst, mx, as[uint64](c, my), as[uint64](c, o))
	case *ev[float32]:
		return mulAddT(c, mulFirst, mx, as[float32](c, my), as[float32](c, o))
	case *ev[float64]:
		return mulAddT(c, mulFirst, mx, as[float64](c, my), as[float64](c, o))
	}
	return nil
}

func mulAddT[T number](c *compiler, mulFirst bool, mx, my, o *ev[T]) value {
	mul, add := arith[T](ir.Mul), arith[T](ir.Add)
	vecU := (mx.v != nil) != (my.v != nil)
	// Integers only: a float x*s + c keeps its two SIMD passes (simd.go),
	// faster than one scalar loop.
	if one := T(1); one/2 == 0 && vecU && o.v == nil && o.u != nil && mx.lin == nil && my.lin == nil {
		return quasiMulAdd(c, mulAddUniform(c, mulFirst, mx, my, o), mx, my, o)
	}
	if mx.v != nil && my.v != nil && o.v != nil {
		return mulAddVectors(c, mulFirst, mx, my, o)
	}
	if !vecU || o.v == nil {
		p := apply(c, mul, mx, my)
		quasiMulAdd(c, p, mx, my, nil)
		x, y := p, o
		if !mulFirst {
			x, y = o, p
		}
		res := apply(c, add, x, y)
		if res.v != nil {
			keepLin(res, x, y)
			quasiMulAdd(c, res, p, nil, o)
		}
		return res
	}
	xv, s, ov := mx.v, my.u, o.v
	if mx.u != nil {
		xv, s = my.v, mx.u
	}
	loop := func(d, a []T, s T, b []T) {
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = T(a[i]*s) + b[i]
		}
	}
	if f := simdMulAddOf[T](); f != nil {
		loop = f
	}
	into := func(f *frame, d []T) bool {
		var a, b []T
		var sv T
		if mulFirst {
			if mx.u != nil {
				sv, a = s(f), xv(f)
			} else {
				a, sv = xv(f), s(f)
			}
			b = ov(f)
		} else {
			b = ov(f)
			if mx.u != nil {
				sv, a = s(f), xv(f)
			} else {
				a, sv = xv(f), s(f)
			}
		}
		if f.err != nil {
			return false
		}
		loop(d, a, sv, b)
		return true
	}
	r := c.tmp()
	return quasiMulAdd(c, &ev[T]{into: into, v: func(f *frame) []T {
		d := reg[T](f, r)
		into(f, d)
		return d
	}}, mx, my, o)
}

// mulAddUniform is mulAddT's integer x*s + c, with s and c uniform (the
// step of a linear congruential generator, s*1664525 + 1013904223): one loop, the
// operands evaluated in source order, the product rounded to T before the
// add as in mulAddT.
func mulAddUniform[T number](c *compiler, mulFirst bool, mx, my, o *ev[T]) value {
	xv, s, cu := mx.v, my.u, o.u
	if mx.u != nil {
		xv, s = my.v, mx.u
	}
	sFirst := mx.u != nil
	r := c.tmp()
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		var a []T
		var sv, cv T
		if !mulFirst {
			cv = cu(f)
		}
		if sFirst {
			sv, a = s(f), xv(f)
		} else {
			a, sv = xv(f), s(f)
		}
		if mulFirst {
			cv = cu(f)
		}
		if f.err != nil {
			return d
		}
		a = a[:len(d)]
		for i := range d {
			d[i] = T(a[i]*sv) + cv
		}
		return d
	})
}

// keepLin is withLin for an integer Add compiled outside binaryInt.
func keepLin[T number](res, x, y *ev[T]) {
	switch r := any(res).(type) {
	case *ev[int32]:
		withLin(r, ir.Add, any(x).(*ev[int32]), any(y).(*ev[int32]))
	case *ev[int64]:
		withLin(r, ir.Add, any(x).(*ev[int64]), any(y).(*ev[int64]))
	case *ev[uint32]:
		withLin(r, ir.Add, any(x).(*ev[uint32]), any(y).(*ev[uint32]))
	case *ev[uint64]:
		withLin(r, ir.Add, any(x).(*ev[uint64]), any(y).(*ev[uint64]))
	}
}

// mulSub compiles the integer x*k - c, k and c constants (k not 0 or 1)
// and x varying, as x*k + (-c) in one loop (mulAddUniform): the *2 - 1 of
// a coin flip to ±1. Integers wrap, so adding -c is subtracting c. It
// returns nil where the shape differs, before compiling anything.
func (c *compiler) mulSub(e *ir.Binary) value {
	mb, ok := e.X.(*ir.Binary)
	t := e.Type()
	if !ok || mb.Op != ir.Mul || !t.IsInteger() || mb.X.Type() != t || mb.Y.Type() != t || e.Y.Type() != t || c.uni == nil {
		return nil
	}
	if _, ok := e.Y.(*ir.Const); !ok {
		return nil
	}
	var k *ir.Const
	var kx ir.Expr // the operand k multiplies
	if y, isConst := mb.Y.(*ir.Const); isConst {
		k, kx = y, mb.X
	} else if x, isConst := mb.X.(*ir.Const); isConst {
		k, kx = x, mb.Y
	}
	if k == nil || k.Bits <= 1 || c.uni.expr(kx) {
		return nil
	}
	mx, my := c.expr(mb.X), c.expr(mb.Y)
	o := c.expr(e.Y)
	switch mx := mx.(type) {
	case *ev[int32]:
		return mulSubT(c, mx, as[int32](c, my), as[int32](c, o))
	case *ev[int64]:
		return mulSubT(c, mx, as[int64](c, my), as[int64](c, o))
	case *ev[uint32]:
		return mulSubT(c, mx, as[uint32](c, my), as[uint32](c, o))
	case *ev[uint64]:
		return mulSubT(c, mx, as[uint64](c, my), as[uint64](c, o))
	}
	c.failf("binary operator %d does not apply to %v", ir.Sub, t)
	return nil
}

// mulSubT is mulSub on compiled operands; where they are not the vector
// and the constant expected, the product and the difference compile as
// binary would compile them.
func mulSubT[T integer](c *compiler, mx, my, o *ev[T]) value {
	if (mx.v != nil) != (my.v != nil) && o.u != nil && mx.lin == nil && my.lin == nil {
		if o.k != nil { // a constant: negated once, here, and still known
			return mulAddUniform(c, true, mx, my, known(-*o.k))
		}
		ou := o.u
		return mulAddUniform(c, true, mx, my, uni(func(f *frame) T { return -ou(f) }))
	}
	p, ok := binaryInt(c, ir.Mul, mx, my).(*ev[T])
	if !ok {
		c.failf("binary operator %d does not apply to %v", ir.Mul, irType[T]())
	}
	return binaryInt(c, ir.Sub, p, o)
}

// mulAddVectors is mulAddT's x*y + o of three vectors (the acc += a*b of
// a dot product) as one loop, a SIMD one for floats; the product is
// rounded before the add.
func mulAddVectors[T number](c *compiler, mulFirst bool, mx, my, o *ev[T]) value {
	xv, yv, ov := mx.v, my.v, o.v
	loop := func(d, a, b, s []T) {
		a, b, s = a[:len(d)], b[:len(d)], s[:len(d)]
		for i := range d {
			d[i] = T(a[i]*b[i]) + s[i]
		}
	}
	if f := simdMulAddVVOf[T](); f != nil {
		loop = f
	}
	into := func(f *frame, d []T) bool {
		var a, b, s []T
		if mulFirst {
			a, b, s = xv(f), yv(f), ov(f)
		} else {
			s, a, b = ov(f), xv(f), yv(f)
		}
		if f.err != nil {
			return false
		}
		loop(d, a, b, s)
		return true
	}
	r := c.tmp()
	return &ev[T]{into: into, v: func(f *frame) []T {
		d := reg[T](f, r)
		into(f, d)
		return d
	}}
}
