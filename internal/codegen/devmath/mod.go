package devmath

// ---- Mod and Hypot ----

// buildMod computes math.Mod exactly (the remainder of two doubles is
// always representable). With |x| = mx·2^ex and |y| = my·2^ey (integer
// mantissas < 2^53, subnormals unnormalised, ex ≥ ey whenever |x| ≥ |y|):
//
//	|x| mod |y| = ((mx·2^(ex−ey)) mod my)·2^ey
//
// computed as r = mx mod my, then r = (r·2^s) mod my for chunks s ≤ 11 of
// ex−ey (r·2^11 < 2^64, so rem.u64 is exact): at most 187 iterations of
// a short loop. The result gets x's sign (Go: Mod(−4, 2) = −0). Special
// cases as Go: y = 0, x = ±Inf or NaN → NaN; |x| < |y| (including y = ±Inf)
// → x.
func buildMod(b *builder, x, y v) v {
	ax, ay := b.abs(x), b.abs(y)
	bad := b.or(b.or(b.fsetp("eq", y, c64(0)), b.fsetp("equ", ax, inf64)), b.isNaN(y))
	small := b.fsetp("lt", ax, ay)
	mant := func(a v) (m, e v) {
		u := b.bitsOf(a)
		e = b.shr(u, u32(52))
		sub := b.isetp("eq", "u64", e, u64(0))
		m = b.sel(sub, u, b.ior(b.iand(u, u64(0x000FFFFFFFFFFFFF)), u64(1<<52)))
		e = b.sel(sub, u64(1), e)
		return
	}
	mx, ex := mant(ax)
	my, ey := mant(ay)
	skip := b.or(bad, small)
	my = b.sel(skip, u64(1), my) // never divide by 0
	d := b.reg(kB64)
	b.set(d, b.sel(skip, u64(0), b.isub(ex, ey)))
	r := b.reg(kB64)
	b.set(r, b.rem(mx, my))
	loop, end := b.newLabel(), b.newLabel()
	b.label(loop)
	b.braIf(b.isetp("le", "s64", d, i64(0)), false, end)
	s := b.sel(b.isetp("lt", "s64", d, i64(11)), d, u64(11))
	b.set(r, b.rem(b.shl(r, b.lo32(s)), my))
	b.set(d, b.isub(d, s))
	b.bra(loop)
	b.label(end)
	res := b.scale(b.u64ToF64(r), b.i64ToF64(b.isub(ey, i64(1075))))
	res = b.copysign(res, x)
	res = b.sel(small, x, res)
	return b.sel(bad, nan64, res)
}

// buildHypot scales the larger of |x|, |y| to [1, 2) by a power of two
// (exact), forms a² + b² as a double-double from exact fma products, takes
// sqrt.rn and one Newton correction (h += (S − h²)/(2h) with the residual
// from an fma), and scales back in two exact steps. Special cases as Go:
// either argument ±Inf → +Inf (even with a NaN), else NaN → NaN.
func buildHypot(b *builder, x, y v) v {
	ax, ay := b.abs(x), b.abs(y)
	sw := b.fsetp("gt", ay, ax)
	mx := b.sel(sw, ay, ax)
	mn := b.sel(sw, ax, ay)
	e := b.i64ToF64(b.isub(b.shr(b.bitsOf(mx), u32(52)), i64(1023)))
	e = b.sel(b.fsetp("gt", e, c64(1022)), c64(1022), e)
	sc := b.pow2(b.neg(e))
	a := b.mul(mx, sc)
	bb := b.mul(mn, sc)
	a2 := b.mul(a, a)
	a2e := b.fma(a, a, b.neg(a2))
	b2 := b.mul(bb, bb)
	b2e := b.fma(bb, bb, b.neg(b2))
	sh, se := b.fastTwoSum(a2, b2)
	sl := b.add(se, b.add(a2e, b2e))
	h := b.sqrt(sh)
	h = b.add(h, b.div(b.add(b.fma(b.neg(h), h, sh), sl), b.add(h, h)))
	r := b.scale(h, e)
	r = b.sel(b.fsetp("eq", mx, c64(0)), c64(0), r)
	r = b.sel(b.or(b.isNaN(x), b.isNaN(y)), nan64, r)
	return b.sel(b.or(b.fsetp("eq", ax, inf64), b.fsetp("eq", ay, inf64)), inf64, r)
}
