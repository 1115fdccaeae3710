package cpu

import (
	"math/bits"

	"github.com/quadrants-go/qd/internal/ir"
)

// Quasi-affine lanes. GPU code splits a thread index into a tile's row
// and column (ty, tx := t/32, t%32), strides by it (t*8 + k) and pads
// with it (p + p/32); as vectors, each of those is a pass over the lanes,
// and every access by them a gather. In a row batch the contiguous index
// t of lane k is f.ix[last]+k, never negative, so these values have a
// closed form: lane k of an i64 value with form q holds
//
//	b + (t>>w)*s + (t&(1<<w-1))*d   (w > 0)
//	b + t*s                         (w = 0)
//
// with b, ok := q.base(f) uniform and w, s, d known when compiling.
// Contiguous values (ev.lin) are the form b + t; uniform ones b. Sums,
// differences and products by constants of forms are forms, and so are
// x/2^p, x%2^p, x>>p and x&(2^p-1) of a strided x = b + t*2^a (a ≤ p)
// whenever b ≥ 0 and b%2^p < 2^a, checked in each batch: t/32 is
// (t>>5), t%32 is (t&31), t*8+k is k + t*8, and (t*8+k)/32 is t>>2.
//
// A value with a form still has its vector (ev.v); the form rides along,
// as lin does. Loads and stores whose indices are forms of one w check
// the extreme lanes and move each run of lanes sharing t>>w as a copy, a
// fill or a strided loop (quasiAccess), and comparisons of a form with a
// uniform value are lane sets where the form is monotone over the batch.

// quasi is the form of a varying i64 value.
type quasi struct {
	base func(*frame) (int64, bool)
	w    uint8
	s, d int64
}

// quasiOf is x's form: its own, that of its lin, or none.
func (c *compiler) quasiOf(x *ev[int64]) *quasi {
	switch {
	case x.qa != nil:
		return x.qa
	case x.lin != nil:
		lin, last := x.lin, c.lastDim()
		return &quasi{base: func(f *frame) (int64, bool) {
			b, ok := lin(f)
			return b - f.ix[last], ok
		}, s: 1}
	}
	return nil
}

// at is q's form with segments of 2^w lanes (w > 0): a strided form
// (w = 0) becomes one; nil when q has other segments.
func (q *quasi) at(w uint8) *quasi {
	switch {
	case q.w == w:
		return q
	case q.w == 0:
		// t*s = (t>>w)*(s<<w) + (t&m)*s
		return &quasi{base: q.base, w: w, s: q.s << w, d: q.s}
	}
	return nil
}

// quasiSum is x + k*y (k = 1 or -1) of forms.
func quasiSum(x, y *quasi, k int64) *quasi {
	w := max(x.w, y.w)
	if x, y = x.at(w), y.at(w); x == nil || y == nil {
		return nil
	}
	xb, yb := x.base, y.base
	return &quasi{base: func(f *frame) (int64, bool) {
		a, ok1 := xb(f)
		b, ok2 := yb(f)
		return a + k*b, ok1 && ok2
	}, w: w, s: x.s + k*y.s, d: x.d + k*y.d}
}

// quasiShift is x + k*u, u uniform: its base moves by k*u, folded when
// u is a constant (the +8*k of an unrolled loop's index).
func quasiShift(x *quasi, u *ev[int64], k int64) *quasi {
	xb := x.base
	var base func(*frame) (int64, bool)
	if u.k != nil {
		c := k * *u.k
		base = func(f *frame) (int64, bool) {
			b, ok := xb(f)
			return b + c, ok
		}
	} else {
		uu := u.u
		base = func(f *frame) (int64, bool) {
			b, ok := xb(f)
			return b + k*uu(f), ok
		}
	}
	return &quasi{base: base, w: x.w, s: x.s, d: x.d}
}

// quasiScale is x*k, k a constant.
func quasiScale(x *quasi, k int64) *quasi {
	xb := x.base
	return &quasi{base: func(f *frame) (int64, bool) {
		b, ok := xb(f)
		return b * k, ok
	}, w: x.w, s: x.s * k, d: x.d * k}
}

