package devmath

import "math"

// ---- atan, atan2, asin, acos ----
//
// All four reduce to atanCore(y) for a double-double y in [0, 1]:
// j = rint(8y), c = j/8, and
//
//	atan y = atan(c) + atan(v),  v = (y − c)/(1 + y·c),  |v| ≤ 1/16 + ε,
//
// with atan(j/8) as double-doubles computed with math/big (consts.go).
// y − c is exact; v gets an fma residual correction so it is a
// double-double too. atan v = v + v³·Q(v²), Q = −1/3 + v²/5 − … − v^14/15
// (Taylor; the first omitted term v^17/17 < 2^-70·|v|). The sum is kept as a
// double-double, so callers can form π/2 − atan, π − atan without
// cancellation and round once (≤ ~0.6 ulp measured).

var atanQ = func() []float64 {
	c := make([]float64, 7)
	for i := range c {
		c[i] = 1 / float64(2*i+3)
		if i%2 == 0 {
			c[i] = -c[i]
		}
	}
	return c
}()

// atanCore returns atan(yh + yl) as a double-double for yh in [0, 1].
func (b *builder) atanCore(yh, yl v) (rh, rl v) {
	k := consts()
	jf := b.rni(b.mul(yh, c64(8)))
	c := b.mul(jf, c64(0.125))
	num0 := b.sub(yh, c)                // exact
	num, nerr := b.fastTwoSum(num0, yl) // |yl| is tiny next to |num0| unless num0 = 0, when it is exact
	den := b.fma(yh, c, c64(1))
	derr := b.fma(yh, c, b.sub(c64(1), den)) // rounding error of den (1 − den is exact)
	vh := b.div(num, den)
	vres := b.sub(b.add(b.fma(b.neg(vh), den, num), nerr), b.mul(vh, derr))
	vl := b.div(vres, den)
	// atan(c) from the table, by selp on j
	ah, al := c64(0), c64(0)
	for j := 1; j <= 8; j++ {
		p := b.fsetp("eq", jf, c64(float64(j)))
		ah = b.sel(p, c64(k.atanJ[j][0]), ah)
		al = b.sel(p, c64(k.atanJ[j][1]), al)
	}
	z := b.mul(vh, vh)
	tail := b.fma(b.mul(vh, z), b.poly(z, atanQ), vl) // atan v − vh
	sh, se := b.twoSum(ah, vh)
	return b.fastTwoSum(sh, b.add(se, b.add(al, tail)))
}

// ddAdd returns (xh+xl) + (yh+yl) rounded to a double (twoSum on the heads).
func (b *builder) ddAdd(xh, xl, yh, yl v) v {
	s, e := b.twoSum(xh, yh)
	return b.add(s, b.add(e, b.add(xl, yl)))
}

// buildAtan: |x| > 1 uses atan x = π/2 − atan(1/x), with 1/x a double-double.
func buildAtan(b *builder, x v) v {
	k := consts()
	a := b.abs(x)
	inv := b.fsetp("gt", a, c64(1))
	ih := b.div(c64(1), a)
	il := b.div(b.fma(b.neg(ih), a, c64(1)), a)
	il = b.sel(b.fsetp("eq", a, inf64), c64(0), il)
	yh := b.sel(inv, ih, a)
	yl := b.sel(inv, il, c64(0))
	rh, rl := b.atanCore(yh, yl)
	// inv: π/2 − atan(y)
	ph := b.ddAdd(c64(k.pio2[0]), c64(k.pio2[1]), b.neg(rh), b.neg(rl))
	r := b.sel(inv, ph, b.add(rh, rl))
	r = b.copysign(r, x)
	return b.sel(b.isNaN(x), x, r)
}

