package codegencheck

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

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/mathref"
	"github.com/quadrants-go/qd/internal/testarchs"
)

// Numeric accuracy of every math intrinsic, end to end: a kernel applies
// the function elementwise, compiled by qd.Compile (accSource), runs on
// every backend of the behaviour suite, and its results are compared per
// element.
//
//   - CPU: the backend promises Go's math exactly (float32 functions as
//     float32(math.F(float64(x)))), so every result must be bit-identical
//     to Go's (NaN only as a class: Go does not define NaN payloads).
//   - CUDA: the devmath subroutines promise ≤ 2 ulp (f64) and ≤ 1 ulp (f32;
//     in fact 0.5 + 2^-28) of the exact value. Go's math is not a usable
//     yardstick there: it is itself thousands of ulps off in places (Acos
//     and Log2 near 1, Pow with large |y|, Sin of large arguments below
//     Payne–Hanek's threshold, Log of subnormals on amd64, Exp above
//     709.09 on amd64 overflowing, Sinh/Cosh overflowing before 710.48,
//     Atan2's sign when y/x underflows), so the reference is the exact
//     value, computed with math/big (internal/mathref, which the devmath
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
// those the devmath package asserts for its model of the very same PTX.
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

// accName is the name of the kernel of f for type t: acc_<function>_<type>.
func accName(f *accFunc, t ir.Type) string { return "acc_" + f.name + "_" + t.String() }

// accSource is the Go source of the accuracy kernels, one per function and
// type: out[i] = f(x[i]) or f(x[i], y[i]) (qd.Sin and the like; division
// is x[i] / y[i]). The front end builds each as one intrinsic call in a
// parallel loop.
func accSource() string {
	list, _ := accFuncList()
	var b strings.Builder
	b.WriteString("package acc\n\nimport \"github.com/quadrants-go/qd\"\n")
	for _, f := range list {
		for _, t := range []ir.Type{ir.F32, ir.F64} {
			params, args := "x, out", "x[i]"
			if f.arity == 2 {
				params, args = "x, y, out", "x[i], y[i]"
			}
			v := "qd." + strings.ToUpper(f.name[:1]) + f.name[1:] + "(" + args + ")"
			if f.fn == 0 {
				v = "x[i] / y[i]"
			}
			elem := map[ir.Type]string{ir.F32: "float32", ir.F64: "float64"}[t]
			fmt.Fprintf(&b, "\n//qd:kernel\nfunc %s(%s []%s) {\n\tfor i := range len(out) {\n\t\tout[i] = %s\n\t}\n}\n", accName(f, t), params, elem, v)
		}
	}
	return b.String()
}

// accRun launches k on the inputs converted to T and returns the results
// as float64.
func accRun[T float32 | float64](k *qd.Kernel, arity int, xs, ys []float64) ([]float64, error) {
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

// archs runs the accuracy test on the backends of the behaviour suite,
// with its rule: with QD_GPU_RUN=1 a missing CUDA fails it.
// On a Vulkan device that runs on the CPU (lavapipe, whose fma is not
// fused) the results are measured and logged, not held to the GPUs'
// bounds.
var archs = testarchs.New(func(a qd.Arch) (*qd.Program, error) { return qd.Init(qd.WithArch(a)) }, qd.CPU, qd.CUDA, qd.AMDGPU, qd.Vulkan)

func TestMain(m *testing.M) { archs.Main(m) }

// nvidiaVulkanOff are the float64 operations NVIDIA's Vulkan driver (580)
// leaves off in a few cases that the generator's fma corrections do not
// reach: quotients with subnormal results (1 ulp, and ±5e-324 as ±0) and
// the square roots of the largest values below 1 and of MaxFloat64 (1
// ulp). They are logged there, not failed (docs/accuracy.md).
var nvidiaVulkanOff = map[string]bool{"div": true, "sqrt": true}

func TestMathAccuracy(t *testing.T) {
	list, missing := accFuncList()
	if len(missing) > 0 {
		t.Errorf("intrinsics without an accuracy entry: %v", missing)
	}
	nRand := accSamples()
	for _, arch := range archs.Archs(t) {
		t.Run(arch.String(), func(t *testing.T) {
			p, err := qd.Init(qd.WithArch(arch))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := p.Close(); err != nil {
					t.Errorf("Program.Close: %v", err)
				}
			}()
			mod, err := qd.Compile(p, accSource(), qd.WithFilename("accuracy.go"))
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close()
			var results []*accResult
			for _, f := range list {
				for _, typ := range []ir.Type{ir.F32, ir.F64} {
					f32 := typ == ir.F32
					res := &accResult{name: f.name, typ: typ.String()}
					results = append(results, res)
					t.Run(f.name+"/"+typ.String(), func(t *testing.T) {
						k, err := mod.Kernel(accName(f, typ))
						if err != nil {
							t.Fatal(err)
						}
						defer k.Close()
						xs, ys := accInputs(f, f32, nRand)
						var got []float64
						if f32 {
							got, err = accRun[float32](k, f.arity, xs, ys)
						} else {
							got, err = accRun[float64](k, f.arity, xs, ys)
						}
						if err != nil {
							t.Fatal(err)
						}
						if p.Arch() == qd.CPU {
							accCompareCPU(f, f32, xs, ys, got, res)
						} else {
							accCompareExact(f, f32, xs, ys, got, res)
						}
						res.n = len(xs)
						report := t.Error
						switch {
						case p.Arch() == qd.Vulkan && p.Device().Software:
							report = t.Log // measured, not bounded (above)
						case p.Arch() == qd.Vulkan && strings.Contains(p.Device().Name, "NVIDIA") && typ == ir.F64 && nvidiaVulkanOff[f.name]:
							report = t.Log // the driver's known defect (docs/accuracy.md)
						}
						for _, m := range res.bad {
							report(m)
						}
						if res.nBad > len(res.bad) {
							report(fmt.Sprintf("... %d failures in all", res.nBad))
						}
					})
				}
			}
			t.Logf("accuracy on %s (%s): max ulp per function; CPU: against Go's math (0 = bit-identical); GPU: against the exact value\n%s",
				p.Arch(), p.Device(), accTable(results))
		})
	}
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
// the devmath model's).
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
