package mathref

import (
	"math"
	"math/big"
	"sync"
)

const (
	// Prec is the working precision in bits: ≥ 100 bits beyond a double.
	Prec = 160
	// PiPrec is the precision of the constants: π to reduce trigonometric
	// arguments up to 2^1024 to Prec+ bits.
	PiPrec = 1700
)

type constants struct{ pi, ln2, ln10 *big.Float } // at PiPrec+16 bits

// consts computes the constants from series, once: π by Machin's formula,
// ln 2 = 2 atanh(1/3), ln 10 = 3 ln 2 + 2 atanh(1/9).
var consts = sync.OnceValue(func() constants {
	const p = PiPrec + 16
	// series returns Σ s^k x^(2k+1)/(2k+1) for x = 1/n, s = -1 (atan) or +1 (atanh).
	series := func(n int64, alt bool) *big.Float {
		x := new(big.Float).SetPrec(p).Quo(big.NewFloat(1).SetPrec(p), new(big.Float).SetPrec(p).SetInt64(n))
		x2 := new(big.Float).SetPrec(p).Mul(x, x)
		sum := new(big.Float).SetPrec(p).Set(x)
		pow := new(big.Float).SetPrec(p).Set(x)
		for k := int64(1); ; k++ {
			pow.Mul(pow, x2)
			if alt {
				pow.Neg(pow)
			}
			t := new(big.Float).SetPrec(p).Quo(pow, new(big.Float).SetPrec(p).SetInt64(2*k+1))
			if t.MantExp(nil) < -p-8 {
				break
			}
			sum.Add(sum, t)
		}
		return sum
	}
	mul := func(c int64, x *big.Float) *big.Float {
		return new(big.Float).SetPrec(p).Mul(new(big.Float).SetPrec(p).SetInt64(c), x)
	}
	pi := new(big.Float).SetPrec(p).Sub(mul(16, series(5, true)), mul(4, series(239, true)))
	ln2 := mul(2, series(3, false))
	ln10 := new(big.Float).SetPrec(p).Add(mul(3, ln2), mul(2, series(9, false)))
	return constants{pi, ln2, ln10}
})

// Pi returns π rounded to Prec bits (a new value: callers may modify it).
func Pi() *big.Float { return New().Set(consts().pi) }

// Ln2 returns ln 2 to PiPrec+16 bits, so that dividing by it or
// multiplying with it rounds once, at the receiver's precision.
func Ln2() *big.Float { return new(big.Float).Set(consts().ln2) }

// Ln10 returns ln 10 to PiPrec+16 bits.
func Ln10() *big.Float { return new(big.Float).Set(consts().ln10) }

// Float returns x at Prec bits.
func Float(x float64) *big.Float { return new(big.Float).SetPrec(Prec).SetFloat64(x) }

// New returns a zero at Prec bits, the receiver of an operation.
func New() *big.Float { return new(big.Float).SetPrec(Prec) }

// Exp is e^x for |x| < 2100: x = k ln2 + r, e^r by Taylor on r/1024,
// squared ten times.
func Exp(x *big.Float) *big.Float {
	c := consts()
	qf, _ := New().Quo(x, c.ln2).Float64()
	k := math.Round(qf)
	r := New().Sub(x, New().Mul(c.ln2, Float(k)))
	r.SetMantExp(r, -10)
	sum, term := Float(1), Float(1)
	for n := 1; n <= 20; n++ {
		term.Mul(term, r)
		term.Quo(term, Float(float64(n)))
		sum.Add(sum, term)
	}
	for range 10 {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// Log is ln x for x > 0: x = m·2^e with m in [√½, √2), ln m = 2 atanh s,
// s = (m−1)/(m+1), |s| < 0.18.
func Log(x *big.Float) *big.Float {
	m := New()
	e := x.MantExp(m)
	if m.Cmp(Float(math.Sqrt2/2)) < 0 {
		m.SetMantExp(m, 1)
		e--
	}
	s := New().Quo(New().Sub(m, Float(1)), New().Add(m, Float(1)))
	s2 := New().Mul(s, s)
	sum, pow := New().Set(s), New().Set(s)
	for k := 1; k < 50; k++ {
		pow.Mul(pow, s2)
		sum.Add(sum, New().Quo(pow, Float(float64(2*k+1))))
	}
	sum.SetMantExp(sum, 1)
	return sum.Add(sum, New().Mul(consts().ln2, Float(float64(e))))
}

// SinCos returns sin x and cos x for finite x: x = q·π/2 + r with q an
// integer and |r| ≤ π/4, computed with π to PiPrec bits, then Taylor.
func SinCos(x float64) (sin, cos *big.Float) {
	c := consts()
	const p = PiPrec
	pio2 := new(big.Float).SetPrec(p).Quo(c.pi, big.NewFloat(2))
	xb := new(big.Float).SetPrec(p).SetFloat64(x)
	q := new(big.Float).SetPrec(p).Quo(xb, pio2)
	half := big.NewFloat(0.5)
	if q.Sign() < 0 {
		half.Neg(half)
	}
	qi, _ := new(big.Float).SetPrec(p).Add(q, half).Int(nil) // round half away
	r := new(big.Float).SetPrec(p).Sub(xb, new(big.Float).SetPrec(p).Mul(new(big.Float).SetPrec(p).SetInt(qi), pio2))
	r = New().Set(r)
	r2 := New().Mul(r, r)
	s, cs := New().Set(r), Float(1)
	ts, tc := New().Set(r), Float(1)
	for n := 1; n < 30; n++ {
		ts.Mul(ts, r2)
		ts.Quo(ts, Float(float64((2*n)*(2*n+1))))
		ts.Neg(ts)
		s.Add(s, ts)
		tc.Mul(tc, r2)
		tc.Quo(tc, Float(float64((2*n-1)*(2*n))))
		tc.Neg(tc)
		cs.Add(cs, tc)
	}
	switch new(big.Int).And(qi, big.NewInt(3)).Int64() { // two's-complement mod 4
	case 1:
		return cs, New().Neg(s)
	case 2:
		return New().Neg(s), New().Neg(cs)
	case 3:
		return New().Neg(cs), s
	}
	return s, cs
}

// Atan is atan y for finite y: halve the angle (atan t = 2 atan(t/(1+√(1+t²))))
// until |t| ≤ 1/8, then the odd Taylor series.
func Atan(y *big.Float) *big.Float {
	t := New().Set(y)
	halvings := 0
	for New().Abs(t).Cmp(Float(0.125)) > 0 {
		d := New().Mul(t, t)
		d.Add(d, Float(1))
		d.Sqrt(d)
		d.Add(d, Float(1))
		t.Quo(t, d)
		halvings++
	}
	t2 := New().Mul(t, t)
	sum, pow := New().Set(t), New().Set(t)
	for k := 1; k < 45; k++ {
		pow.Mul(pow, t2)
		pow.Neg(pow)
		sum.Add(sum, New().Quo(pow, Float(float64(2*k+1))))
	}
	return sum.SetMantExp(sum, halvings)
}

// SinhSmall is sinh x by its Taylor series, for |x| < 1, where e^x − e^-x
// would cancel.
func SinhSmall(x float64) *big.Float {
	xb := Float(x)
	x2 := New().Mul(xb, xb)
	sum, term := New().Set(xb), New().Set(xb)
	for n := 1; n < 30; n++ {
		term.Mul(term, x2)
		term.Quo(term, Float(float64((2*n)*(2*n+1))))
		sum.Add(sum, term)
	}
	return sum
}
