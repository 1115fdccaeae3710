package ptxmath

import (
	"math"
	"math/big"
)

// High-precision references (math/big, refPrec bits) used to measure the
// true error of the model, because Go's math is itself off by more than an
// ulp in places (Log2 near 1, Acos near 1, Pow with large |y|, and the amd64
// assembly Exp overflows to +Inf above ~709.09 instead of 709.78).

const refPrec = 160

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }
func bn() *big.Float          { return new(big.Float).SetPrec(refPrec) }

func bigMant(x *big.Float, e int) *big.Float { return bn().SetMantExp(x, e) }

// refExp returns e^x for |x| < 2000.
func refExp(x *big.Float) *big.Float {
	c := consts()
	ln2 := bn().Set(c.bigLn2)
	// x = k ln2 + r
	q := bn().Quo(x, ln2)
	kf, _ := q.Float64()
	k := math.Round(kf)
	r := bn().Sub(x, bn().Mul(ln2, bf(k)))
	r = bigMant(r, -10) // r/1024
	sum, term := bf(1), bf(1)
	for n := 1; n < 40; n++ {
		term.Mul(term, r)
		term.Quo(term, bf(float64(n)))
		sum.Add(sum, term)
	}
	for i := 0; i < 10; i++ {
		sum.Mul(sum, sum)
	}
	return bigMant(sum, int(k))
}

// refLog returns ln x for x > 0.
func refLog(x *big.Float) *big.Float {
	c := consts()
	m := bn()
	e := x.MantExp(m) // x = m·2^e, m in [0.5, 1)
	if m.Cmp(bf(math.Sqrt2/2)) < 0 {
		m = bigMant(m, 1)
		e--
	}
	s := bn().Quo(bn().Sub(m, bf(1)), bn().Add(m, bf(1)))
	s2 := bn().Mul(s, s)
	sum, pow := bn().Set(s), bn().Set(s)
	for k := 1; k < 60; k++ {
		pow.Mul(pow, s2)
		sum.Add(sum, bn().Quo(pow, bf(float64(2*k+1))))
	}
	sum.Mul(sum, bf(2))
	return sum.Add(sum, bn().Mul(c.bigLn2, bf(float64(e))))
}

// refSinCos returns sin x and cos x.
func refSinCos(x float64) (*big.Float, *big.Float) {
	c := consts()
	p := uint(bigPrec)
	pio2 := new(big.Float).SetPrec(p).Quo(c.bigPi, big.NewFloat(2))
	xb := new(big.Float).SetPrec(p).SetFloat64(x)
	q := new(big.Float).SetPrec(p).Quo(xb, pio2)
	// round q to an integer
	qi, _ := new(big.Float).SetPrec(p).Add(q, big.NewFloat(0.5)).Int(nil)
	if q.Sign() < 0 {
		qi, _ = new(big.Float).SetPrec(p).Sub(q, big.NewFloat(0.5)).Int(nil)
	}
	kb := new(big.Float).SetPrec(p).SetInt(qi)
	r := new(big.Float).SetPrec(p).Sub(xb, new(big.Float).SetPrec(p).Mul(kb, pio2))
	r = bn().Set(r)
	r2 := bn().Mul(r, r)
	s, cs := bn().Set(r), bf(1)
	ts, tc := bn().Set(r), bf(1)
	for n := 1; n < 30; n++ {
		ts.Mul(ts, r2)
		ts.Quo(ts, bf(float64((2*n)*(2*n+1))))
		ts.Neg(ts)
		s.Add(s, ts)
		tc.Mul(tc, r2)
		tc.Quo(tc, bf(float64((2*n-1)*(2*n))))
		tc.Neg(tc)
		cs.Add(cs, tc)
	}
	n := new(big.Int).And(qi, big.NewInt(3)).Int64()
	neg := func(a *big.Float) *big.Float { return bn().Neg(a) }
	switch n {
	case 1:
		return cs, neg(s)
	case 2:
		return neg(s), neg(cs)
	case 3:
		return neg(cs), s
	}
	return s, cs
}

// refAtan returns atan y for finite y.
func refAtan(y *big.Float) *big.Float {
	t := bn().Set(y)
	scale := 1.0
	for bn().Abs(t).Cmp(bf(0.125)) > 0 {
		d := bn().Mul(t, t)
		d.Add(d, bf(1))
		d.Sqrt(d)
		d.Add(d, bf(1))
		t.Quo(t, d)
		scale *= 2
	}
	t2 := bn().Mul(t, t)
	sum, pow := bn().Set(t), bn().Set(t)
	for k := 1; k < 40; k++ {
		pow.Mul(pow, t2)
		pow.Neg(pow)
		sum.Add(sum, bn().Quo(pow, bf(float64(2*k+1))))
	}
	return sum.Mul(sum, bf(scale))
}

func refPi() *big.Float { return bn().Set(consts().bigPi) }

