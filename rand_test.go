package qd

import (
	"flag"
	"math"
	"math/big"
	"testing"
)

// philoxKATs are Random123's known-answer vectors for Philox-4x32 with 7
// and 10 rounds (counter words, key words, result), as distributed in its
// kat_vectors file and copied into DEShawResearch/Random123-Boost,
// libs/random/test/test_philox.cpp (test_kat_philox4x32). They are also the
// vectors TensorFlow's and cuRAND-compatible implementations test against.
var philoxKATs = []struct {
	rounds int
	ctr    [4]uint32
	key    [2]uint32
	want   [4]uint32
}{
	{7, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
	{7, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
	{7, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
	{10, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{10, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{10, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}

func TestPhiloxKAT(t *testing.T) {
	for _, kat := range philoxKATs {
		var got [4]uint32
		if kat.rounds == 10 {
			got = philox4x32x10(kat.ctr, kat.key)
		} else {
			// The 7-round vectors check the round function and the
			// constants on their own, independently of the count of 10.
			c0, c1, c2, c3 := philoxRound(kat.ctr[0], kat.ctr[1], kat.ctr[2], kat.ctr[3], kat.key[0], kat.key[1])
			k0, k1 := kat.key[0], kat.key[1]
			for range kat.rounds - 1 {
				k0, k1 = k0+philoxW0, k1+philoxW1
				c0, c1, c2, c3 = philoxRound(c0, c1, c2, c3, k0, k1)
			}
			got = [4]uint32{c0, c1, c2, c3}
		}
		if got != kat.want {
			t.Errorf("Philox-4x32-%d(%08x, %08x) = %08x, want %08x", kat.rounds, kat.ctr, kat.key, got, kat.want)
		}
	}
}

// TestRandLayout: word i of NewRand(seed, stream) is word i%4 of the
// Philox block of counter (i/4, stream) and key seed, as Rand's doc says;
// the known answers come out of Rand itself.
func TestRandLayout(t *testing.T) {
	for _, kat := range philoxKATs[3:] {
		r := Rand{
			key:    kat.key,
			block:  uint64(kat.ctr[1])<<32 | uint64(kat.ctr[0]),
			stream: uint64(kat.ctr[3])<<32 | uint64(kat.ctr[2]),
		}
		var got [4]uint32
		for i := range got {
			got[i] = r.Uint32()
		}
		if got != kat.want {
			t.Errorf("Rand at counter %08x key %08x: %08x, want %08x", kat.ctr, kat.key, got, kat.want)
		}
	}
	r := NewRand(0, 0)
	for i := range 4 {
		if w := r.Uint32(); w != philoxKATs[3].want[i] {
			t.Errorf("NewRand(0, 0) word %d = %08x, want the zero KAT's %08x", i, w, philoxKATs[3].want[i])
		}
	}
	for _, c := range []struct{ seed, stream uint64 }{{1, 2}, {0xdeadbeefcafef00d, 0x0123456789abcdef}, {^uint64(0), ^uint64(0)}} {
		r := NewRand(c.seed, c.stream)
		key := [2]uint32{uint32(c.seed), uint32(c.seed >> 32)}
		for i := range uint64(40) {
			blk := philox4x32x10([4]uint32{uint32(i / 4), uint32(i / 4 >> 32), uint32(c.stream), uint32(c.stream >> 32)}, key)
			if w := r.Uint32(); w != blk[i%4] {
				t.Fatalf("NewRand(%#x, %#x) word %d = %08x, want %08x", c.seed, c.stream, i, w, blk[i%4])
			}
		}
	}
	// The block index carries into its high word.
	r = Rand{block: 0xffffffff}
	r.Uint64()
	r.Uint64()
	if w, want := r.Uint32(), philox4x32x10([4]uint32{0, 1, 0, 0}, [2]uint32{})[0]; w != want {
		t.Errorf("after block 2^32-1: %08x, want block 2^32's %08x", w, want)
	}
}

// words returns the first n words of NewRand(seed, stream).
func words(seed, stream uint64, n int) []uint32 {
	r := NewRand(seed, stream)
	w := make([]uint32, n)
	for i := range w {
		w[i] = r.Uint32()
	}
	return w
}

// TestRandConsumption: each method takes the documented words and
// computes the documented function of them.
func TestRandConsumption(t *testing.T) {
	w := words(7, 9, 64)
	for _, c := range []struct {
		name  string
		words int
		call  func(r *Rand) (got, want any)
	}{
		{"Uint32", 1, func(r *Rand) (any, any) { return r.Uint32(), w[0] }},
		{"Uint64", 2, func(r *Rand) (any, any) { return r.Uint64(), uint64(w[0])<<32 | uint64(w[1]) }},
		{"Float32", 1, func(r *Rand) (any, any) { return r.Float32(), float32(w[0]>>8) / (1 << 24) }},
		{"Float64", 2, func(r *Rand) (any, any) {
			return r.Float64(), float64((uint64(w[0])<<32|uint64(w[1]))>>11) / (1 << 53)
		}},
		{"NormFloat32", 2, func(r *Rand) (any, any) {
			u := (float32(w[0]) + 1) / (1 << 32)
			return r.NormFloat32(), float32(math.Sqrt(-2*float64(log32(u)))) * cos2pi32(w[1]>>8)
		}},
		{"NormFloat64", 4, func(r *Rand) (any, any) {
			a, b := uint64(w[0])<<32|uint64(w[1]), uint64(w[2])<<32|uint64(w[3])
			u := float64(a>>11+1) / (1 << 53)
			return r.NormFloat64(), math.Sqrt(-2*log64(u)) * cos2pi64(b>>11)
		}},
	} {
		r := NewRand(7, 9)
		if got, want := c.call(&r); got != want {
			t.Errorf("%s = %v, want %v", c.name, got, want)
		}
		// Called again, the method continues with the next words.
		for range 5 {
			c.call(&r)
		}
		if next := r.Uint32(); next != w[6*c.words] {
			t.Errorf("after six %s calls the next word is %08x, want word %d = %08x", c.name, next, 6*c.words, w[6*c.words])
		}
	}
}

func TestRandDeterminism(t *testing.T) {
	a, b := NewRand(42, 7), NewRand(42, 7)
	for range 1000 {
		if a.NormFloat64() != b.NormFloat64() || a.Float32() != b.Float32() || a.Uint32() != b.Uint32() {
			t.Fatal("two generators with the same seed and stream differ")
		}
	}
	c := a // a copy continues from the same position
	for range 100 {
		if a.Uint64() != c.Uint64() {
			t.Fatal("a copy of a Rand yields different values")
		}
	}
	seen := map[uint64]bool{}
	for s := range uint64(1000) {
		for _, r := range []Rand{NewRand(s+1, 0), NewRand(0, s+1), NewRand(s+1, s+1), NewRand(s<<40|7, 3)} {
			v := r.Uint64()
			if seen[v] {
				t.Fatalf("first Uint64 %#x repeats across seeds and streams", v)
			}
			seen[v] = true
		}
	}
}

// corr is the sample correlation of x and y.
func corr(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, syy, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		syy += y[i] * y[i]
		sxy += x[i] * y[i]
	}
	return (sxy/n - sx/n*sy/n) / math.Sqrt((sxx/n-sx/n*sx/n)*(syy/n-sy/n*sy/n))
}

// TestRandStreamsIndependent: neighbouring streams and seeds, and the
// elements of a kernel's per-element streams, are uncorrelated.
func TestRandStreamsIndependent(t *testing.T) {
	const n = 20000
	draw := func(seed, stream uint64) []float64 {
		r := NewRand(seed, stream)
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	base := draw(5, 100)
	lim := 5 / math.Sqrt(n) // five standard deviations of a null correlation
	for _, c := range []struct {
		name string
		x    []float64
	}{
		{"stream+1", draw(5, 101)},
		{"stream+2^32", draw(5, 100+1<<32)},
		{"seed+1", draw(6, 100)},
		{"seed+2^32", draw(5+1<<32, 100)},
	} {
		if r := corr(base, c.x); math.Abs(r) > lim {
			t.Errorf("correlation with %s: %.4f, beyond %.4f", c.name, r, lim)
		}
	}
	// The first draws of consecutive streams, as a kernel with one stream
	// per element makes them, are themselves uniform and uncorrelated with
	// the second draws.
	first, second := make([]float64, n), make([]float64, n)
	for i := range first {
		r := NewRand(9, uint64(i))
		first[i], second[i] = r.Float64(), r.Float64()
	}
	if r := corr(first, second); math.Abs(r) > lim {
		t.Errorf("first and second draws of streams 0..%d: correlation %.4f", n, r)
	}
	if c := chiSquare64(first, func(x float64) float64 { return x }); c > chiLimit {
		t.Errorf("first draws of streams 0..%d: chi-square %.1f over 63 dof", n, c)
	}
}

// chiLimit is far in the tail of the chi-square distribution with 63
// degrees of freedom (its 99.99% point is about 114): the seeds are fixed,
// so the test is not flaky, but a broken generator lands far above.
const chiLimit = 120

// chiSquare64 bins cdf(x) into 64 equal bins and returns Pearson's
// statistic against the uniform distribution.
func chiSquare64(xs []float64, cdf func(float64) float64) float64 {
	var bins [64]float64
	for _, x := range xs {
		b := int(cdf(x) * 64)
		bins[min(max(b, 0), 63)]++
	}
	e := float64(len(xs)) / 64
	c := 0.0
	for _, o := range bins {
		c += (o - e) * (o - e) / e
	}
	return c
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// TestRandDistributions: ranges, moments and a chi-square on 64 bins for
// the uniform and the normal generators.
func TestRandDistributions(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	r := NewRand(2026, 11)
	for _, c := range []struct {
		name       string
		draw       func() float64
		mean, vari float64
		cdf        func(float64) float64
		lo, hi     float64 // the range: lo ≤ x < hi
	}{
		{"Float32", func() float64 { return float64(r.Float32()) }, 0.5, 1.0 / 12, func(x float64) float64 { return x }, 0, 1},
		{"Float64", r.Float64, 0.5, 1.0 / 12, func(x float64) float64 { return x }, 0, 1},
		{"NormFloat32", func() float64 { return float64(r.NormFloat32()) }, 0, 1, normCDF, -6.67, 6.67},
		{"NormFloat64", r.NormFloat64, 0, 1, normCDF, -8.58, 8.58},
	} {
		xs := make([]float64, n)
		var s1, s2, s4 float64
		for i := range xs {
			x := c.draw()
			if !(x >= c.lo && x < c.hi) {
				t.Fatalf("%s = %v, outside [%v, %v)", c.name, x, c.lo, c.hi)
			}
			xs[i] = x
			d := x - c.mean
			s1 += d
			s2 += d * d
			s4 += d * d * d * d
		}
		fn := float64(n)
		mean, vari := c.mean+s1/fn, s2/fn
		// Five standard errors: of the mean sqrt(var/n), of the
		// variance sqrt((μ4 - var²)/n).
		if se := math.Sqrt(c.vari / fn); math.Abs(mean-c.mean) > 5*se {
			t.Errorf("%s: mean %.5f, want %.5f ± %.5f", c.name, mean, c.mean, 5*se)
		}
		if se := math.Sqrt((s4/fn - c.vari*c.vari) / fn); math.Abs(vari-c.vari) > 5*se {
			t.Errorf("%s: variance %.5f, want %.5f ± %.5f", c.name, vari, c.vari, 5*se)
		}
		chi := chiSquare64(xs, c.cdf)
		t.Logf("%s: n %d, mean %.5f, variance %.5f, chi-square on 64 bins %.1f (63 dof)", c.name, n, mean, vari, chi)
		if chi > chiLimit {
			t.Errorf("%s: chi-square %.1f over 63 dof, above %d", c.name, chi, chiLimit)
		}
	}
	// The normal tails: about 0.27% of draws beyond 3σ.
	r = NewRand(1, 1)
	tail := 0
	for range n {
		if math.Abs(r.NormFloat64()) > 3 {
			tail++
		}
	}
	if want, got := 2*normCDF(-3)*float64(n), float64(tail); math.Abs(got-want) > 5*math.Sqrt(want) {
		t.Errorf("%d draws beyond 3σ, want %.0f", tail, want)
	}
}

// TestNormMatchesMath: NormFloat64 equals Box–Muller evaluated with package
// math on the same words, within the errors of math.Cos's rounded argument
// and of the few ulp of both; NormFloat32 equals the float64 formula rounded.
func TestNormMatchesMath(t *testing.T) {
	r := NewRand(3, 4)
	var worst64, worst32 float64
	for range 200_000 {
		q := r // the same words, drawn raw
		a, b := q.Uint64(), q.Uint64()
		u1 := float64(a>>11+1) / (1 << 53)
		u2 := float64(b>>11) / (1 << 53)
		rad := math.Sqrt(-2 * math.Log(u1))
		want := rad * math.Cos(2*math.Pi*u2)
		got := r.NormFloat64()
		// The reference's angle 2π·u2 is rounded: up to 2^-50 absolute, so
		// its cosine may be off by that much times the radius.
		e := math.Abs(got-want) / (0x1p-52*math.Abs(want) + 0x1p-50*rad)
		worst64 = max(worst64, e)

		q = r
		a32, b32 := q.Uint32(), q.Uint32()
		v1 := (float64(float32(a32)) + 1) / (1 << 32)
		v1 = float64(float32(v1)) // NormFloat32 rounds u to float32
		v2 := float64(b32>>8) / (1 << 24)
		want32 := math.Sqrt(-2*math.Log(v1)) * math.Cos(2*math.Pi*v2)
		got32 := float64(r.NormFloat32())
		e32 := math.Abs(got32-want32) / (0x1p-23*math.Abs(want32) + 0x1p-23*math.Sqrt(-2*math.Log(v1)))
		worst32 = max(worst32, e32)
	}
	t.Logf("NormFloat64 vs math-based Box–Muller: worst |Δ| = %.2f·(ulp(z) + 2^-50·r); NormFloat32 vs the float64 formula: %.2f·(ulp(z) + 2^-23·r) in float32 ulps", worst64, worst32)
	if worst64 > 4 {
		t.Errorf("NormFloat64 differs from math-based Box–Muller by %.2f units", worst64)
	}
	if worst32 > 4 {
		t.Errorf("NormFloat32 differs from the float64 formula by %.2f units", worst32)
	}
}

// ---- exact references for the own log and cos, with math/big ----

const refPrec = 128

func refFloat(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, refPrec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
}

// 63 digits each, as in Go's math/const.go: ~2^-209 relative.
var (
	refLn2 = refFloat("0.693147180559945309417232121458176568075500134360255254120680009")
	refPi  = refFloat("3.14159265358979323846264338327950288419716939937510582097494459")
)

func bnew() *big.Float { return new(big.Float).SetPrec(refPrec) }

// refLog is ln x for x > 0, to ~2^-120: x = m·2^e, m ∈ [1, 2),
// ln m = 2·atanh((m-1)/(m+1)) by its series.
func refLog(x float64) *big.Float {
	fr, e := math.Frexp(x) // x = fr·2^e, fr ∈ [0.5, 1)
	m := bnew().SetFloat64(fr * 2)
	s := bnew().Quo(bnew().Sub(m, big.NewFloat(1)), bnew().Add(m, big.NewFloat(1)))
	s2 := bnew().Mul(s, s)
	sum, term := bnew(), bnew().Set(s)
	for k := 0; k < 40; k++ { // s² ≤ 1/9
		sum.Add(sum, bnew().Quo(term, bnew().SetInt64(int64(2*k+1))))
		term.Mul(term, s2)
	}
	sum.Mul(sum, big.NewFloat(2))
	return sum.Add(sum, bnew().Mul(refLn2, bnew().SetInt64(int64(e-1))))
}

// refCos2Pi is cos(2π·t) for t ∈ [0, 1), by the Taylor series of the
// angle reduced to [-π, π] (exactly: t - 1 is exact for t ≥ 1/2).
func refCos2Pi(t float64) *big.Float {
	if t >= 0.5 {
		t -= 1
	}
	x := bnew().Mul(refPi, bnew().SetFloat64(2*t))
	x2 := bnew().Mul(x, x)
	sum, term := bnew(), bnew().SetInt64(1)
	for k := 1; k < 40; k++ { // π^80/80! < 2^-250
		sum.Add(sum, term)
		term.Mul(term, x2)
		term.Quo(term, bnew().SetInt64(int64((2*k-1)*(2*k))))
		term.Neg(term)
	}
	return sum
}

// ulpErr is |got - exact| in ulps of the type of got at exact.
func ulpErr(got float64, exact *big.Float, mant int) float64 {
	ex, _ := exact.Float64()
	if math.Abs(ex) < 1e-30 {
		// An exact zero of cos, which the series leaves as ~2^-128:
		// only a zero is right.
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	_, e := math.Frexp(ex)
	ulp := math.Ldexp(1, e-mant)
	d, _ := bnew().Sub(bnew().SetFloat64(got), exact).Float64()
	return math.Abs(d) / ulp
}

// logCosN is the number of random arguments of TestLogCos; docs/accuracy.md
// reports a run with -args -logcos.n=100000.
var logCosN = flag.Int("logcos.n", 2000, "random arguments per function in TestLogCos")

// TestLogCos measures the file's own log and cos against math/big: the
// errors that docs/accuracy.md reports for the normal generators.
func TestLogCos(t *testing.T) {
	n := *logCosN
	if testing.Short() {
		n /= 5
	}
	r := NewRand(11, 12)
	var l64, l32, c64, c32 float64
	check := func(a, b uint64) {
		u := float64(a>>11+1) * 0x1p-53
		l64 = max(l64, ulpErr(log64(u), refLog(u), 53))
		u32 := (float32(uint32(a)) + 1) * 0x1p-32
		l32 = max(l32, ulpErr(float64(log32(u32)), refLog(float64(u32)), 24))
		c64 = max(c64, ulpErr(cos2pi64(b>>11), refCos2Pi(float64(b>>11)*0x1p-53), 53))
		c32 = max(c32, ulpErr(float64(cos2pi32(uint32(b)>>8)), refCos2Pi(float64(uint32(b)>>8)*0x1p-24), 24))
	}
	for range n {
		check(r.Uint64(), r.Uint64())
	}
	// Edges: u = 2^-53 and 1 and near 1, the quadrant boundaries and the
	// fold at an eighth of a turn.
	for _, a := range []uint64{0, 1 << 11, ^uint64(0), ^uint64(0) - 1<<11, 1 << 63, 3 << 62} {
		for _, k := range []uint64{0, 1, 1 << 50, 1<<50 + 1, 1<<50 - 1, 1 << 51, 1<<51 + 1, 1<<51 - 1, 3 << 51, 1<<53 - 1} {
			check(a, k<<11)
		}
	}
	t.Logf("worst ulp errors against the exact value: log64 %.3f, log32 %.3f, cos2pi64 %.3f, cos2pi32 %.3f", l64, l32, c64, c32)
	for _, c := range []struct {
		name string
		v    float64
	}{{"log64", l64}, {"log32", l32}, {"cos2pi64", c64}, {"cos2pi32", c32}} {
		if c.v > 2 {
			t.Errorf("%s: %.3f ulp, want ≤ 2", c.name, c.v)
		}
	}
	if v := cos2pi64(0); v != 1 {
		t.Errorf("cos2pi64(0) = %v", v)
	}
	if v := cos2pi64(1 << 52); v != -1 {
		t.Errorf("cos2pi64(half turn) = %v", v)
	}
}

// TestFloat32ConstantsRoundOnce: every constant the float32 code paths use
// rounds to the same float32 directly as through float64, so a compiler
// that converts constants via float64 (as a GPU front end might) gets the
// same bits as Go's direct rounding.
func TestFloat32ConstantsRoundOnce(t *testing.T) {
	for _, c := range []struct {
		name   string
		direct float32
		via64  float64
	}{
		{"ln2Hi32", ln2Hi32, ln2Hi32}, {"ln2Lo32", ln2Lo32, ln2Lo32},
		{"2/3", 2.0 / 3, 2.0 / 3}, {"2/5", 2.0 / 5, 2.0 / 5}, {"2/7", 2.0 / 7, 2.0 / 7}, {"2/9", 2.0 / 9, 2.0 / 9},
		{"cos1", cos1, cos1}, {"cos2", cos2, cos2}, {"cos3", cos3, cos3}, {"cos4", cos4, cos4}, {"cos5", cos5, cos5},
		{"sin0", sin0, sin0}, {"sin1", sin1, sin1}, {"sin2", sin2, sin2}, {"sin3", sin3, sin3}, {"sin4", sin4, sin4},
		{"Sqrt2", math.Sqrt2, math.Sqrt2},
	} {
		if float32(c.via64) != c.direct {
			t.Errorf("%s: float32 %v directly, %v through float64", c.name, c.direct, float32(c.via64))
		}
	}
	// The split of ln 2: e·ln2Hi is exact for every exponent.
	for e := -1100; e <= 1100; e++ {
		if p := float64(e) * ln2Hi64; big.NewFloat(p).Cmp(new(big.Float).Mul(big.NewFloat(float64(e)), big.NewFloat(ln2Hi64))) != 0 {
			t.Fatalf("%d·ln2Hi64 is rounded", e)
		}
	}
	for e := -160; e <= 160; e++ {
		if p := float32(e) * ln2Hi32; float64(p) != float64(e)*float64(float32(ln2Hi32)) {
			t.Fatalf("%d·ln2Hi32 is rounded", e)
		}
	}
}

func BenchmarkRand(b *testing.B) {
	r := NewRand(1, 2)
	var u32 uint32
	var u64 uint64
	var f32 float32
	var f64 float64
	b.Run("Uint32", func(b *testing.B) {
		for b.Loop() {
			u32 += r.Uint32()
		}
	})
	b.Run("Uint64", func(b *testing.B) {
		for b.Loop() {
			u64 += r.Uint64()
		}
	})
	b.Run("Float32", func(b *testing.B) {
		for b.Loop() {
			f32 += r.Float32()
		}
	})
	b.Run("Float64", func(b *testing.B) {
		for b.Loop() {
			f64 += r.Float64()
		}
	})
	b.Run("NormFloat32", func(b *testing.B) {
		for b.Loop() {
			f32 += r.NormFloat32()
		}
	})
	b.Run("NormFloat64", func(b *testing.B) {
		for b.Loop() {
			f64 += r.NormFloat64()
		}
	})
	b.Run("NewRand+Float32", func(b *testing.B) {
		i := uint64(0)
		for b.Loop() {
			q := NewRand(7, i)
			f32 += q.Float32()
			i++
		}
	})
	_, _, _, _ = u32, u64, f32, f64
}
