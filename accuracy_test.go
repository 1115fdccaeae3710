package qd

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/mathref"
)

// Numeric accuracy of every math intrinsic, end to end: a kernel built with
// the IR builder applies the function elementwise, runs on every backend of
// the suite, and its results are compared per element.
//
//   - CPU: the backend promises Go's math exactly (float32 functions as
//     float32(math.F(float64(x)))), so every result must be bit-identical
//     to Go's (NaN only as a class: Go does not define NaN payloads).
//   - CUDA: the ptxmath subroutines promise ≤ 2 ulp (f64) and ≤ 1 ulp (f32;
//     in fact 0.5 + 2^-28) of the exact value. Go's math is not a usable
//     yardstick there: it is itself thousands of ulps off in places (Acos
//     and Log2 near 1, Pow with large |y|, Sin of large arguments below
//     Payne–Hanek's threshold, Log of subnormals on amd64, Exp above
//     709.09 on amd64 overflowing, Sinh/Cosh overflowing before 710.48,
//     Atan2's sign when y/x underflows), so the reference is the exact
//     value, computed with math/big (internal/mathref, which the ptxmath
//     model tests measure against too), rounded to the result type.
//     Sqrt, division, Floor, Ceil, Trunc, Round, Abs and Mod are exact or
//     correctly rounded: 0 ulp, i.e. bit-identical to Go.
//
// Special values are exact on every backend: where an input is ±Inf or NaN,
// where Go's result is NaN, and where the exact result is exactly zero, the
// result must be Go's bit for bit (so NaN is NaN, zeros keep their sign,
// ±Inf is ±Inf); where the exact result overflows it must be the same ±Inf,
// and where it underflows to zero, a zero or subnormal of the right sign
// within the bound.
//
// Inputs: edge cases (signed zeros, subnormals, the normal/subnormal
// boundary, ±1 and its neighbours, multiples of π/2 up to huge, 1e22,
// 1e300, MaxFloat, ±Inf, NaN, the overflow and underflow thresholds of exp,
// exp2, sinh and cosh, integer and half-integer exponents of pow; every
// pair of them for the two-argument functions) plus random inputs over each
// function's meaningful ranges (fixed seeds; 1000 per range, 200 with
// -short). The max ulp per function and type is logged as a markdown table
// (t.Logf), which is how the GPU run produces docs/accuracy.md's column.

// accF64Bound and accF32Bound are the CUDA bounds against the exact value,
// those the ptxmath package asserts for its model of the very same PTX.
const (
	accF64Bound = 2.0
	accF32Bound = 1.0
)

// ---------------------------------------------------------------------------
// Measuring against the exact references (internal/mathref).

// accErrExact is |got − exact| in ulps of the exact value rounded to the
// result type; +Inf when got is non-finite but the rounded value is not
// (or vice versa), or when a zero or underflowed result has the wrong sign.
func accErrExact(got float64, exact *big.Float, f32 bool) float64 {
	want := mathref.RoundTo(exact, f32)
	if math.IsInf(want, 0) || math.IsInf(got, 0) || math.IsNaN(got) {
		if got == want {
			return 0
		}
		return math.Inf(1)
	}
	if (got != 0 || want == 0) && math.Signbit(got) != (exact.Sign() < 0) {
		return math.Inf(1)
	}
	d, _ := mathref.New().Sub(mathref.Float(got), exact).Float64()
	return math.Abs(d) / mathref.Ulp(want, f32)
}

// sameValue: both NaN, or the same bits (so signed zeros differ).
func accSameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func accFinite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// ---------------------------------------------------------------------------
// Functions, their Go meaning, references and input ranges.

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

// accKernel: out[i] = f(x[i]) or f(x[i], y[i]), in type t.
func accKernel(f *accFunc, t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("acc_" + f.name + "_" + t.String())
	x := b.Array("x", t, 1)
	var y *ir.Param
	if f.arity == 2 {
		y = b.Array("y", t, 1)
	}
	out := b.Array("out", t, 1)
	b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		args := []ir.Expr{ir.Ld(x, ir.Ref(i))}
		if y != nil {
			args = append(args, ir.Ld(y, ir.Ref(i)))
		}
		var v ir.Expr
		if f.fn == 0 {
			v = ir.Op(ir.Div, args[0], args[1])
		} else {
			v = ir.Fn(f.fn, args...)
		}
		b.Store(out, v, ir.Ref(i))
	})
	return b.Kernel()
}

// accuracyKernels are every kernel of the accuracy test (for the ptxas check).
func accuracyKernels() []*ir.Kernel {
	list, _ := accFuncList()
	var ks []*ir.Kernel
	for _, f := range list {
		for _, t := range []ir.Type{ir.F32, ir.F64} {
			ks = append(ks, accKernel(f, t))
		}
	}
	return ks
}

