package devmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Accuracy of the model (= the PTX, instruction for instruction) over random
// inputs. Each range draws QD_DEVMATH_SAMPLES inputs (default 20000; the
// first tenth, at most 2000 by default, also against the math/big
// reference). Errors are in ulps of the result type:
//
//	go:    against Go's math (f32: float32 of the float64 result)
//	exact: against the exact value (f32: its float32 rounding)
//
// Set QD_DEVMATH_TABLE=path to write the markdown table.

type gen func(r *rand.Rand) float64

func uni(lo, hi float64) gen { return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() } }

// logu draws |x| log-uniformly in [lo, hi] with a random sign if signed.
func logu(lo, hi float64, signed bool) gen {
	a, b := math.Log(lo), math.Log(hi)
	return func(r *rand.Rand) float64 {
		x := math.Exp(a + (b-a)*r.Float64())
		if signed && r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

// bitsU draws uniformly over the bit patterns of positive finite doubles.
func bitsU(signed bool) gen {
	return func(r *rand.Rand) float64 {
		x := math.Float64frombits(r.Uint64N(0x7FF0000000000000))
		if signed && r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

// nearPio2 draws doubles next to k·π/2 for k up to kmax.
func nearPio2(kmax int) gen {
	return func(r *rand.Rand) float64 {
		x := float64(r.IntN(kmax)+1) * math.Pi / 2
		u := math.Float64bits(x) + uint64(r.IntN(7)) - 3
		return math.Float64frombits(u)
	}
}

type rng1 struct {
	name string
	g    gen
}

type fspec struct {
	fn    ir.Intrinsic
	goRef func(x, y float64) float64
	r64   [][2]rng1 // ranges: element 1 is the y generator for 2-argument functions
	r32   [][2]rng1
}

func one(name string, g gen) [2]rng1 { return [2]rng1{{name, g}, {}} }
func two(nx string, gx gen, ny string, gy gen) [2]rng1 {
	return [2]rng1{{nx, gx}, {ny, gy}}
}

func g1(f func(float64) float64) func(x, y float64) float64 {
	return func(x, _ float64) float64 { return f(x) }
}

var specs = []fspec{
	{ir.Exp, g1(math.Exp),
		[][2]rng1{one("[-745.2,709.8]", uni(-745.2, 709.8)), one("[-1,1]", uni(-1, 1)), one("±[1e-20,1]", logu(1e-20, 1, true))},
		[][2]rng1{one("[-104,88.8]", uni(-104, 88.8)), one("[-1,1]", uni(-1, 1))}},
	{ir.Exp2, g1(math.Exp2),
		[][2]rng1{one("[-1075,1024]", uni(-1075, 1024)), one("[-1,1]", uni(-1, 1))},
		[][2]rng1{one("[-150,128]", uni(-150, 128)), one("[-1,1]", uni(-1, 1))}},
	{ir.Log, g1(math.Log), logRanges(false), logRanges(true)},
	{ir.Log2, g1(math.Log2), logRanges(false), logRanges(true)},
	{ir.Log10, g1(math.Log10), logRanges(false), logRanges(true)},
	{ir.Sin, g1(math.Sin), trigRanges(false), trigRanges(true)},
	{ir.Cos, g1(math.Cos), trigRanges(false), trigRanges(true)},
	{ir.Tan, g1(math.Tan), trigRanges(false), trigRanges(true)},
	{ir.Asin, g1(math.Asin), asRanges(), asRanges()},
	{ir.Acos, g1(math.Acos), asRanges(), asRanges()},
	{ir.Atan, g1(math.Atan),
		[][2]rng1{one("[-4,4]", uni(-4, 4)), one("±[1e-300,1e300]", logu(1e-300, 1e300, true))},
		[][2]rng1{one("[-4,4]", uni(-4, 4)), one("±[1e-38,1e38]", logu(1e-38, 1e38, true))}},
	{ir.Atan2, math.Atan2,
		[][2]rng1{two("y ±[1e-5,1e5]", logu(1e-5, 1e5, true), "x ±[1e-5,1e5]", logu(1e-5, 1e5, true)),
			two("y ±[1e-300,1e300]", logu(1e-300, 1e300, true), "x ±[1e-300,1e300]", logu(1e-300, 1e300, true))},
		[][2]rng1{two("y ±[1e-5,1e5]", logu(1e-5, 1e5, true), "x ±[1e-5,1e5]", logu(1e-5, 1e5, true))}},
	{ir.Sinh, g1(math.Sinh),
		[][2]rng1{one("[-2,2]", uni(-2, 2)), one("[-709,709]", uni(-709, 709))},
		[][2]rng1{one("[-2,2]", uni(-2, 2)), one("[-89,89]", uni(-89, 89))}},
	{ir.Cosh, g1(math.Cosh),
		[][2]rng1{one("[-2,2]", uni(-2, 2)), one("[-709,709]", uni(-709, 709))},
		[][2]rng1{one("[-2,2]", uni(-2, 2)), one("[-89,89]", uni(-89, 89))}},
	{ir.Tanh, g1(math.Tanh),
		[][2]rng1{one("[-1,1]", uni(-1, 1)), one("[-20,20]", uni(-20, 20)), one("±[1e-10,1]", logu(1e-10, 1, true))},
		[][2]rng1{one("[-1,1]", uni(-1, 1)), one("[-10,10]", uni(-10, 10))}},
	{ir.Pow, math.Pow,
		[][2]rng1{two("x [1e-10,1e10]", logu(1e-10, 1e10, false), "y [-30,30]", uni(-30, 30)),
			two("x [0.5,2]", uni(0.5, 2), "y ±[1,1e4]", logu(1, 1e4, true)),
			two("x [-10,10]", uni(-10, 10), "y int [-40,40]", func(r *rand.Rand) float64 { return float64(r.IntN(81) - 40) }),
			two("x [1e-300,1e300]", logu(1e-300, 1e300, false), "y [-1,1]", uni(-1, 1))},
		[][2]rng1{two("x [1e-5,1e5]", logu(1e-5, 1e5, false), "y [-7,7]", uni(-7, 7)),
			two("x [0.5,2]", uni(0.5, 2), "y ±[1,100]", logu(1, 100, true))}},
	{ir.Mod, math.Mod,
		[][2]rng1{two("x ±[1e-300,1e300]", logu(1e-300, 1e300, true), "y ±[1e-300,1e300]", logu(1e-300, 1e300, true)),
			two("x bits", bitsU(true), "y bits", bitsU(true))},
		[][2]rng1{two("x ±[1e-38,1e38]", logu(1e-38, 1e38, true), "y ±[1e-38,1e38]", logu(1e-38, 1e38, true))}},
	{ir.Hypot, math.Hypot,
		[][2]rng1{two("x ±[1e-300,1e300]", logu(1e-300, 1e300, true), "y ±[1e-300,1e300]", logu(1e-300, 1e300, true)),
			two("x [-2,2]", uni(-2, 2), "y [-2,2]", uni(-2, 2))},
		[][2]rng1{two("x ±[1e-30,1e30]", logu(1e-30, 1e30, true), "y ±[1e-30,1e30]", logu(1e-30, 1e30, true))}},
}

func logRanges(f32 bool) [][2]rng1 {
	if f32 {
		return [][2]rng1{one("[1e-45,3e38]", logu(1e-45, 3e38, false)), one("[0.5,2]", uni(0.5, 2))}
	}
	return [][2]rng1{one("[5e-324,1.8e308]", logu(5e-324, 1.7e308, false)), one("[0.5,2]", uni(0.5, 2)),
		one("1±[1e-16,1e-2]", func(r *rand.Rand) float64 { return 1 + logu(1e-16, 1e-2, true)(r) })}
}

func trigRanges(f32 bool) [][2]rng1 {
	if f32 {
		return [][2]rng1{one("[-π,π]", uni(-math.Pi, math.Pi)), one("±[1e-10,3e38]", logu(1e-10, 3e38, true))}
	}
	return [][2]rng1{one("[-π,π]", uni(-math.Pi, math.Pi)), one("[-1e5,1e5]", uni(-1e5, 1e5)),
		one("±[1e-10,1e308]", logu(1e-10, 1e308, true)), one("near kπ/2, k<1e6", nearPio2(1000000))}
}

func asRanges() [][2]rng1 {
	return [][2]rng1{one("[-1,1]", uni(-1, 1)),
		one("±(1−[1e-16,0.1])", func(r *rand.Rand) float64 {
			x := 1 - logu(1e-16, 0.1, false)(r)
			if r.IntN(2) == 0 {
				return -x
			}
			return x
		})}
}

func samples() int {
	if s := os.Getenv("QD_DEVMATH_SAMPLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err == nil {
			return n
		}
	}
	if testing.Short() {
		return 4000
	}
	return 20000
}

type result struct {
	fn              ir.Intrinsic
	t               ir.Type
	goErr, exactErr float64
	goAt, exactAt   [2]float64
	n               int
	ranges          []string
}

func measure(sp fspec, t ir.Type, n int) result {
	f32 := t == ir.F32
	p, err := build(sp.fn, t)
	if err != nil {
		panic(err)
	}
	cp := compile(p)
	var m machine
	res := result{fn: sp.fn, t: t}
	ranges := sp.r64
	if f32 {
		ranges = sp.r32
	}
	nExact := n / 10
	if nExact > 2000 && os.Getenv("QD_DEVMATH_SAMPLES") == "" {
		nExact = 2000
	}
	r := rand.New(rand.NewPCG(uint64(sp.fn), uint64(t)))
	for _, rg := range ranges {
		desc := rg[0].name
		if rg[1].g != nil {
			desc += ", " + rg[1].name
		}
		res.ranges = append(res.ranges, desc)
		for i := 0; i < n; i++ {
			x := rg[0].g(r)
			y := 0.0
			if rg[1].g != nil {
				y = rg[1].g(r)
			}
			var got, want float64
			if f32 {
				x, y = float64(float32(x)), float64(float32(y))
				got = float64(math.Float32frombits(uint32(cp.run(&m, uint64(math.Float32bits(float32(x))), uint64(math.Float32bits(float32(y)))))))
				want = float64(float32(sp.goRef(x, y)))
			} else {
				got = f(cp.run(&m, fb(x), fb(y)))
				want = sp.goRef(x, y)
			}
			res.n++
			if e := ulpErr(got, want, f32); e > res.goErr {
				res.goErr, res.goAt = e, [2]float64{x, y}
			}
			if i < nExact && !math.IsNaN(want) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				// No reference: Go's special result, measured above.
				if ex, ok := refValue(sp.fn, x, y); ok {
					if e := exactErr(got, ex, f32); e > res.exactErr {
						res.exactErr, res.exactAt = e, [2]float64{x, y}
					}
				}
			}
		}
	}
	return res
}

// limits are the asserted bounds against the exact value (f64, f32).
var limits = map[ir.Type]float64{ir.F64: 2, ir.F32: 1}

func TestAccuracy(t *testing.T) {
	n := samples()
	var mu sync.Mutex
	var all []result
	var wg sync.WaitGroup
	for _, sp := range specs {
		for _, ty := range []ir.Type{ir.F64, ir.F32} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := measure(sp, ty, n)
				mu.Lock()
				all = append(all, r)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	sort.Slice(all, func(i, j int) bool {
		if all[i].fn != all[j].fn {
			return all[i].fn < all[j].fn
		}
		return all[i].t > all[j].t
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "| function | type | max ulp vs exact | max ulp vs Go math | samples | input ranges |\n|---|---|---|---|---|---|\n")
	for _, r := range all {
		fmt.Fprintf(&sb, "| %v | %v | %.3f | %.3f | %d | %s |\n", r.fn, r.t, r.exactErr, r.goErr, r.n, strings.Join(r.ranges, "; "))
		if r.exactErr > limits[r.t] {
			t.Errorf("%v %v: %.3f ulp from the exact value at %v", r.fn, r.t, r.exactErr, r.exactAt)
		}
		if r.goErr > 2 {
			t.Logf("note: %v %v is %.3g ulp from Go's math at %v (Go's own error; see exact column)", r.fn, r.t, r.goErr, r.goAt)
		}
	}
	t.Log("\n" + sb.String())
	if p := os.Getenv("QD_DEVMATH_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
