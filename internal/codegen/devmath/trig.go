package devmath

import "math"

// ---- sin, cos, tan ----
//
// Reduction x = k·π/2 + r, r a double-double (rh + rl) with |r| ≤ π/4 (1+ε):
//
//   - |x| < 2^27: Cody–Waite with three parts of π/2 (P1 = RN(π/2), P2, P3;
//     160 bits in all). r1 = x − k·P1 is exact in one fma (it is a multiple
//     of 2^-53 below 1 in magnitude); k·P2 is split exactly by an fma and
//     subtracted with twoSum; k·P3 only feeds the low part. The error is
//     below 2^-120 absolute, far under the smallest |r| of any double
//     (~2^-61), so r is correct to ~2^-100 relative even next to k·π/2.
//   - |x| ≥ 2^27 (finite): Payne–Hanek in 64-bit integers. x = m·2^e
//     (m < 2^53). Bits of 2/π with weights above 2^(2-e) contribute
//     multiples of 4 to x·2/π and are skipped; a 192-bit window W starting
//     at bit e−1 gives x·2/π mod 4 = low 192 bits of m·W, scaled by 2^-190.
//     The top 2 bits are k mod 4, the next 128 the fraction (rounded to
//     nearest by reading it as signed), truncation error < 2^-130. The
//     fraction is normalised with clz and multiplied by π/2 (double-double).
//     The window's four words are picked out of a 20-word table of 2/π by a
//     chain of selp on immediates, so the function needs no global memory.
//
// Kernels on |r| ≤ π/4, Taylor series (first omitted term < 2^-66 relative):
//
//	sin r = r + r³·S(r²), S = −1/3! + r²/5! − … + r^16/19!
//	cos r = 1 − r²/2 + r⁴·C(r²), C = 1/4! − … + r^14/18!
//
// Both are produced as double-doubles (the big term plus a small tail,
// including rl's first-order effect), so tan = sin/cos is corrected with one
// fma residual and stays within ~0.6 ulp.

type trigKind int

const (
	trigSin trigKind = iota
	trigCos
	trigTan
)

var sinS = func() []float64 {
	c := make([]float64, 9)
	for i := range c {
		c[i] = invFact(2*i + 3)
		if i%2 == 0 {
			c[i] = -c[i]
		}
	}
	return c
}()

var cosC = func() []float64 {
	c := make([]float64, 8)
	for i := range c {
		c[i] = invFact(2*i + 4)
		if i%2 == 1 {
			c[i] = -c[i]
		}
	}
	return c
}()

const phThreshold = 0x1p27

// reducePio2 returns r = rh + rl and the quadrant n (b64, 0..3) with
// x = k·π/2 + r, k ≡ n mod 4.
func (b *builder) reducePio2(x v) (rh, rl, n v) {
	k := consts()
	p1, p2, p3 := c64(k.pio2[0]), c64(k.pio2[1]), c64(k.pio2[2])
	kf := b.rni(b.mul(x, c64(2/math.Pi)))
	r1 := b.fma(b.neg(kf), p1, x)
	q2 := b.mul(kf, p2)
	q2e := b.fma(kf, p2, b.neg(q2))
	s, se := b.twoSum(r1, b.neg(q2))
	lo := b.sub(b.sub(se, q2e), b.mul(kf, p3))
	h, l := b.fastTwoSum(s, lo)
	rh, rl = b.reg(kF64), b.reg(kF64)
	b.set(rh, h)
	b.set(rl, l)
	// kf is exact below 2^27; mod 4 through the integer conversion
	n = b.reg(kB64)
	b.set(n, b.iand(b.f64ToI64(b.sel(b.fsetp("lt", b.abs(x), c64(phThreshold)), kf, c64(0))), u64(3)))

	ax := b.abs(x)
	big := b.and(b.fsetp("ge", ax, c64(phThreshold)), b.fsetp("lt", ax, inf64))
	done := b.newLabel()
	b.braIf(big, true, done)
	ph, pl, pn := b.payneHanek(x)
	b.set(rh, ph)
	b.set(rl, pl)
	b.set(n, pn)
	b.label(done)
	return
}

