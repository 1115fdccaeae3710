package devmath

import "math"

// ---- shared double-double helpers (Knuth/Dekker error-free transforms) ----

// twoSum returns s = RN(a+b) and the exact error e = a+b-s (Knuth, 6 ops).
func (b *builder) twoSum(x, y v) (s, e v) {
	s = b.add(x, y)
	bb := b.sub(s, x)
	e = b.add(b.sub(x, b.sub(s, bb)), b.sub(y, bb))
	return
}

// fastTwoSum is twoSum for |x| ≥ |y| (Dekker, 3 ops).
func (b *builder) fastTwoSum(x, y v) (s, e v) {
	s = b.add(x, y)
	e = b.sub(y, b.sub(s, x))
	return
}

// poly evaluates c[0] + x*(c[1] + x*(c[2] + ...)) by Horner's rule with fma.
func (b *builder) poly(x v, c []float64) v {
	acc := c64(c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		acc = b.fma(acc, x, c64(c[i]))
	}
	return acc
}

// pow2 returns 2^k for an integral f64 k in [-1022, 1023], built from bits.
func (b *builder) pow2(kf v) v {
	return b.fromBits(b.shl(b.iadd(b.f64ToI64(kf), i64(1023)), u32(52)))
}

// scale returns x·2^k for integral k with |k| ≤ 2044 by two exact power-of-two
// multiplications, so that an underflowing result is rounded only once.
func (b *builder) scale(x, kf v) v {
	k1 := b.rmi(b.mul(kf, c64(0.5)))
	k2 := b.sub(kf, k1)
	return b.mul(b.mul(x, b.pow2(k1)), b.pow2(k2))
}

// copysign returns |x| with the sign of s.
func (b *builder) copysign(x, s v) v {
	m := b.iand(b.bitsOf(x), u64(0x7FFFFFFFFFFFFFFF))
	sg := b.iand(b.bitsOf(s), u64(0x8000000000000000))
	return b.fromBits(b.ior(m, sg))
}

func (b *builder) isNaN(x v) v { return b.fsetp("nan", x, x) }

// clamp limits x to [-lim, lim]; NaN stays NaN (ordered compares are false).
func (b *builder) clamp(x v, lim float64) v {
	x = b.sel(b.fsetp("gt", x, c64(lim)), c64(lim), x)
	return b.sel(b.fsetp("lt", x, c64(-lim)), c64(-lim), x)
}

var (
	nan64 = bits64(0x7FF8000000000000)
	inf64 = c64(math.Inf(1))
)

// ---- exp family ----
//
// Reduction (Cody–Waite with an FMA): k = rint(x·log2 e), t = x − k·ln2hi is
// exact (ln2hi has 42 bits, |k| < 2^11, Sterbenz), c = xlo − k·ln2lo is the
// tiny rest, |t| ≤ ln2/2 + ε. Then exp(t+c) = (1 + q)(1 + c) + O(c²), where
// q = expm1(t) is the Taylor series t + t²(1/2! + t/3! + … + t^11/13!); the
// first omitted term is (ln2/2)^14/14! < 2^-56·|q|, so the truncation error
// is below 1/40 ulp. Scaling by 2^k is exact (see scale).

// expm1Taylor holds 1/2!, 1/3!, …, 1/13!.
var expm1Taylor = func() []float64 {
	c := make([]float64, 12)
	for i := range c {
		c[i] = invFact(i + 2)
	}
	return c
}()

// expReduce returns t, c, k for exp(x + xlo) = 2^k·exp(t + c).
func (b *builder) expReduce(x, xlo v) (t, c, kf v) {
	k := consts()
	kf = b.rni(b.mul(x, c64(k.log2e[0])))
	t = b.fma(kf, c64(-k.ln2[0]), x)
	c = b.fma(kf, c64(-k.ln2[1]), xlo)
	return
}

// expPoly returns qq ≈ expm1(t + c) = q + c(1 + q), |t| ≤ 0.347, |c| < 2^-30.
func (b *builder) expPoly(t, c v) v {
	t2 := b.mul(t, t)
	q := b.fma(t2, b.poly(t, expm1Taylor), t) // t + t²R(t): t exact, t²R ≤ 20% of q
	return b.add(q, b.fma(c, q, c))
}