// quasiDiv is x/2^p (rem false) or x%2^p of a form with no column part
// (d = 0, or a strided form): with t' = t>>w, x = b + t'*s, s = 2^a,
// a ≤ p, and in a batch where b ≥ 0 and b%2^p < s,
//
//	x/2^p = b/2^p + t'>>(p-a) = b/2^p + (t >> (w+p-a))
//	x%2^p = b%2^p + (t'&(2^(p-a)-1))*s    (w = 0 only)
//
// nil when x has another shape.
func quasiDiv(x *quasi, p uint, rem bool) *quasi {
	if x.s <= 0 || x.s&(x.s-1) != 0 || x.w > 0 && x.d != 0 || p > 62 {
		return nil
	}
	a := uint(bits.TrailingZeros64(uint64(x.s)))
	if a > p || rem && x.w > 0 {
		return nil
	}
	xb, size, s := x.base, int64(1)<<p, x.s
	base := func(f *frame) (int64, bool) {
		b, ok := xb(f)
		if !ok || b < 0 || b%size >= s {
			return 0, false
		}
		if rem {
			return b % size, true
		}
		return b / size, true
	}
	w := uint(x.w) + p - a
	switch {
	case rem && p == a:
		return &quasi{base: base} // the same in every lane
	case rem:
		return &quasi{base: base, w: uint8(p - a), d: s}
	case w == uint(x.w) && x.w == 0:
		return &quasi{base: base, s: 1} // t itself: p == a
	case w > 62:
		return nil
	}
	return &quasi{base: base, w: uint8(w), s: 1}
}

// withQuasi adds the form of x op y to res, when there is one.
func (c *compiler) withQuasi(res *ev[int64], op ir.BinOp, x, y *ev[int64]) *ev[int64] {
	if res.v == nil || c.mode != modeRow {
		return res
	}
	qx, qy := c.quasiOf(x), c.quasiOf(y)
	var q *quasi
	switch {
	case op == ir.Add || op == ir.Sub:
		k := int64(1)
		if op == ir.Sub {
			k = -1
		}
		switch {
		case qx != nil && qy != nil:
			q = quasiSum(qx, qy, k)
		case qx != nil && y.u != nil:
			q = quasiShift(qx, y, k)
		case qy != nil && x.u != nil:
			if k < 0 {
				qy = quasiScale(qy, -1)
			}
			q = quasiShift(qy, x, 1)
		}
	case op == ir.Mul && qx != nil && y.k != nil:
		q = quasiScale(qx, *y.k)
	case op == ir.Mul && qy != nil && x.k != nil:
		q = quasiScale(qy, *x.k)
	case op == ir.Shl && qx != nil && y.k != nil && uint64(*y.k) < 62:
		q = quasiScale(qx, 1<<*y.k)
	case (op == ir.Div || op == ir.Shr) && qx != nil && y.k != nil:
		if p, ok := pow2(op, *y.k); ok {
			q = quasiDiv(qx, p, false)
		}
	case (op == ir.Rem || op == ir.And) && qx != nil && y.k != nil:
		if p, ok := pow2(op, *y.k); ok {
			q = quasiDiv(qx, p, true)
		}
	}
	if q == nil || q.s == 0 && q.d == 0 && q.w == 0 && q != qx {
		return res
	}
	res.qa = q
	if res.lin == nil && q.w == 0 && q.s == 1 {
		// b + t: contiguous.
		qb, last := q.base, c.lastDim()
		res.lin = func(f *frame) (int64, bool) {
			b, ok := qb(f)
			return b + f.ix[last], ok
		}
	}
	return res
}

// pow2 is the p of a divisor 2^p (Div, Rem), a shift count p (Shr) or a
// mask 2^p-1 (And).
func pow2(op ir.BinOp, k int64) (uint, bool) {
	switch op {
	case ir.Shr:
		return uint(k), k >= 0 && k < 63
	case ir.And:
		k++
	}
	if k <= 0 || k&(k-1) != 0 {
		return 0, false
	}
	return uint(bits.TrailingZeros64(uint64(k))), true
}

// span is the least and greatest value of q over the lanes [lo, hi] of
// a batch whose lane 0 has index t0 (conservative: a column part is taken
// over its whole range when the lanes span several segments), and b.
func (q *quasi) span(f *frame, t0 int64, lo, hi int) (b, mn, mx int64, ok bool) {
	b, ok = q.base(f)
	if !ok {
		return 0, 0, 0, false
	}
	t1, t2 := t0+int64(lo), t0+int64(hi)
	if q.w == 0 {
		a, z := t1*q.s, t2*q.s
		return b, b + min(a, z), b + max(a, z), true
	}
	q1, q2 := t1>>q.w, t2>>q.w
	m := int64(1)<<q.w - 1
	r1, r2 := t1&m, t2&m
	if q1 != q2 {
		r1, r2 = 0, m
	}
	a, z := q1*q.s, q2*q.s
	e, g := r1*q.d, r2*q.d
	return b, b + min(a, z) + min(e, g), b + max(a, z) + max(e, g), true
}