// accRun launches k on the inputs converted to T and returns the results
// as float64.
func accRun[T float32 | float64](k *Kernel, arity int, xs, ys []float64) ([]float64, error) {
	conv := func(v []float64) []T {
		out := make([]T, len(v))
		for i, x := range v {
			out[i] = T(x)
		}
		return out
	}
	out := make([]T, len(xs))
	var err error
	if arity == 2 {
		err = k.Launch(conv(xs), conv(ys), out)
	} else {
		err = k.Launch(conv(xs), out)
	}
	res := make([]float64, len(out))
	for i, v := range out {
		res[i] = float64(v)
	}
	return res, err
}

// accCheck judges one GPU result: its error in ulps against the exact value
// (0 where the result must be Go's bit for bit), and whether it passes.
func (f *accFunc) accCheck(f32 bool, x, y, got float64) (float64, bool) {
	want := f.goValue(f32, x, y)
	exactly := func() (float64, bool) {
		if accSameValue(got, want) {
			return 0, true
		}
		return math.Inf(1), false
	}
	if f.exact || !accFinite(x) || (f.arity == 2 && !accFinite(y)) || math.IsNaN(want) {
		return exactly()
	}
	ex, ok := f.ref(x, y)
	if !ok || ex.Sign() == 0 {
		return exactly() // Go's special results (exact zeros keep Go's sign)
	}
	bound := accF64Bound
	if f32 {
		bound = accF32Bound
	}
	e := accErrExact(got, ex, f32)
	return e, e <= bound
}

type accResult struct {
	name, typ string
	n         int
	maxUlp    float64
	at        [2]float64
	bad       []string
	nBad      int
}

func accSamples() int {
	if testing.Short() {
		return 200
	}
	return 1000
}

func TestMathAccuracy(t *testing.T) {
	list, missing := accFuncList()
	if len(missing) > 0 {
		t.Errorf("intrinsics without an accuracy entry: %v", missing)
	}
	nRand := accSamples()
	forEachArch(t, func(t *testing.T, p *Program) {
		var results []*accResult
		for _, f := range list {
			for _, typ := range []ir.Type{ir.F32, ir.F64} {
				f32 := typ == ir.F32
				res := &accResult{name: f.name, typ: typ.String()}
				results = append(results, res)
				t.Run(f.name+"/"+typ.String(), func(t *testing.T) {
					k := must[*Kernel](t)(buildKernel(p, accKernel(f, typ)))
					defer k.Close()
					xs, ys := accInputs(f, f32, nRand)
					var got []float64
					var err error
					if f32 {
						got, err = accRun[float32](k, f.arity, xs, ys)
					} else {
						got, err = accRun[float64](k, f.arity, xs, ys)
					}
					check(t, err)
					if p.Arch() == CPU {
						accCompareCPU(f, f32, xs, ys, got, res)
					} else {
						accCompareExact(f, f32, xs, ys, got, res)
					}
					res.n = len(xs)
					for _, m := range res.bad {
						t.Error(m)
					}
					if res.nBad > len(res.bad) {
						t.Errorf("... %d failures in all", res.nBad)
					}
				})
			}
		}
		t.Logf("accuracy on %s (%s): max ulp per function; CPU: against Go's math (0 = bit-identical); GPU: against the exact value\n%s",
			p.Arch(), p.Device(), accTable(results))
	})
}

// accCompareCPU demands Go's bits.
func accCompareCPU(f *accFunc, f32 bool, xs, ys, got []float64, res *accResult) {
	for i, g := range got {
		y := 0.0
		if f.arity == 2 {
			y = ys[i]
		}
		if want := f.goValue(f32, xs[i], y); !accSameValue(g, want) {
			res.addBad(fmt.Sprintf("%s %s(%s) = %s, Go's math gives %s", f.name, res.typ, accArgs(f, xs[i], y), accFmt(g), accFmt(want)))
		}
	}
}

// accCompareExact checks every result against the exact value, spread
// over the cores (the math/big references cost tens of µs each).
func accCompareExact(f *accFunc, f32 bool, xs, ys, got []float64, res *accResult) {
	workers := runtime.GOMAXPROCS(0)
	parts := make([]accResult, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := &parts[w]
			part.typ = res.typ
			for i := w; i < len(got); i += workers {
				y := 0.0
				if f.arity == 2 {
					y = ys[i]
				}
				e, ok := f.accCheck(f32, xs[i], y, got[i])
				if !ok {
					want := f.goValue(f32, xs[i], y)
					part.addBad(fmt.Sprintf("%s %s(%s) = %s (%.3g ulp from the exact value; Go's math gives %s)",
						f.name, res.typ, accArgs(f, xs[i], y), accFmt(got[i]), e, accFmt(want)))
				}
				if ok && e > part.maxUlp {
					part.maxUlp, part.at = e, [2]float64{xs[i], y}
				}
			}
		}()
	}
	wg.Wait()
	for _, part := range parts {
		if part.maxUlp > res.maxUlp {
			res.maxUlp, res.at = part.maxUlp, part.at
		}
		for _, m := range part.bad {
			res.addBad(m)
		}
		res.nBad += part.nBad - len(part.bad)
	}
}