// payneHanek reduces a finite |x| ≥ 2^27 (see the comment at the top).
func (b *builder) payneHanek(x v) (rh, rl, n v) {
	k := consts()
	u := b.iand(b.bitsOf(x), u64(0x7FFFFFFFFFFFFFFF))
	m := b.ior(b.iand(u, u64(0x000FFFFFFFFFFFFF)), u64(1<<52))
	// t0 = e + 62 with e = biased − 1075: bit index in the zero-padded table.
	t0 := b.lo32(b.isub(b.shr(u, u32(52)), i64(1075-62)))
	q := b.op("shr.u32", kB32, t0, u32(6))
	sh := b.op("and.b32", kB32, t0, u32(63))
	rsh := b.isub32(u32(64), sh)
	var w [4]v
	for i := range w {
		w[i] = u64(0)
	}
	for j := 0; j <= 16; j++ {
		p := b.isetp("eq", "u32", q, u32(uint32(j)))
		for i := range w {
			w[i] = b.sel(p, u64(k.twoOverPi[j+i]), w[i])
		}
	}
	win := func(i int) v { return b.ior(b.shl(w[i], sh), b.shr(w[i+1], rsh)) }
	w2, w1, w0 := win(0), win(1), win(2)
	// low 192 bits of m·(w2:w1:w0)
	l0 := b.mulLo(m, w0)
	h0 := b.mulHi(m, w0)
	l1 := b.mulLo(m, w1)
	h1 := b.mulHi(m, w1)
	l2 := b.mulLo(m, w2)
	p1 := b.iadd(h0, l1)
	carry := b.sel(b.isetp("lt", "u64", p1, h0), u64(1), u64(0))
	p2 := b.iadd(b.iadd(h1, l2), carry)
	// integer part mod 4 and the 128-bit fraction (fh:fl), read as signed
	fh := b.ior(b.shl(p2, u32(2)), b.shr(p1, u32(62)))
	fl := b.ior(b.shl(p1, u32(2)), b.shr(l0, u32(62)))
	negf := b.isetp("lt", "s64", fh, i64(0))
	n = b.iand(b.iadd(b.shr(p2, u32(62)), b.shr(fh, u32(63))), u64(3))
	// |fraction|: two's complement negate of the 128-bit value when negative
	nfl := b.op("neg.s64", kB64, fl)
	nfh := b.iadd(b.inot(fh), b.sel(b.isetp("eq", "u64", fl, u64(0)), u64(1), u64(0)))
	fh = b.sel(negf, nfh, fh)
	fl = b.sel(negf, nfl, fl)
	lz := b.clz(fh)
	nrm := b.ior(b.shl(fh, lz), b.shr(fl, b.isub32(u32(64), lz)))
	// |f| = nrm·2^-(64+lz) = a·2^-(53+lz) + c·2^-(64+lz), a and c exact
	a := b.u64ToF64(b.shr(nrm, u32(11)))
	cc := b.u64ToF64(b.iand(nrm, u64(0x7FF)))
	lz64 := b.op("cvt.u64.u32", kB64, lz)
	sa := b.fromBits(b.shl(b.isub(i64(1023-53), lz64), u32(52)))
	fa := b.mul(a, sa)
	fc := b.mul(b.mul(cc, sa), c64(0x1p-11))
	// r = f·π/2 as a double-double
	hi := b.mul(fa, c64(k.pio2[0]))
	lo := b.add(b.fma(fa, c64(k.pio2[0]), b.neg(hi)), b.fma(fa, c64(k.pio2[1]), b.mul(fc, c64(k.pio2[0]))))
	rh, rl = b.fastTwoSum(hi, lo)
	rh = b.sel(negf, b.neg(rh), rh)
	rl = b.sel(negf, b.neg(rl), rl)
	// x < 0: r → −r, k → −k
	xneg := b.fsetp("lt", x, c64(0))
	rh = b.sel(xneg, b.neg(rh), rh)
	rl = b.sel(xneg, b.neg(rl), rl)
	n = b.sel(xneg, b.iand(b.op("neg.s64", kB64, n), u64(3)), n)
	return
}

// sinCosDD returns sin r and cos r as double-doubles.
func (b *builder) sinCosDD(rh, rl v) (sh, sl, ch, cl v) {
	z := b.mul(rh, rh)
	ze := b.fma(rh, rh, b.neg(z))
	// sin: rh + (rh·z·S(z) + rl·(1 − z/2))
	st := b.fma(b.mul(rh, z), b.poly(z, sinS), b.fma(b.mul(c64(-0.5), z), rl, rl))
	sh, sl = b.fastTwoSum(rh, st)
	// cos: w = 1 − z/2 (rounded), tail = ((1−w) − z/2) + z²C(z) − ze/2 − rh·rl
	hz := b.mul(z, c64(0.5))
	w := b.sub(c64(1), hz)
	tail := b.sub(b.sub(c64(1), w), hz)
	corr := b.sub(b.mul(b.mul(z, z), b.poly(z, cosC)), b.fma(ze, c64(0.5), b.mul(rh, rl)))
	ch, cl = b.fastTwoSum(w, b.add(tail, corr))
	return
}

func buildTrig(b *builder, x v, tk trigKind) v {
	rh, rl, n := b.reducePio2(x)
	sh, sl, ch, cl := b.sinCosDD(rh, rl)
	odd := b.isetp("ne", "u64", b.iand(n, u64(1)), u64(0))
	var r v
	switch tk {
	case trigSin, trigCos:
		s := b.add(sh, sl)
		c := b.add(ch, cl)
		var neg v
		if tk == trigSin {
			r = b.sel(odd, c, s)
			neg = b.isetp("ne", "u64", b.iand(n, u64(2)), u64(0))
		} else {
			r = b.sel(odd, s, c)
			neg = b.isetp("ne", "u64", b.iand(b.iadd(n, u64(1)), u64(2)), u64(0))
		}
		r = b.sel(neg, b.neg(r), r)
	case trigTan:
		// even quadrant: sin/cos; odd: −cos/sin
		nh, nl := b.sel(odd, ch, sh), b.sel(odd, cl, sl)
		dh, dl := b.sel(odd, sh, ch), b.sel(odd, sl, cl)
		q := b.div(nh, dh)
		res := b.sub(b.add(b.fma(b.neg(q), dh, nh), nl), b.mul(q, dl))
		r = b.add(q, b.div(res, dh))
		r = b.sel(odd, b.neg(r), r)
	}
	if tk != trigCos {
		r = b.sel(b.fsetp("lt", b.abs(x), c64(0x1p-27)), x, r) // sin x = tan x = x (keeps −0)
	}
	return b.sel(b.fsetp("equ", b.abs(x), inf64), nan64, r) // ±Inf, NaN → NaN
}