func buildExp(b *builder, x v) v {
	xc := b.clamp(x, 1100) // exp(±1100) over/underflows; keeps k within scale's range
	t, c, kf := b.expReduce(xc, c64(0))
	p := b.add(c64(1), b.expPoly(t, c))
	r := b.scale(p, kf)
	return b.sel(b.isNaN(x), x, r)
}

// exp2: k = rint(x), t0 = x − k exactly (|t0| ≤ 1/2), then exp(t0·ln2) with
// t0·ln2 formed as a double-double by an FMA.
func buildExp2(b *builder, x v) v {
	k := consts()
	xc := b.clamp(x, 1100)
	kf := b.rni(xc)
	t0 := b.sub(xc, kf)
	uh := b.mul(t0, c64(k.ln2d[0]))
	ul := b.fma(t0, c64(k.ln2d[1]), b.fma(t0, c64(k.ln2d[0]), b.neg(uh)))
	p := b.add(c64(1), b.expPoly(uh, ul))
	r := b.scale(p, kf)
	return b.sel(b.isNaN(x), x, r)
}

// expm1Pos returns expm1(x) for 0 ≤ x ≤ 44: with s = 2^k, expm1 = (s−1) + s·qq
// in one fma (s−1 is exact for k ≤ 53), so there is no cancellation.
func (b *builder) expm1Pos(x v) v {
	t, c, kf := b.expReduce(x, c64(0))
	qq := b.expPoly(t, c)
	s := b.pow2(kf)
	return b.fma(s, qq, b.sub(s, c64(1)))
}

// tanh |x| = E/(E+2), E = expm1(2|x|). The quotient is corrected once with
// an fma residual, which also absorbs the rounding of E+2 (kept as a
// double-double), leaving E's error (≤ 1 ulp, damped by 2/(E+2) ≤ 1).
// tanh(22) rounds to 1, so |x| is clamped there; |x| < 2^-28 returns x.
func buildTanh(b *builder, x v) v {
	a := b.abs(x)
	ac := b.sel(b.fsetp("gt", a, c64(22)), c64(22), a)
	e := b.expm1Pos(b.add(ac, ac))
	dh, dl := b.twoSum(e, c64(2))
	t := b.div(e, dh)
	res := b.sub(b.fma(b.neg(t), dh, e), b.mul(t, dl))
	t = b.add(t, b.div(res, dh))
	r := b.copysign(t, x)
	r = b.sel(b.fsetp("lt", a, c64(0x1p-28)), x, r)
	return b.sel(b.isNaN(x), x, r)
}

// sinhTaylor holds 1/3!, 1/5!, …, 1/19!: for |x| < 1 the first omitted term
// x^21/21! is below 2^-65·|x|.
var sinhTaylor = func() []float64 {
	c := make([]float64, 9)
	for i := range c {
		c[i] = invFact(2*i + 3)
	}
	return c
}()

// sinh and cosh share one evaluation of P = exp(|x|)/2^k as a double-double
// (1 + qq split exactly): cosh = 2^(k−1)(P + 2^(−2k)/P), sinh likewise with a
// minus sign for |x| ≥ 1 (cancellation at most 1.31×). Scaling by 2^(k−1)
// last means cosh and sinh stay finite up to 710.47 (where exp(x) alone
// would overflow). |x| is clamped to 1100, which overflows to Inf.
func (b *builder) hyper(x v, cosh bool) v {
	a := b.abs(x)
	ac := b.sel(b.fsetp("gt", a, c64(1100)), c64(1100), a)
	t, c, kf := b.expReduce(ac, c64(0))
	qq := b.expPoly(t, c)
	ph, pl := b.fastTwoSum(c64(1), qq)
	m := b.sel(b.fsetp("gt", kf, c64(60)), c64(60), kf)
	inv := b.div(b.pow2(b.mul(m, c64(-2))), ph)
	var inner v
	if cosh {
		inner = b.add(ph, b.add(pl, inv))
	} else {
		inner = b.add(ph, b.sub(pl, inv))
	}
	r := b.scale(inner, b.sub(kf, c64(1)))
	if cosh {
		return b.sel(b.isNaN(x), x, r)
	}
	z := b.mul(a, a)
	small := b.fma(b.mul(a, z), b.poly(z, sinhTaylor), a)
	r = b.sel(b.fsetp("lt", a, c64(1)), small, r)
	r = b.copysign(r, x)
	return b.sel(b.isNaN(x), x, r)
}

func buildSinh(b *builder, x v) v { return b.hyper(x, false) }
func buildCosh(b *builder, x v) v { return b.hyper(x, true) }