func (r *accResult) addBad(msg string) {
	r.nBad++
	if len(r.bad) < 8 {
		r.bad = append(r.bad, msg)
	}
}

func accArgs(f *accFunc, x, y float64) string {
	if f.arity == 2 {
		return accFmt(x) + ", " + accFmt(y)
	}
	return accFmt(x)
}

func accFmt(v float64) string { return fmt.Sprintf("%.17g [%#016x]", v, math.Float64bits(v)) }

func accTable(results []*accResult) string {
	sort.SliceStable(results, func(i, j int) bool { return results[i].name < results[j].name })
	var sb strings.Builder
	sb.WriteString("| function | type | max ulp | at | inputs | failures |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		at := ""
		if r.maxUlp > 0 {
			at = fmt.Sprintf("%.17g", r.at[0])
			if strings.Contains(r.name, "atan2") || r.name == "pow" || r.name == "hypot" || r.name == "mod" || r.name == "div" {
				at += fmt.Sprintf(", %.17g", r.at[1])
			}
		}
		fmt.Fprintf(&sb, "| %s | %s | %.3f | %s | %d | %d |\n", r.name, r.typ, r.maxUlp, at, r.n, r.nBad)
	}
	return sb.String()
}

// TestAccuracyReference checks the math/big references themselves, on the
// machine running the tests (no backend): their constants against Go's, and
// Go's math against them at random inputs where Go is known to be accurate
// (≤ 2 ulp). A wrong reference would otherwise show up only as a GPU
// failure. The regions where Go is known to be far off are excluded here;
// TestMathAccuracy measures the GPU against the references there too.
func TestAccuracyReference(t *testing.T) {
	for _, k := range []struct {
		name string
		got  *big.Float
		want float64
	}{{"π", mathref.Pi(), math.Pi}, {"ln 2", mathref.Ln2(), math.Ln2}, {"ln 10", mathref.Ln10(), math.Ln10}} {
		if v, _ := k.got.Float64(); v != k.want {
			t.Errorf("%s = %v, want %v", k.name, v, k.want)
		}
	}
	list, _ := accFuncList()
	per := 40
	if testing.Short() {
		per = 12
	}
	for _, f := range list {
		if f.exact {
			continue
		}
		for _, f32 := range []bool{false, true} {
			r := rand.New(rand.NewPCG(uint64(f.fn)+7, 3))
			worst, at := 0.0, [2]float64{}
			for _, rg := range f.ranges(f32) {
				for range per {
					x, y := rg.x(r), 0.0
					if rg.y != nil {
						y = rg.y(r)
					}
					if f32 {
						x, y = float64(float32(x)), float64(float32(y))
					}
					if accGoKnownOff(f.fn, x, y) {
						continue
					}
					want := f.goValue(f32, x, y)
					ex, ok := f.ref(x, y)
					if !ok || math.IsNaN(want) || ex.Sign() == 0 {
						continue
					}
					if e := accErrExact(want, ex, f32); e > worst {
						worst, at = e, [2]float64{x, y}
					}
				}
			}
			if worst > 2 {
				t.Errorf("%s f32=%v: Go's math is %.3g ulp from the reference at %v: the reference is wrong", f.name, f32, worst, at)
			}
		}
	}
}

// goKnownOff reports the inputs where Go's float64 math is known to be more
// than 2 ulp from the exact value (measured against these references and
// the ptxmath model's).
func accGoKnownOff(fn ir.Intrinsic, x, y float64) bool {
	switch fn {
	case ir.Log, ir.Log10:
		return x < 0x1p-1022 // amd64 assembly Log mishandles subnormals
	case ir.Log2:
		return math.Abs(x-1) < 0.25 // log2 = exponent + Log(frac)/ln2 cancels near 1
	case ir.Exp:
		return x > 709.08 // amd64 assembly Exp overflows early
	case ir.Sinh, ir.Cosh:
		return math.Abs(x) > 709 // Exp(x)/2 overflows before the result does
	case ir.Sin, ir.Cos, ir.Tan:
		return math.Abs(x) > 1e3 // Cody–Waite with a short π/4 below 2^29
	case ir.Asin, ir.Acos:
		return math.Abs(x) > 0.5 // π/2 − asin cancels; asin near 1 loses bits
	case ir.Atan2:
		return math.Abs(y/x) < 1e-290 || math.Abs(x/y) < 1e-290 // sign of a huge ratio's tiny quotient
	case ir.Pow:
		// Integer part of y by repeated squaring, fraction by Exp(yf·Log x):
		// both lose bits in proportion to |y| and |y·ln x|.
		return math.Abs(y) > 4 || math.Abs(y*math.Log(math.Abs(x))) > 2
	}
	return false
}