// ref1 gives the exact value of a one-argument function, or nil where the
// Go special case (non-finite input) applies.
var ref1 = map[string]func(x float64) *big.Float{
	"exp":   func(x float64) *big.Float { return refExp(bf(x)) },
	"exp2":  func(x float64) *big.Float { return refExp(bn().Mul(bf(x), consts().bigLn2)) },
	"log":   func(x float64) *big.Float { return refLog(bf(x)) },
	"log2":  func(x float64) *big.Float { return bn().Quo(refLog(bf(x)), consts().bigLn2) },
	"log10": func(x float64) *big.Float { return bn().Quo(refLog(bf(x)), consts().bigLn10) },
	"sin":   func(x float64) *big.Float { s, _ := refSinCos(x); return s },
	"cos":   func(x float64) *big.Float { _, c := refSinCos(x); return c },
	"tan":   func(x float64) *big.Float { s, c := refSinCos(x); return bn().Quo(s, c) },
	"atan":  func(x float64) *big.Float { return refAtan(bf(x)) },
	"asin": func(x float64) *big.Float {
		d := bn().Sub(bf(1), bn().Mul(bf(x), bf(x)))
		if d.Sign() == 0 {
			return bn().Quo(refPi(), bf(math.Copysign(2, x)))
		}
		return refAtan(bn().Quo(bf(x), d.Sqrt(d)))
	},
	"acos": func(x float64) *big.Float {
		d := bn().Sub(bf(1), bn().Mul(bf(x), bf(x)))
		if d.Sign() == 0 {
			if x > 0 {
				return bn()
			}
			return refPi()
		}
		as := refAtan(bn().Quo(bf(x), d.Sqrt(d)))
		return bn().Sub(bn().Quo(refPi(), bf(2)), as)
	},
	"sinh": func(x float64) *big.Float {
		e := refExp(bf(x))
		r := bn().Sub(e, bn().Quo(bf(1), e))
		return bigMant(r, -1)
	},
	"cosh": func(x float64) *big.Float {
		e := refExp(bf(x))
		r := bn().Add(e, bn().Quo(bf(1), e))
		return bigMant(r, -1)
	},
	"tanh": func(x float64) *big.Float {
		e := refExp(bf(2 * x))
		return bn().Quo(bn().Sub(e, bf(1)), bn().Add(e, bf(1)))
	},
}

var ref2 = map[string]func(x, y float64) *big.Float{
	"pow": func(x, y float64) *big.Float {
		l := refLog(bf(math.Abs(x)))
		r := refExp(bn().Mul(l, bf(y)))
		if x < 0 && math.Mod(y, 2) != 0 {
			r.Neg(r)
		}
		return r
	},
	"atan2": func(y, x float64) *big.Float {
		if x == 0 {
			return bn().Quo(refPi(), bf(math.Copysign(2, y)))
		}
		a := refAtan(bn().Quo(bf(y), bf(x)))
		if x < 0 {
			if y >= 0 {
				return a.Add(a, refPi())
			}
			return a.Sub(a, refPi())
		}
		return a
	},
	"hypot": func(x, y float64) *big.Float {
		s := bn().Add(bn().Mul(bf(x), bf(x)), bn().Mul(bf(y), bf(y)))
		return s.Sqrt(s)
	},
	"mod": func(x, y float64) *big.Float { return bf(math.Mod(x, y)) }, // math.Mod is exact
}

// exactErr returns |got − exact| in ulps of the double nearest exact (ulps
// of float32 when f32). It returns 0 when both are the same non-finite value
// and +Inf for a non-finite mismatch.
func exactErr(got float64, exact *big.Float, f32 bool) float64 {
	var want float64
	if f32 {
		w, _ := exact.Float32()
		want = float64(w)
	} else {
		want, _ = exact.Float64()
	}
	if math.IsNaN(got) || math.IsInf(got, 0) || math.IsInf(want, 0) || want == 0 {
		if got == want {
			return 0
		}
		if want == 0 && !math.IsInf(got, 0) && !math.IsNaN(got) {
			return ulpErr(got, want, f32) // got subnormal vs 0
		}
		return math.Inf(1)
	}
	d := bn().Sub(bf(got), exact)
	df, _ := d.Float64()
	return math.Abs(df) / ulpOf(want, f32)
}

func ulpOf(w float64, f32 bool) float64 {
	a := math.Abs(w)
	if f32 {
		a32 := float32(a)
		u := float64(math.Nextafter32(a32, float32(math.Inf(1))) - a32)
		if math.IsInf(u, 0) {
			u = 0x1p104
		}
		return u
	}
	u := math.Nextafter(a, math.Inf(1)) - a
	if math.IsInf(u, 0) {
		u = 0x1p971
	}
	return u
}

// ulpErr measures got against a double (or float32) reference value.
func ulpErr(got, want float64, f32 bool) float64 {
	if math.IsNaN(got) || math.IsNaN(want) {
		if math.IsNaN(got) && math.IsNaN(want) {
			return 0
		}
		return math.Inf(1)
	}
	if got == want {
		if got == 0 && math.Signbit(got) != math.Signbit(want) {
			return math.Inf(1)
		}
		return 0
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return math.Inf(1)
	}
	return math.Abs(got-want) / ulpOf(want, f32)
}
