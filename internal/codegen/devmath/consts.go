package devmath

import (
	"math/big"
	"sync"
)

// The constants the algorithms need (π to 1400+ bits for Payne–Hanek, ln 2,
// ln 10, atan(j/8)) are computed here with math/big from two series, so no
// digit string is copied from anywhere:
//
//	atan(x)  = Σ (-1)^k x^(2k+1)/(2k+1), after halving the argument
//	           (atan x = 2 atan(x/(1+√(1+x²)))) until |x| < 1/8;
//	π        = 16 atan(1/5) − 4 atan(1/239)           (Machin);
//	atanh(x) = Σ x^(2k+1)/(2k+1);  ln 2 = 2 atanh(1/3), ln(5/4) = 2 atanh(1/9).
//
// A test checks the first words of 2/π and π against their well-known values.

const bigPrec = 1600

type constants struct {
	bigPi, bigLn2, bigLn10 *big.Float

	// twoOverPi holds 64 zero bits followed by the bits of 2/π (0.101000101…),
	// 20 words: enough for any finite double's exponent (see trig.go).
	twoOverPi [20]uint64

	pio2   [3]float64 // π/2 = pio2[0]+pio2[1]+pio2[2] to ~160 bits
	pi     [2]float64 // π as a double-double
	ln2    [2]float64 // ln 2: hi has 42 significant bits, so k*hi is exact for |k| < 2^11
	ln2d   [2]float64 // ln 2 as a double-double with a 53-bit hi
	log2e  [2]float64 // 1/ln 2, double-double
	log10e [2]float64 // 1/ln 10, double-double
	lg2    [2]float64 // log10(2): hi has 42 significant bits
	atanJ  [9][2]float64
}

var consts = sync.OnceValue(func() *constants {
	c := &constants{}
	c.bigPi = bigPi()
	c.bigLn2 = new(big.Float).SetPrec(bigPrec).Mul(big.NewFloat(2).SetPrec(bigPrec), bigAtanh(bigRat(1, 3)))
	ln54 := new(big.Float).SetPrec(bigPrec).Mul(big.NewFloat(2).SetPrec(bigPrec), bigAtanh(bigRat(1, 9)))
	c.bigLn10 = new(big.Float).SetPrec(bigPrec).Mul(c.bigLn2, big.NewFloat(3).SetPrec(bigPrec))
	c.bigLn10.Add(c.bigLn10, ln54)

	// 2/π: multiply the fraction by 2^64 repeatedly and take the integer part.
	f := new(big.Float).SetPrec(bigPrec).Quo(big.NewFloat(2).SetPrec(bigPrec), c.bigPi)
	two64 := new(big.Float).SetPrec(bigPrec).SetMantExp(big.NewFloat(1), 64)
	for i := 1; i < len(c.twoOverPi); i++ {
		f.Mul(f, two64)
		w, _ := f.Uint64()
		c.twoOverPi[i] = w
		f.Sub(f, new(big.Float).SetPrec(bigPrec).SetUint64(w))
	}

	pio2 := new(big.Float).SetPrec(bigPrec).Quo(c.bigPi, big.NewFloat(2))
	c.pio2 = splitN(pio2, 3, 53)
	c.pi = split2(c.bigPi, 53)
	c.ln2 = split2(c.bigLn2, 42)
	c.ln2d = split2(c.bigLn2, 53)
	one := big.NewFloat(1).SetPrec(bigPrec)
	c.log2e = split2(new(big.Float).SetPrec(bigPrec).Quo(one, c.bigLn2), 53)
	c.log10e = split2(new(big.Float).SetPrec(bigPrec).Quo(one, c.bigLn10), 53)
	c.lg2 = split2(new(big.Float).SetPrec(bigPrec).Quo(c.bigLn2, c.bigLn10), 42)
	for j := 1; j <= 8; j++ {
		c.atanJ[j] = split2(bigAtan(bigRat(int64(j), 8)), 53)
	}
	return c
})

func bigRat(a, b int64) *big.Float {
	x := new(big.Float).SetPrec(bigPrec).SetInt64(a)
	return x.Quo(x, new(big.Float).SetPrec(bigPrec).SetInt64(b))
}

// splitN writes x as a sum of n doubles; the first has hiBits significant
// bits (rounded to nearest), the others are rounded to nearest doubles of
// the remainders.
func splitN(x *big.Float, n, hiBits int) [3]float64 {
	var out [3]float64
	r := new(big.Float).SetPrec(bigPrec).Set(x)
	for i := 0; i < n; i++ {
		p := uint(53)
		if i == 0 {
			p = uint(hiBits)
		}
		t := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven).Set(r)
		out[i], _ = t.Float64()
		r.Sub(r, new(big.Float).SetPrec(bigPrec).SetFloat64(out[i]))
	}
	return out
}

func split2(x *big.Float, hiBits int) [2]float64 {
	s := splitN(x, 2, hiBits)
	return [2]float64{s[0], s[1]}
}

// bigAtanSeries sums atan's Taylor series; |x| must be small.
func bigAtanSeries(x *big.Float, atanh bool) *big.Float {
	x2 := new(big.Float).SetPrec(bigPrec).Mul(x, x)
	sum := new(big.Float).SetPrec(bigPrec).Set(x)
	pow := new(big.Float).SetPrec(bigPrec).Set(x)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -bigPrec-8)
	for k := int64(1); ; k++ {
		pow.Mul(pow, x2)
		if !atanh {
			pow.Neg(pow)
		}
		t := new(big.Float).SetPrec(bigPrec).Quo(pow, new(big.Float).SetInt64(2*k+1))
		sum.Add(sum, t)
		if new(big.Float).Abs(t).Cmp(eps) < 0 {
			return sum
		}
	}
}

func bigAtanh(x *big.Float) *big.Float { return bigAtanSeries(x, true) }

// bigAtan is atan(x) to bigPrec bits.
func bigAtan(x *big.Float) *big.Float {
	y := new(big.Float).SetPrec(bigPrec).Set(x)
	scale := int64(1)
	one := big.NewFloat(1).SetPrec(bigPrec)
	eighth := big.NewFloat(0.125)
	for new(big.Float).Abs(y).Cmp(eighth) > 0 {
		// atan y = 2 atan(y / (1 + sqrt(1 + y²)))
		d := new(big.Float).SetPrec(bigPrec).Mul(y, y)
		d.Add(d, one)
		d.Sqrt(d)
		d.Add(d, one)
		y.Quo(y, d)
		scale *= 2
	}
	s := bigAtanSeries(y, false)
	return s.Mul(s, new(big.Float).SetInt64(scale))
}

func bigPi() *big.Float {
	a := bigAtan(bigRat(1, 5))
	a.Mul(a, big.NewFloat(16))
	b := bigAtan(bigRat(1, 239))
	b.Mul(b, big.NewFloat(4))
	return a.Sub(a, b)
}

// invFact returns 1/n! rounded to a double.
func invFact(n int) float64 {
	f := new(big.Float).SetPrec(200).SetInt64(1)
	for i := 2; i <= n; i++ {
		f.Mul(f, new(big.Float).SetInt64(int64(i)))
	}
	r, _ := new(big.Float).SetPrec(200).Quo(big.NewFloat(1), f).Float64()
	return r
}
