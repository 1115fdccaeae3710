package devmath

import "math"

// ---- log family and pow ----
//
// x = 2^e·m with m in [√½, √2) (fdlibm's bit trick: add 0x95F62 to the high
// word so that the exponent carries exactly when the mantissa ≥ √2; subnormals
// are first scaled by 2^54). With f = m − 1 (exact, Sterbenz) and
// s = f/(2+f), |s| ≤ 0.1716:
//
//	log m = 2 atanh s = 2s + s³·A(s²),  A(z) = 2/3 + 2z/5 + 2z²/7 + …
//
// Everything is kept as a double-double: s (residual by fma), s³ (exact
// products), A's constant term 2/3 (double-double) plus z·B(z) (double, it
// is < 2% of A), and the sums. B has 11 terms (up to 2z^10/23); the first
// omitted term s^25·2/25 is < 2^-65·|2s|. The result log m has a relative
// error near 2^-64, which pow needs (|y·log x| ≤ 745 must be known to
// ~2^-62 absolute); log, log2 and log10 then round the double-double once.

// logB holds 2/5, 2/7, …, 2/25.
var logB = func() []float64 {
	c := make([]float64, 11)
	for i := range c {
		c[i] = 2 / float64(2*i+5)
	}
	return c
}()

// logm returns e (as f64) and log(m) as a double-double for finite x > 0.
func (b *builder) logm(x v) (e, lh, ll v) {
	sub := b.fsetp("lt", x, c64(0x1p-1022))
	xs := b.sel(sub, b.mul(x, c64(0x1p54)), x)
	eb := b.sel(sub, c64(-54), c64(0))
	u := b.iadd(b.bitsOf(xs), u64(0x95F62<<32))
	e = b.add(b.i64ToF64(b.isub(b.shr(u, u32(52)), i64(1023))), eb)
	m := b.fromBits(b.iadd(b.iand(u, u64(0x000FFFFFFFFFFFFF)), u64(0x3FE6A09E<<32)))
	f := b.sub(m, c64(1))

	// s = f/(2+f) as a double-double.
	dh, dl := b.fastTwoSum(c64(2), f)
	sh := b.div(f, dh)
	sl := b.div(b.sub(b.fma(b.neg(sh), dh, f), b.mul(sh, dl)), dh)

	// s³ exactly enough: z = sh² (+zl), s3 = sh·z + 3z·sl.
	zh := b.mul(sh, sh)
	zl := b.fma(sh, sh, b.neg(zh))
	s3h := b.mul(sh, zh)
	s3l := b.add(b.fma(sh, zh, b.neg(s3h)), b.fma(sh, zl, b.mul(b.mul(c64(3), zh), sl)))

	// A = 2/3 + z·B(z) as a double-double.
	zb := b.mul(zh, b.poly(zh, logB))
	ah, al := b.fastTwoSum(c64(twoThirdsHi), zb)
	al = b.add(al, c64(twoThirdsLo))

	// T = s3·A.
	th := b.mul(s3h, ah)
	tl := b.add(b.fma(s3h, ah, b.neg(th)), b.fma(s3h, al, b.mul(s3l, ah)))

	// log m = 2s + T.
	hh, hl := b.fastTwoSum(b.add(sh, sh), th)
	lo := b.add(hl, b.add(b.add(sl, sl), tl))
	lh, ll = b.fastTwoSum(hh, lo)
	return
}

// twoThirdsHi + twoThirdsLo is 2/3 as a double-double.
const twoThirdsHi = 2.0 / 3

var twoThirdsLo = func() float64 {
	// 2/3 − RN(2/3) = (2 − 3·RN(2/3))/3, and 2 − 3·RN(2/3) is exact in an fma.
	return math.FMA(-3, twoThirdsHi, 2) / 3
}()

type logKind int

const (
	logE logKind = iota
	log2
	log10
)

// logDD returns log_base(x) as a double-double for finite x > 0:
//
//	ln:    e·ln2 + L       (ln2 = hi + lo, hi 42 bits so e·hi is exact)
//	log2:  e + L·log2(e)
//	log10: e·log10(2) + L·log10(e)
func (b *builder) logDD(x v, lk logKind) (rh, rl v) {
	k := consts()
	e, lh, ll := b.logm(x)
	var ch, cl v // e·C as a double-double
	switch lk {
	case logE:
		ch, cl = b.mul(e, c64(k.ln2[0])), b.mul(e, c64(k.ln2[1]))
	case log2:
		ch, cl = e, c64(0)
	case log10:
		ch, cl = b.mul(e, c64(k.lg2[0])), b.mul(e, c64(k.lg2[1]))
	}
	if lk != logE {
		f := k.log2e
		if lk == log10 {
			f = k.log10e
		}
		ph := b.mul(lh, c64(f[0]))
		pl := b.add(b.fma(lh, c64(f[0]), b.neg(ph)), b.fma(lh, c64(f[1]), b.mul(ll, c64(f[0]))))
		lh, ll = ph, pl
	}
	sh, se := b.twoSum(ch, lh)
	lo := b.add(se, b.add(cl, ll))
	return b.fastTwoSum(sh, lo)
}

