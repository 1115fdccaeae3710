package mathref

import (
	"math"
	"math/big"
)

// Func gives the exact value of a function at finite arguments (y is
// ignored by functions of one argument); ok is false where no reference is
// computed: the result there is ±Inf, ±0 or ±1 far from any threshold, or
// Go's special-case table applies, so the caller demands Go's result.
type Func func(x, y float64) (exact *big.Float, ok bool)

// Of returns the reference of the function named as ir.Intrinsic names it
// (exp, log2, atan2, ...), or nil for a function without one (sqrt and the
// roundings are correctly rounded: Go's result is the reference).
func Of(name string) Func { return funcs[name] }

var funcs = map[string]Func{
	"exp":   exp,
	"exp2":  exp2,
	"log":   logBase(nil),
	"log2":  logBase(Ln2),
	"log10": logBase(Ln10),
	"sin":   trig(0),
	"cos":   trig(1),
	"tan":   trig(2),
	"asin":  asin,
	"acos":  acos,
	"atan":  func(x, _ float64) (*big.Float, bool) { return Atan(Float(x)), true },
	"atan2": atan2,
	"sinh":  sinh,
	"cosh":  cosh,
	"tanh":  tanh,
	"pow":   pow,
	"hypot": hypot,
	"mod":   func(x, y float64) (*big.Float, bool) { return Float(math.Mod(x, y)), true }, // math.Mod is exact
}

func exp(x, _ float64) (*big.Float, bool) {
	if math.Abs(x) > 1400 {
		return nil, false
	}
	return Exp(Float(x)), true
}

func exp2(x, _ float64) (*big.Float, bool) {
	if math.Abs(x) > 2000 {
		return nil, false
	}
	return Exp(New().Mul(Float(x), consts().ln2)), true
}

func logBase(base func() *big.Float) Func {
	return func(x, _ float64) (*big.Float, bool) {
		if x <= 0 {
			return nil, false // Go's -Inf or NaN
		}
		l := Log(Float(x))
		if base != nil {
			l.Quo(l, base())
		}
		return l, true
	}
}

func trig(which int) Func {
	return func(x, _ float64) (*big.Float, bool) {
		s, c := SinCos(x)
		switch which {
		case 0:
			return s, true
		case 1:
			return c, true
		}
		return s.Quo(s, c), true
	}
}

func asin(x, _ float64) (*big.Float, bool) {
	if math.Abs(x) > 1 {
		return nil, false
	}
	d := New().Sub(Float(1), New().Mul(Float(x), Float(x)))
	if d.Sign() == 0 {
		return New().Quo(Pi(), Float(math.Copysign(2, x))), true
	}
	return Atan(New().Quo(Float(x), d.Sqrt(d))), true
}

func acos(x, y float64) (*big.Float, bool) {
	if x == 1 {
		return New(), true
	}
	as, ok := asin(x, y)
	if !ok {
		return nil, false
	}
	return New().Sub(New().Quo(Pi(), Float(2)), as), true
}

func atan2(y, x float64) (*big.Float, bool) {
	if y == 0 {
		return nil, false // ±0 or ±π by Go's table
	}
	if x == 0 {
		return New().Quo(Pi(), Float(math.Copysign(2, y))), true
	}
	a := Atan(New().Quo(Float(y), Float(x)))
	if x < 0 {
		if y > 0 {
			return a.Add(a, Pi()), true
		}
		return a.Sub(a, Pi()), true
	}
	return a, true
}

func sinh(x, _ float64) (*big.Float, bool) {
	if math.Abs(x) > 1400 {
		return nil, false
	}
	if math.Abs(x) < 1 {
		return SinhSmall(x), true
	}
	e := Exp(Float(x))
	r := New().Sub(e, New().Quo(Float(1), e))
	return r.SetMantExp(r, -1), true
}

func cosh(x, _ float64) (*big.Float, bool) {
	if math.Abs(x) > 1400 {
		return nil, false
	}
	e := Exp(Float(x))
	r := New().Add(e, New().Quo(Float(1), e))
	return r.SetMantExp(r, -1), true
}

func tanh(x, _ float64) (*big.Float, bool) {
	switch {
	case math.Abs(x) > 700:
		return Float(math.Copysign(1, x)), true // 1 − tanh|x| < 2^-2000
	case math.Abs(x) < 1:
		s := SinhSmall(x)
		e := Exp(Float(x))
		c := New().Add(e, New().Quo(Float(1), e))
		c.SetMantExp(c, -1)
		return s.Quo(s, c), true
	}
	e := Exp(Float(2 * x))
	return New().Quo(New().Sub(e, Float(1)), New().Add(e, Float(1))), true
}

func pow(x, y float64) (*big.Float, bool) {
	if x == 0 || y == 0 || (x < 0 && y != math.Trunc(y)) {
		return nil, false // Go's table: 1, ±0, ±Inf, NaN
	}
	if t := y * math.Log(math.Abs(x)); math.Abs(t) > 1400 {
		return nil, false // far beyond overflow or underflow: ±Inf or ±0
	}
	r := Exp(New().Mul(Log(Float(math.Abs(x))), Float(y)))
	if x < 0 && math.Mod(y, 2) != 0 {
		r.Neg(r)
	}
	return r, true
}

func hypot(x, y float64) (*big.Float, bool) {
	s := New().Add(New().Mul(Float(x), Float(x)), New().Mul(Float(y), Float(y)))
	return s.Sqrt(s), true
}

// RoundTo rounds exact to the result type (float32 when f32), as float64.
func RoundTo(exact *big.Float, f32 bool) float64 {
	if f32 {
		w, _ := exact.Float32()
		return float64(w)
	}
	w, _ := exact.Float64()
	return w
}

// Ulp is the ulp of the result type at |w| (w finite; past MaxFloat the
// ulp MaxFloat would have).
func Ulp(w float64, f32 bool) float64 {
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
