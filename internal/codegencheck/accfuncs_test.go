package codegencheck

// The math functions of the accuracy test (accuracy_test.go): what each
// means in Go, its exact reference, and its inputs.

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/mathref"
)

type accGen func(r *rand.Rand) float64

func accUni(lo, hi float64) accGen {
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

// loguG draws |x| log-uniformly in [lo, hi], with a random sign if signed.
func accLogu(lo, hi float64, signed bool) accGen {
	a, b := math.Log(lo), math.Log(hi)
	return func(r *rand.Rand) float64 {
		x := math.Exp(a + (b-a)*r.Float64())
		if signed && r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

// bitsG draws uniformly over the bit patterns of finite values of the type.
func accBits(f32, signed bool) accGen {
	return func(r *rand.Rand) float64 {
		var x float64
		if f32 {
			x = float64(math.Float32frombits(r.Uint32N(0x7F800000)))
		} else {
			x = math.Float64frombits(r.Uint64N(0x7FF0000000000000))
		}
		if signed && r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

// nearPio2G draws values a few ulps from k·π/2, k < kmax (f64 only).
func accNearPio2(kmax int) accGen {
	return func(r *rand.Rand) float64 {
		x := float64(r.IntN(kmax)+1) * math.Pi / 2
		return math.Float64frombits(math.Float64bits(x) + uint64(r.IntN(7)) - 3)
	}
}

func accNearOne(lo, hi float64) accGen {
	d := accLogu(lo, hi, true)
	return func(r *rand.Rand) float64 { return 1 + d(r) }
}

func accInt(lo, hi int) accGen {
	return func(r *rand.Rand) float64 { return float64(lo + r.IntN(hi-lo+1)) }
}

func accHalfInt(lo, hi int) accGen {
	return func(r *rand.Rand) float64 { return float64(lo+r.IntN(hi-lo+1)) + 0.5 }
}

type accRange struct {
	name string
	x, y accGen // y only for two-argument functions
}

func accR1(name string, g accGen) accRange { return accRange{name, g, nil} }
func accR2(name string, x, y accGen) accRange {
	return accRange{name, x, y}
}

type accFunc struct {
	name  string
	fn    ir.Intrinsic // 0: division
	arity int
	exact bool // exact or correctly rounded: 0 ulp, Go's bits, everywhere
	goRef func(x, y float64) float64
	ref   func(x, y float64) (*big.Float, bool)
	// ranges gives the random input ranges for the type.
	ranges func(f32 bool) []accRange
}

func accG1(f func(float64) float64) func(x, _ float64) float64 {
	return func(x, _ float64) float64 { return f(x) }
}

func accBy(r64, r32 []accRange) func(bool) []accRange {
	return func(f32 bool) []accRange {
		if f32 {
			return r32
		}
		return r64
	}
}

func accLogRanges(f32 bool) []accRange {
	if f32 {
		return []accRange{accR1("[1e-45,3e38]", accLogu(1e-45, 3e38, false)), accR1("[0.5,2]", accUni(0.5, 2)),
			accR1("1±[1e-7,1e-2]", accNearOne(1e-7, 1e-2))}
	}
	return []accRange{accR1("[5e-324,1.7e308]", accLogu(5e-324, 1.7e308, false)), accR1("[0.5,2]", accUni(0.5, 2)),
		accR1("1±[1e-16,1e-2]", accNearOne(1e-16, 1e-2))}
}

func accTrigRanges(f32 bool) []accRange {
	if f32 {
		return []accRange{accR1("[-π,π]", accUni(-math.Pi, math.Pi)), accR1("[-1e5,1e5]", accUni(-1e5, 1e5)),
			accR1("±[1e-10,3e38]", accLogu(1e-10, 3e38, true))}
	}
	return []accRange{accR1("[-π,π]", accUni(-math.Pi, math.Pi)), accR1("[-1e5,1e5]", accUni(-1e5, 1e5)),
		accR1("±[1e-10,1e308]", accLogu(1e-10, 1e308, true)), accR1("near kπ/2, k<1e6", accNearPio2(1000000))}
}

func accAsinRanges(f32 bool) []accRange {
	lo := 1e-16
	if f32 {
		lo = 1e-7
	}
	near1 := func(r *rand.Rand) float64 {
		x := 1 - accLogu(lo, 0.1, false)(r)
		if r.IntN(2) == 0 {
			return -x
		}
		return x
	}
	return []accRange{accR1("[-1,1]", accUni(-1, 1)), accR1("±(1−small)", near1)}
}

func accRoundingRanges(f32 bool) []accRange {
	hi := 0x1p60
	if f32 {
		hi = 0x1p30
	}
	return []accRange{accR1("[-1e3,1e3]", accUni(-1e3, 1e3)), accR1("±[1e-3,2^60]", accLogu(1e-3, hi, true)),
		accR1("half-integers", accHalfInt(-1000, 1000)), accR1("bits", accBits(f32, true))}
}

var accFuncs = map[ir.Intrinsic]*accFunc{
	ir.Sqrt: {exact: true, goRef: accG1(math.Sqrt), ranges: func(f32 bool) []accRange {
		return []accRange{accR1("bits", accBits(f32, false)), accR1("[0,4]", accUni(0, 4))}
	}},
	ir.Exp: {goRef: accG1(math.Exp), ref: mathref.Of("exp"), ranges: accBy(
		[]accRange{accR1("[-745.2,709.8]", accUni(-745.2, 709.8)), accR1("[-1,1]", accUni(-1, 1)), accR1("±[1e-20,1]", accLogu(1e-20, 1, true))},
		[]accRange{accR1("[-104,88.8]", accUni(-104, 88.8)), accR1("[-1,1]", accUni(-1, 1)), accR1("±[1e-10,1]", accLogu(1e-10, 1, true))})},
	ir.Exp2: {goRef: accG1(math.Exp2), ref: mathref.Of("exp2"), ranges: accBy(
		[]accRange{accR1("[-1075,1024]", accUni(-1075, 1024)), accR1("[-1,1]", accUni(-1, 1))},
		[]accRange{accR1("[-150,128]", accUni(-150, 128)), accR1("[-1,1]", accUni(-1, 1))})},
	ir.Log:   {goRef: accG1(math.Log), ref: mathref.Of("log"), ranges: accLogRanges},
	ir.Log2:  {goRef: accG1(math.Log2), ref: mathref.Of("log2"), ranges: accLogRanges},
	ir.Log10: {goRef: accG1(math.Log10), ref: mathref.Of("log10"), ranges: accLogRanges},
	ir.Sin:   {goRef: accG1(math.Sin), ref: mathref.Of("sin"), ranges: accTrigRanges},
	ir.Cos:   {goRef: accG1(math.Cos), ref: mathref.Of("cos"), ranges: accTrigRanges},
	ir.Tan:   {goRef: accG1(math.Tan), ref: mathref.Of("tan"), ranges: accTrigRanges},
	ir.Asin:  {goRef: accG1(math.Asin), ref: mathref.Of("asin"), ranges: accAsinRanges},
	ir.Acos:  {goRef: accG1(math.Acos), ref: mathref.Of("acos"), ranges: accAsinRanges},
	ir.Atan: {goRef: accG1(math.Atan), ref: mathref.Of("atan"), ranges: accBy(
		[]accRange{accR1("[-4,4]", accUni(-4, 4)), accR1("±[1e-300,1e300]", accLogu(1e-300, 1e300, true))},
		[]accRange{accR1("[-4,4]", accUni(-4, 4)), accR1("±[1e-38,1e38]", accLogu(1e-38, 1e38, true))})},
	ir.Atan2: {goRef: math.Atan2, ref: mathref.Of("atan2"), ranges: accBy(
		[]accRange{accR2("±[1e-5,1e5]²", accLogu(1e-5, 1e5, true), accLogu(1e-5, 1e5, true)),
			accR2("±[1e-300,1e300]²", accLogu(1e-300, 1e300, true), accLogu(1e-300, 1e300, true))},
		[]accRange{accR2("±[1e-5,1e5]²", accLogu(1e-5, 1e5, true), accLogu(1e-5, 1e5, true)),
			accR2("±[1e-38,1e38]²", accLogu(1e-38, 1e38, true), accLogu(1e-38, 1e38, true))})},
	ir.Sinh: {goRef: accG1(math.Sinh), ref: mathref.Of("sinh"), ranges: accBy(
		[]accRange{accR1("[-2,2]", accUni(-2, 2)), accR1("[-710.4,710.4]", accUni(-710.4, 710.4)), accR1("±[1e-10,1]", accLogu(1e-10, 1, true))},
		[]accRange{accR1("[-2,2]", accUni(-2, 2)), accR1("[-89.4,89.4]", accUni(-89.4, 89.4))})},
	ir.Cosh: {goRef: accG1(math.Cosh), ref: mathref.Of("cosh"), ranges: accBy(
		[]accRange{accR1("[-2,2]", accUni(-2, 2)), accR1("[-710.4,710.4]", accUni(-710.4, 710.4))},
		[]accRange{accR1("[-2,2]", accUni(-2, 2)), accR1("[-89.4,89.4]", accUni(-89.4, 89.4))})},
	ir.Tanh: {goRef: accG1(math.Tanh), ref: mathref.Of("tanh"), ranges: accBy(
		[]accRange{accR1("[-1,1]", accUni(-1, 1)), accR1("[-20,20]", accUni(-20, 20)), accR1("±[1e-10,1]", accLogu(1e-10, 1, true))},
		[]accRange{accR1("[-1,1]", accUni(-1, 1)), accR1("[-10,10]", accUni(-10, 10))})},
	ir.Pow: {goRef: math.Pow, ref: mathref.Of("pow"), ranges: accBy(
		[]accRange{accR2("x [1e-10,1e10], y [-30,30]", accLogu(1e-10, 1e10, false), accUni(-30, 30)),
			accR2("x [0.5,2], y ±[1,1e4]", accUni(0.5, 2), accLogu(1, 1e4, true)),
			accR2("x [-10,10], y int [-40,40]", accUni(-10, 10), accInt(-40, 40)),
			accR2("x [-2,2], y half-int [-20,20]", accUni(-2, 2), accHalfInt(-20, 20)),
			accR2("x [1e-300,1e300], y [-1,1]", accLogu(1e-300, 1e300, false), accUni(-1, 1))},
		[]accRange{accR2("x [1e-5,1e5], y [-7,7]", accLogu(1e-5, 1e5, false), accUni(-7, 7)),
			accR2("x [0.5,2], y ±[1,100]", accUni(0.5, 2), accLogu(1, 100, true)),
			accR2("x [-10,10], y int [-30,30]", accUni(-10, 10), accInt(-30, 30)),
			accR2("x [1e-38,1e38], y [-1,1]", accLogu(1e-38, 1e38, false), accUni(-1, 1))})},
	ir.Abs:   {exact: true, goRef: accG1(math.Abs), ranges: func(f32 bool) []accRange { return []accRange{accR1("bits", accBits(f32, true))} }},
	ir.Floor: {exact: true, goRef: accG1(math.Floor), ranges: accRoundingRanges},
	ir.Ceil:  {exact: true, goRef: accG1(math.Ceil), ranges: accRoundingRanges},
	ir.Trunc: {exact: true, goRef: accG1(math.Trunc), ranges: accRoundingRanges},
	ir.Round: {exact: true, goRef: accG1(math.Round), ranges: accRoundingRanges},
	ir.Mod: {exact: true, goRef: math.Mod, ranges: func(f32 bool) []accRange {
		lo, hi := 1e-300, 1e300
		if f32 {
			lo, hi = 1e-38, 1e38
		}
		return []accRange{accR2("±[lo,hi]²", accLogu(lo, hi, true), accLogu(lo, hi, true)),
			accR2("bits²", accBits(f32, true), accBits(f32, true)), accR2("[-10,10]²", accUni(-10, 10), accUni(-10, 10))}
	}},
	ir.Hypot: {goRef: math.Hypot, ref: mathref.Of("hypot"), ranges: accBy(
		[]accRange{accR2("±[1e-300,1e300]²", accLogu(1e-300, 1e300, true), accLogu(1e-300, 1e300, true)),
			accR2("[-2,2]²", accUni(-2, 2), accUni(-2, 2))},
		[]accRange{accR2("±[1e-30,1e30]²", accLogu(1e-30, 1e30, true), accLogu(1e-30, 1e30, true)),
			accR2("[-2,2]²", accUni(-2, 2), accUni(-2, 2))})},
}

// accDiv is division, correctly rounded on every backend.
var accDiv = &accFunc{name: "div", arity: 2, exact: true,
	goRef: func(x, y float64) float64 { return x / y },
	ranges: func(f32 bool) []accRange {
		return []accRange{accR2("bits²", accBits(f32, true), accBits(f32, true)), accR2("[-10,10]²", accUni(-10, 10), accUni(-10, 10))}
	}}

// accFuncList is every intrinsic (in ir.Intrinsics order) and division;
// missing lists intrinsics without an entry above, so that a new
// intrinsic cannot go untested.
func accFuncList() (list []*accFunc, missing []ir.Intrinsic) {
	for _, fn := range ir.Intrinsics() {
		f := accFuncs[fn]
		if f == nil {
			missing = append(missing, fn)
			continue
		}
		list = append(list, f)
	}
	return append(list, accDiv), missing
}

// init names the entries of accFuncs after their intrinsics.
func init() {
	for fn, f := range accFuncs {
		f.name, f.fn, f.arity = fn.String(), fn, fn.Arity()
	}
}

// goValue is what Go computes: for f32, float32 of the float64 function of
// the widened arguments, as the CPU backend does. (For division and sqrt
// that double rounding equals the correctly rounded float32 result.)
func (f *accFunc) goValue(f32 bool, x, y float64) float64 {
	v := f.goRef(x, y)
	if f32 {
		return float64(float32(v))
	}
	return v
}

// accEdges are the edge inputs of a type, both signs, deduplicated after
// rounding to the type, and NaN.
func accEdges(f32 bool) []float64 {
	maxf, minNorm, minSub := math.MaxFloat64, 0x1p-1022, 0x1p-1074
	if f32 {
		maxf, minNorm, minSub = math.MaxFloat32, 0x1p-126, 0x1p-149
	}
	pio2 := math.Pi / 2
	pos := []float64{
		0, minSub, 2 * minSub, minNorm - minSub, minNorm, minNorm + minSub, 1e-300, 1e-40, 1e-30,
		0x1p-28, 0x1p-27, 1e-8, 1e-4, 0.1, 0.25, 0.5, math.Sqrt2 / 2,
		// ±1 and its neighbours, near 1 for log and acos.
		1 - 0x1p-53, 1 - 0x1p-24, 1 - 1e-10, 0.999, 1, 1 + 0x1p-52, 1 + 0x1p-23, 1 + 1e-10, 1.001,
		1.5, 2, math.E, 3, 4, 5, 7, 10, 22, 44, 100,
		// Multiples of π/2 up to huge, and hard cases for the reduction.
		math.Pi / 4, pio2, math.Pi, 3 * pio2, 2 * math.Pi, 5 * pio2, 10 * math.Pi, 100 * pio2, 1e3 * pio2,
		1e6 * pio2, 0x1p20 * pio2, 0x1p27, 0x1p27 + 1, 0x1p30 * pio2, 0x1p52, 0x1p53, 0x1p63, 0x1p100 * pio2,
		1e22, 1e300, 6381956970095103 * 0x1p797, 0x1p1023, maxf, math.Inf(1),
		// Thresholds of exp, exp2, sinh, cosh: f32 ...
		87.33, 88.72, 88.7228, 88.73, 89.41, 89.42, 103.27, 103.28, 103.97, 104, 126, 127, 127.99, 128, 149, 150,
		// ... and f64 (709.09: Go's amd64 Exp overflows above it).
		708.39, 708.4, 709.09, 709.1, 709.5, 709.78, 709.79, 710, 710.47, 710.48, 710.5,
		744.44, 745.13, 745.14, 746, 1022, 1023.99, 1024, 1074, 1075, 1075.5,
		// Exponents of pow: half-integers, odd and even integers up to 2^53 and beyond.
		2.5, 0.5 + 0x1p30, 1<<53 - 1, 1e10,
	}
	seen := map[uint64]bool{}
	var out []float64
	for _, x := range pos {
		for _, v := range []float64{x, -x} {
			if f32 {
				v = float64(float32(v))
			}
			if b := math.Float64bits(v); !seen[b] {
				seen[b] = true
				out = append(out, v)
			}
		}
	}
	return append(out, math.NaN())
}

// accInputs are the inputs of f for a type: the edges (every pair of them
// for two-argument functions), then n random draws per range.
func accInputs(f *accFunc, f32 bool, n int) (xs, ys []float64) {
	edges := accEdges(f32)
	if f.arity == 1 {
		xs = append(xs, edges...)
	} else {
		for _, x := range edges {
			for _, y := range edges {
				xs, ys = append(xs, x), append(ys, y)
			}
		}
	}
	seed := uint64(0)
	if f32 {
		seed = 1
	}
	r := rand.New(rand.NewPCG(uint64(f.fn)+100, seed))
	rt := func(v float64) float64 {
		if f32 {
			return float64(float32(v))
		}
		return v
	}
	for _, rg := range f.ranges(f32) {
		for range n {
			xs = append(xs, rt(rg.x(r)))
			if f.arity == 2 {
				ys = append(ys, rt(rg.y(r)))
			}
		}
	}
	return xs, ys
}