// buildAtan2 follows Go's math.Atan2 special cases: NaN → NaN; y = ±0 →
// ±0 (x ≥ +0) or ±π (x ≤ −0); both infinite → ±π/4 or ±3π/4; x = ±Inf →
// ±0 or ±π; y = ±Inf or x = 0 → ±π/2. The general case takes
// t = min/max of |x|, |y| as a double-double, atanCore(t), then π/2 − · when
// |y| > |x| and π − · when x has its sign bit set, each as a double-double,
// and finally the sign of y.
func buildAtan2(b *builder, y, x v) v {
	k := consts()
	ax, ay := b.abs(x), b.abs(y)
	swap := b.fsetp("gt", ay, ax)
	mn := b.sel(swap, ax, ay)
	mx := b.sel(swap, ay, ax)
	th := b.div(mn, mx)
	tl := b.div(b.fma(b.neg(th), mx, mn), mx)
	bothInf := b.and(b.fsetp("eq", ax, inf64), b.fsetp("eq", ay, inf64))
	zero := b.fsetp("eq", mx, c64(0))
	th = b.sel(bothInf, c64(1), b.sel(zero, c64(0), th))
	mxInf := b.fsetp("eq", mx, inf64)
	tl = b.sel(b.or(bothInf, b.or(zero, mxInf)), c64(0), tl)
	rh, rl := b.atanCore(th, tl)
	// swap: π/2 − r
	sh, se := b.twoSum(c64(k.pio2[0]), b.neg(rh))
	sl := b.add(se, b.sub(c64(k.pio2[1]), rl))
	sh, sl = b.fastTwoSum(sh, sl)
	rh = b.sel(swap, sh, rh)
	rl = b.sel(swap, sl, rl)
	// x negative (sign bit): π − r
	xneg := b.isetp("lt", "s64", b.bitsOf(x), i64(0))
	pm := b.ddAdd(c64(k.pi[0]), c64(k.pi[1]), b.neg(rh), b.neg(rl))
	r := b.sel(xneg, pm, b.add(rh, rl))
	r = b.copysign(r, y)
	return b.sel(b.or(b.isNaN(x), b.isNaN(y)), nan64, r)
}

// buildAsinAcos: with a = |x| and s = √(1 − a²) as a double-double
// (1 − a² exact from an fma split, then one Newton step on √):
//
//	a ≤ 1/√2:  R = atan(a/s),  asin a = R,        acos a = π/2 − R
//	a > 1/√2:  R = atan(s/a),  asin a = π/2 − R,  acos a = R
//
// so the atan argument is in [0, 1] and nothing cancels; for x < 0,
// asin(x) = −asin(a) and acos(x) = π − acos(a). |x| > 1 and NaN give NaN.
func buildAsinAcos(b *builder, x v, acos bool) v {
	k := consts()
	a := b.abs(x)
	a2 := b.mul(a, a)
	a2e := b.fma(a, a, b.neg(a2))
	dh, de := b.fastTwoSum(c64(1), b.neg(a2))
	dl := b.sub(de, a2e)
	sh := b.sqrt(dh)
	sl := b.div(b.add(b.fma(b.neg(sh), sh, dh), dl), b.add(sh, sh))
	sl = b.sel(b.fsetp("eq", sh, c64(0)), c64(0), sl)
	small := b.fsetp("le", a, c64(math.Sqrt2/2))
	// y = a/s (small) or s/a (large), as double-doubles
	q1 := b.div(a, sh)
	q1l := b.div(b.sub(b.fma(b.neg(q1), sh, a), b.mul(q1, sl)), sh)
	q2 := b.div(sh, a)
	q2l := b.div(b.add(b.fma(b.neg(q2), a, sh), sl), a)
	yh := b.sel(small, q1, q2)
	yl := b.sel(small, q1l, q2l)
	rh, rl := b.atanCore(yh, yl)
	pio2h, pio2l := c64(k.pio2[0]), c64(k.pio2[1])
	var r v
	if !acos {
		r = b.sel(small, b.add(rh, rl), b.ddAdd(pio2h, pio2l, b.neg(rh), b.neg(rl)))
		r = b.copysign(r, x)
	} else {
		// x ≥ 0: small → π/2 − R, large → R; x < 0: small → π/2 + R, large → π − R
		xneg := b.fsetp("lt", x, c64(0))
		baseH := b.sel(small, pio2h, b.sel(xneg, c64(k.pi[0]), c64(0)))
		baseL := b.sel(small, pio2l, b.sel(xneg, c64(k.pi[1]), c64(0)))
		plus := b.and(small, xneg)
		sgnH := b.sel(plus, rh, b.neg(rh))
		sgnL := b.sel(plus, rl, b.neg(rl))
		sgnH = b.sel(b.and(b.not(small), b.not(xneg)), rh, sgnH)
		sgnL = b.sel(b.and(b.not(small), b.not(xneg)), rl, sgnL)
		r = b.ddAdd(baseH, baseL, sgnH, sgnL)
	}
	return b.sel(b.fsetp("gtu", a, c64(1)), nan64, r) // |x| > 1 or NaN
}