// buildLog: special cases as Go's math.Log: log(±0) = −Inf, log(x<0) = NaN,
// log(+Inf) = +Inf, log(NaN) = NaN.
func buildLog(b *builder, x v, lk logKind) v {
	rh, rl := b.logDD(x, lk)
	r := b.add(rh, rl)
	r = b.sel(b.fsetp("eq", x, inf64), inf64, r)
	r = b.sel(b.fsetp("eq", x, c64(0)), c64(math.Inf(-1)), r)
	r = b.sel(b.fsetp("ltu", x, c64(0)), nan64, r) // x < 0 or NaN
	return r
}

// isOddInt reports whether y is an odd integer (|y| < 2^53; larger doubles
// are even). isInt reports whether finite y is an integer.
func (b *builder) intTests(y v) (isInt, isOdd v) {
	isInt = b.fsetp("eq", b.rzi(y), y) // false for NaN and ±Inf? rzi(Inf)=Inf: caller excludes Inf
	h := b.mul(y, c64(0.5))
	isOdd = b.and(isInt, b.fsetp("neu", b.rzi(h), h))
	return
}

// buildPow computes exp(y·log|x|) with log|x| as a double-double (≈2^-64
// relative) and the product y·log|x| as a double-double (one fma), so the
// argument of exp is known to ~2^-62 absolute even at |y·log x| = 745; exp of
// a double-double is exp's algorithm with the low part folded into c. The
// special cases follow Go's math.Pow exactly, applied as overrides in the
// reverse order of Go's switch so that earlier cases win:
//
//	y = ±0 or x = 1 → 1; y = 1 → x; NaN → NaN; x = ±0 → ±Inf/±0;
//	y = ±Inf → 1 (x = −1), 0 or +Inf; x = ±Inf → via Pow(1/x, −y);
//	y = ±½ → Sqrt(x), 1/Sqrt(x) (Go does this, so we do too: bit-identical);
//	x < 0 finite and y finite non-integer → NaN; x < 0, y odd → −|x|^y.
func buildPow(b *builder, x, y v) v {
	ax := b.abs(x)
	gh, gl := b.logDD(ax, logE)
	ph := b.mul(y, gh)
	pl := b.fma(y, gl, b.fma(y, gh, b.neg(ph)))
	// Out of exp's range (or ±Inf/NaN from y·log): let exp over/underflow.
	big := b.not(b.fsetp("lt", b.abs(ph), c64(1100)))
	pl = b.sel(big, c64(0), pl)
	phc := b.clamp(ph, 1100)
	t, c, kf := b.expReduce(phc, pl)
	r := b.scale(b.add(c64(1), b.expPoly(t, c)), kf)

	isInt, isOdd := b.intTests(y)
	xneg := b.fsetp("lt", x, c64(0))
	r = b.sel(b.and(xneg, isOdd), b.neg(r), r)
	r = b.sel(b.and(xneg, b.not(isInt)), nan64, r)

	// y = ±½
	sq := b.sqrt(x)
	r = b.sel(b.fsetp("eq", y, c64(0.5)), sq, r)
	r = b.sel(b.fsetp("eq", y, c64(-0.5)), b.div(c64(1), sq), r)

	// x = ±0 or ±Inf: magnitude Inf or 0, negative only for x with the sign
	// bit set and y an odd integer.
	sgnx := b.isetp("lt", "s64", b.bitsOf(x), i64(0))
	negOdd := b.and(sgnx, isOdd)
	ypos := b.fsetp("gt", y, c64(0))
	zInf := b.sel(ypos, c64(0), inf64) // x = ±0
	iInf := b.sel(ypos, inf64, c64(0)) // x = ±Inf
	xinf := b.fsetp("eq", ax, inf64)
	r = b.sel(xinf, b.sel(negOdd, b.neg(iInf), iInf), r)

	// y = ±Inf
	yinf := b.fsetp("eq", b.abs(y), inf64)
	lt1 := b.fsetp("lt", ax, c64(1))
	yp := b.fsetp("gt", y, c64(0))
	ne := b.xorPred(lt1, yp) // Go: (|x| < 1) == (y = +Inf) → 0, else +Inf
	vy := b.sel(ne, inf64, c64(0))
	vy = b.sel(b.fsetp("eq", x, c64(-1)), c64(1), vy)
	r = b.sel(yinf, vy, r)

	r = b.sel(b.fsetp("eq", x, c64(0)), b.sel(negOdd, b.neg(zInf), zInf), r)
	r = b.sel(b.or(b.isNaN(x), b.isNaN(y)), nan64, r)
	r = b.sel(b.fsetp("eq", y, c64(1)), x, r)
	r = b.sel(b.or(b.fsetp("eq", y, c64(0)), b.fsetp("eq", x, c64(1))), c64(1), r)
	return r
}

func (b *builder) xorPred(p, q v) v { return b.op("xor.pred", kPred, p, q) }