// quasiRange is cmpRange for a form x compared with u: a lane set where
// x is monotone over the batch (no column part, or one segment), or the
// comparison the same on every lane.
func quasiRange(res *ev[bool], op ir.BinOp, q *quasi, u func(*frame) int64, flip bool, last int) {
	switch op {
	case ir.Lt, ir.Le, ir.Gt, ir.Ge, ir.Eq, ir.Ne:
	default:
		return
	}
	if flip { // u op x  ⇔  x op' u
		switch op {
		case ir.Lt:
			op = ir.Gt
		case ir.Le:
			op = ir.Ge
		case ir.Gt:
			op = ir.Lt
		case ir.Ge:
			op = ir.Le
		}
	}
	holds := func(v, u int64) bool {
		switch op {
		case ir.Lt:
			return v < u
		case ir.Le:
			return v <= u
		case ir.Gt:
			return v > u
		case ir.Ge:
			return v >= u
		case ir.Eq:
			return v == u
		}
		return v != u
	}
	res.rng = func(f *frame) (laneSet, bool) {
		n, t0 := f.n, f.ix[last]
		b, mn, mx, ok := q.span(f, t0, 0, n-1)
		if !ok {
			return laneSet{}, false
		}
		uv := u(f)
		all, none := laneSet{lo: 0, hi: n}, laneSet{}
		switch op {
		case ir.Eq, ir.Ne:
			switch {
			case uv < mn || uv > mx:
				none.inv = op == ir.Ne
				return none, true
			case mn == mx:
				all.inv = op == ir.Ne
				return all, true
			}
			return laneSet{}, false
		}
		// A threshold on the value: where the extremes agree, every lane
		// between them does.
		if lo := holds(mn, uv); lo == holds(mx, uv) {
			if lo {
				return all, true
			}
			return none, true
		}
		if q.w > 0 && q.d != 0 && t0>>q.w != (t0+int64(n-1))>>q.w {
			return laneSet{}, false // not monotone over the batch
		}
		// Monotone in k: the lanes where it holds lie on one side of the
		// first lane where it changes, found by bisection.
		val := func(k int) int64 { return quasiAt(q, b, t0+int64(k)) }
		first := holds(val(0), uv)
		k := bisect(n, func(k int) bool { return holds(val(k), uv) != first })
		if first {
			return laneSet{lo: 0, hi: k}, true
		}
		return laneSet{lo: k, hi: n}, true
	}
}

// quasiAt is q's value at index t, with base b.
func quasiAt(q *quasi, b, t int64) int64 {
	if q.w == 0 {
		return b + t*q.s
	}
	return b + (t>>q.w)*q.s + (t&(int64(1)<<q.w-1))*q.d
}

// bisect is the least k in [0, n) with p(k), or n; p is monotone.
func bisect(n int, p func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// withQuasiT is withQuasi for an integer result of any type: only i64
// values have forms.
func withQuasiT[T integer](c *compiler, res value, op ir.BinOp, x, y *ev[T]) value {
	r, ok := res.(*ev[int64])
	if !ok {
		return res
	}
	return c.withQuasi(r, op, any(x).(*ev[int64]), any(y).(*ev[int64]))
}

// quasiMulAdd adds to res, the integer x*s + o compiled as one operation
// (muladd.go), its form: s or o nil for none. It returns res.
func quasiMulAdd[T number](c *compiler, res value, x, s, o *ev[T]) value {
	r, ok := res.(*ev[int64])
	if !ok || r.v == nil {
		return res
	}
	x64, _ := any(x).(*ev[int64])
	if s != nil {
		s64 := any(s).(*ev[int64])
		if x64.u != nil { // s*x
			x64, s64 = s64, x64
		}
		p := c.withQuasi(&ev[int64]{v: r.v}, ir.Mul, x64, s64)
		if o == nil {
			r.qa = p.qa
			return res
		}
		x64 = p
	}
	if q := c.withQuasi(&ev[int64]{v: r.v}, ir.Add, x64, any(o).(*ev[int64])); q.qa != nil {
		r.qa = q.qa
		if r.lin == nil {
			r.lin = q.lin
		}
	}
	return res
}

// quasiCmp adds to res, the comparison x op y, the lane set of a form
// compared with a uniform value.
func quasiCmp[T integer](c *compiler, res *ev[bool], op ir.BinOp, x, y *ev[T]) {
	x64, ok := any(x).(*ev[int64])
	if !ok || c.mode != modeRow {
		return
	}
	y64 := any(y).(*ev[int64])
	switch {
	case x64.qa != nil && y64.u != nil:
		quasiRange(res, op, x64.qa, y64.u, false, c.lastDim())
	case y64.qa != nil && x64.u != nil:
		quasiRange(res, op, y64.qa, x64.u, true, c.lastDim())
	}
}
