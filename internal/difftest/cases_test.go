package difftest

// The cases of the differential tests: for each kernel, how to make its
// arguments and how closely its results must match the native run.

import (
	"math"
	"math/rand/v2"
	"unsafe"
)

// ---- generators ----

type integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

func bitsOf[T any]() uint { var z T; return uint(8 * unsafe.Sizeof(z)) }

// randInt draws the edge values (0, ±1, the extremes) an eighth of the
// time, small values a quarter of the time, and any bit pattern otherwise.
func randInt[T integer](r *rand.Rand) T {
	top := T(uint64(1) << (bitsOf[T]() - 1)) // MinInt of signed types
	switch r.IntN(8) {
	case 0:
		specials := []T{0, 1, ^T(0), top, top - 1, top + 1, 2}
		return specials[r.IntN(len(specials))]
	case 1, 2:
		return T(int64(r.IntN(41) - 20)) // small, and for unsigned types: near the top
	}
	return T(r.Uint64())
}

func ints[T integer](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = randInt[T](r)
	}
	return s
}

// shifts draws shift counts below, at and beyond the width of T.
func shifts[S integer](r *rand.Rand, n int, width int) []S {
	s := make([]S, n)
	for i := range s {
		switch r.IntN(6) {
		case 0:
			s[i] = S(width - 1 + r.IntN(3)) // width-1, width, width+1
		case 1:
			s[i] = S(r.IntN(4 * width))
		case 2:
			s[i] = ^S(0) - S(r.IntN(2)) // huge counts
		default:
			s[i] = S(r.IntN(width))
		}
	}
	return s
}

// randFloat draws special values (±0, ±Inf, NaN, the smallest subnormal,
// the extremes), small integers, moderate values and values of every
// magnitude (which overflow or become subnormal as float32).
func randFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		specials := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
			math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat32, math.MaxFloat64, math.MaxFloat32, 0x1p-126, 0.5}
		return specials[r.IntN(len(specials))]
	case 1:
		return float64(r.IntN(21) - 10)
	case 2, 3:
		return logUniform(r, 1e-45, 1e45, true)
	}
	return 20*r.Float64() - 10
}

func floats[T float32 | float64](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(randFloat(r))
	}
	return s
}

// logUniform draws |x| with a uniformly distributed logarithm in [lo, hi].
func logUniform(r *rand.Rand, lo, hi float64, signed bool) float64 {
	x := math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))*r.Float64())
	if signed && r.IntN(2) == 0 {
		x = -x
	}
	return x
}

func uniform(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// grid makes an n×m array filled by f.
func grid[T any](n, m int, f func(i, j int) T) [][]T {
	g := make([][]T, n)
	for i := range g {
		g[i] = make([]T, m)
		for j := range g[i] {
			g[i][j] = f(i, j)
		}
	}
	return g
}

func zeros[T any](n, m int) [][]T { return grid(n, m, func(int, int) T { var z T; return z }) }

func bools(r *rand.Rand, n int) []bool {
	s := make([]bool, n)
	for i := range s {
		s[i] = r.IntN(2) == 0
	}
	return s
}

// ---- the cases ----

// intCase is the arith* kernel of T with shift counts of type S.
func intCase[T, S integer](kernel string, fn func(a, b []T, sh []S, out [][]T, cmp [][]bool)) diffCase {
	return diffCase{kernel: kernel, fn: fn, gen: func(r *rand.Rand, n int) []any {
		a, b := ints[T](r, n), ints[T](r, n)
		if n > 0 {
			// MinInt / -1 wraps to MinInt in Go, and MinInt % -1 is 0.
			a[0], b[0] = T(uint64(1)<<(bitsOf[T]()-1)), ^T(0)
		}
		return []any{a, b, shifts[S](r, n, int(bitsOf[T]())), zeros[T](n, 19), zeros[bool](n, 7)}
	}}
}

func floatCase[T float32 | float64](kernel string, fn func(a, b []T, out [][]T, cmp [][]bool)) diffCase {
	return diffCase{kernel: kernel, fn: fn, gen: func(r *rand.Rand, n int) []any {
		return []any{floats[T](r, n), floats[T](r, n), zeros[T](n, 15), zeros[bool](n, 8)}
	}}
}

func atomicIntCase[T integer](kernel string, fn func(v []T, acc, old [][]T, shared []T)) diffCase {
	return diffCase{kernel: kernel, fn: fn, gen: func(r *rand.Rand, n int) []any {
		v := ints[T](r, n)
		acc := grid(n, 9, func(i, j int) T {
			if j == 8 && r.IntN(2) == 0 {
				return v[i] // the CAS succeeds
			}
			return randInt[T](r)
		})
		shared := ints[T](r, 7)
		shared[4] = ^T(0) // an AND starts from all ones
		return []any{v, acc, zeros[T](n, 9), shared}
	}}
}

func atomicFloatCase[T float32 | float64](kernel string, fn func(v []T, acc, old [][]T, shared []T)) diffCase {
	return diffCase{kernel: kernel, fn: fn,
		gen: func(r *rand.Rand, n int) []any {
			// Values in [-1, 1], normal: atom.add.f32 flushes subnormals.
			v := make([]T, n)
			for i := range v {
				v[i] = T(uniform(r, -1, 1))
			}
			acc := grid(n, 6, func(i, j int) T {
				if j == 5 && r.IntN(2) == 0 {
					return v[i]
				}
				return T(uniform(r, -2, 2))
			})
			return []any{v, acc, zeros[T](n, 6), []T{0, 0, 0, 0, 0.25, -0.5}}
		},
		tol: func(n, arg int, idx []int) tolerance {
			if arg == 3 && idx[0] >= 4 {
				// The sum of n values of magnitude ≤ 1 in some order: recursive
				// summation is within (n-1)·eps·Σ|x| ≤ n²·eps of the exact sum,
				// and so is the native (serial) order.
				eps := 0x1p-52
				if bitsOf[T]() == 32 {
					eps = 0x1p-23
				}
				return tolerance{Abs: 2 * float64(n*n+1) * eps}
			}
			return tolerance{}
		}}
}

// mathFn describes one column of the math kernels: the inputs drawn for it
// and the ulps a GPU result may be from Go's math on float64 and float32.
//
// The GPU runs qd's own device math library (internal/codegen/devmath),
// within 1.75 ulp of the exact result on float64 and within 0.5 ulp + 2^-28
// on float32 (it rounds a float64 result once). Go's math is about 1 ulp
// from exact on the ranges below, and far more in known corners that the
// ranges avoid: Log2 just above 1 (it adds log2 of the mantissa to the
// exponent and cancels), Acos near ±1 (π/2 − Asin), Pow with large |y|
// (repeated squaring), Sin/Cos/Tan of large arguments and near their zeros,
// Log of subnormals. Running these very ranges through devmath's
// instruction-level model of the PTX (200,000 samples a function) gave these
// largest distances from Go's float64 results: 1 ulp for exp2, log, log2,
// cos, atan, atan2; 2 for exp, log10, sin, tan, asin, acos, cosh, tanh,
// hypot; 3 for sinh; 6 for pow (|y| ≤ 8); and 0 on float32 for every
// function. The float64 bounds are those plus one (at least 3), pow's 8; on
// float32 1 ulp, because the two float64 results differ by a few float64
// ulps and so round to different float32 values only next to a rounding
// boundary. Exact operations (sqrt, abs, floor, ceil, trunc, round, mod,
// min, max) must match bit for bit everywhere.
type mathFn struct {
	name           string
	x, y           func(r *rand.Rand) float64
	ulps64, ulps32 uint64
}

func u(lo, hi float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return uniform(r, lo, hi) }
}

func lu(lo, hi float64, signed bool) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return logUniform(r, lo, hi, signed) }
}

// withSpecials returns a generator that draws from specials an eighth of
// the time.
func withSpecials(g func(r *rand.Rand) float64, specials ...float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		if r.IntN(8) == 0 {
			return specials[r.IntN(len(specials))]
		}
		return g(r)
	}
}

var (
	inf, nan, negZero = math.Inf(1), math.NaN(), math.Copysign(0, -1)
	roundable         = withSpecials(func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return float64(r.IntN(200)-100) + 0.5 // halves: the rounding direction matters
		}
		return uniform(r, -1e6, 1e6)
	}, 0, negZero, inf, -inf, nan, 1e300, -0.49999999999999994, 0.5, -0.5, 4503599627370497)
)

var mathFns = []mathFn{
	{"sqrt", withSpecials(lu(1e-10, 1e10, false), 0, negZero, inf, -1, nan), nil, 0, 0},
	{"exp", withSpecials(u(-30, 30), 0, inf, -inf, nan, 1000, -1000), nil, 3, 1},
	{"exp2", withSpecials(u(-30, 30), 0, inf, -inf, nan, 2000, -2000), nil, 3, 1},
	{"log", withSpecials(lu(1e-5, 1e5, false), 0, 1, inf, -1, nan), nil, 3, 1},
	{"log2", withSpecials(func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return logUniform(r, 1e-5, 0.9, false)
		}
		return logUniform(r, 2, 1e5, false)
	}, 0, 1, 2, 1024, inf, -1, nan), nil, 3, 1},
	{"log10", withSpecials(lu(1e-5, 1e5, false), 0, 1, 10, 1000, inf, -1, nan), nil, 3, 1},
	{"sin", withSpecials(u(-1.5, 1.5), 0, negZero, inf, nan), nil, 3, 1},
	{"cos", withSpecials(u(-1.5, 1.5), 0, negZero, inf, nan), nil, 3, 1},
	{"tan", withSpecials(u(-1.5, 1.5), 0, negZero, inf, nan), nil, 3, 1},
	{"asin", withSpecials(u(-0.7, 0.7), 0, negZero, 1, -1, 2, nan), nil, 3, 1},
	{"acos", withSpecials(u(-0.7, 0.7), 0, 1, -1, 2, nan), nil, 3, 1},
	{"atan", withSpecials(u(-4, 4), 0, negZero, inf, -inf, nan), nil, 3, 1},
	{"atan2", withSpecials(lu(1e-3, 1e3, true), 0, negZero, inf, -inf, nan), withSpecials(lu(1e-3, 1e3, true), 0, negZero, inf, -inf), 3, 1},
	{"sinh", withSpecials(u(-5, 5), 0, negZero, inf, -inf, nan), nil, 4, 1},
	{"cosh", withSpecials(u(-5, 5), 0, inf, -inf, nan), nil, 3, 1},
	{"tanh", withSpecials(u(-5, 5), 0, negZero, inf, -inf, nan), nil, 3, 1},
	{"pow", withSpecials(lu(0.1, 10, false), 0, 1, -2, inf, nan), withSpecials(u(-8, 8), 0, 0.5, -0.5, 1, 2, 3, -3, inf, nan), 8, 1},
	{"abs", withSpecials(u(-1e6, 1e6), 0, negZero, inf, -inf, nan), nil, 0, 0},
	{"floor", roundable, nil, 0, 0},
	{"ceil", roundable, nil, 0, 0},
	{"trunc", roundable, nil, 0, 0},
	{"round", roundable, nil, 0, 0},
	{"mod", withSpecials(lu(1e-3, 1e6, true), 0, negZero, inf, nan), withSpecials(lu(1e-3, 1e6, true), 0, inf, -inf, nan), 0, 0},
	{"hypot", withSpecials(lu(1e-5, 1e5, true), 0, inf, -inf, nan), withSpecials(lu(1e-5, 1e5, true), 0, nan), 3, 1},
	{"min", withSpecials(u(-10, 10), 0, negZero, inf, -inf, nan), withSpecials(u(-10, 10), 0, negZero, nan), 0, 0},
	{"max", withSpecials(u(-10, 10), 0, negZero, inf, -inf, nan), withSpecials(u(-10, 10), 0, negZero, nan), 0, 0},
	{"classify", withSpecials(u(-3, 3), inf, -inf, nan, negZero), nil, 0, 0},
}

func mathCase[T float32 | float64](kernel string, fn func(x, y, out [][]T)) diffCase {
	k := len(mathFns)
	return diffCase{kernel: kernel, fn: fn,
		gen: func(r *rand.Rand, n int) []any {
			x := grid(n, k, func(_, j int) T { return T(mathFns[j].x(r)) })
			y := grid(n, k, func(_, j int) T {
				if g := mathFns[j].y; g != nil {
					return T(g(r))
				}
				return 0
			})
			return []any{x, y, zeros[T](n, k)}
		},
		tol: func(_, arg int, idx []int) tolerance {
			if arg != 2 {
				return tolerance{}
			}
			if bitsOf[T]() == 32 {
				return tolerance{GPUULPs: mathFns[idx[1]].ulps32}
			}
			return tolerance{GPUULPs: mathFns[idx[1]].ulps64}
		}}
}

func diffCases() []diffCase {
	return append([]diffCase{
		intCase("arithint", arithint),
		intCase("arithint32", arithint32),
		intCase("arithint64", arithint64),
		intCase("arithuint", arithuint),
		intCase("arithuint32", arithuint32),
		intCase("arithuint64", arithuint64),
		floatCase("arithfloat32", arithfloat32),
		floatCase("arithfloat64", arithfloat64),
		{kernel: "logic", fn: logic, gen: func(r *rand.Rand, n int) []any {
			return []any{bools(r, n), bools(r, n), r.IntN(2) == 0, zeros[bool](n, 9), make([]int32, n)}
		}},
		{kernel: "conversions", fn: conversions, gen: func(r *rand.Rand, n int) []any {
			// Floats stay where every conversion of the kernel is in range:
			// |f|/4096 must fit an int32.
			f := make([]float64, n)
			for i := range f {
				f[i] = withSpecials(lu(1e-3, 8e12, true), 0, negZero, 0.5, -0.999, 2147483647.5, -2147483648)(r)
			}
			return []any{ints[int64](r, n), ints[uint64](r, n), f, zeros[int64](n, 8), zeros[uint64](n, 6), zeros[float64](n, 7)}
		}},
		{kernel: "constants", fn: constants, gen: func(r *rand.Rand, n int) []any {
			return []any{r.IntN(100), zeros[int64](n, 8), zeros[uint64](n, 5), zeros[float64](n, 7), zeros[float32](n, 5)}
		}},
		mathCase("mathGo64", mathGo64),
		mathCase("qdMath64", qdMath64),
		mathCase("qdMath32", qdMath32),
		{kernel: "branches", fn: branches, gen: func(r *rand.Rand, n int) []any {
			x := make([]int32, n)
			for i := range x {
				x[i] = int32(r.IntN(4000) - 2000)
			}
			return []any{x, floats[float64](r, n), zeros[int32](n, 7)}
		}},
		{kernel: "loops", fn: loops, gen: func(r *rand.Rand, n int) []any {
			x := make([]int32, n)
			for i := range x {
				x[i] = int32(r.IntN(1000))
			}
			return []any{x, int32(r.IntN(5)), zeros[int64](n, 8)}
		}},
		{kernel: "helpers", fn: helpers, gen: func(r *rand.Rand, n int) []any {
			x := make([]float64, n)
			for i := range x {
				x[i] = uniform(r, -0.05, 1)
			}
			return []any{x, grid(n, 3, func(int, int) float64 { return uniform(r, -1, 1) }), zeros[float64](n, 5)}
		}},
		{kernel: "arrays", fn: arrays, gen: func(r *rand.Rand, n int) []any {
			// n is the innermost length; the outer ones are at least 1 so
			// that len(b[0]) and c[i][j][0] exist natively.
			b := grid(3, n, func(int, int) float32 { return float32(uniform(r, -1, 1)) })
			c := make([][][]int64, 1+n%4)
			for i := range c {
				c[i] = grid(3, 1+n%3, func(int, int) int64 { return int64(r.IntN(100)) })
			}
			return []any{ints[int32](r, n), b, c, make([]int, 6)}
		}},
		{kernel: "atomicSlots", fn: atomicSlots, gen: func(r *rand.Rand, n int) []any {
			return []any{n, make([]int32, n), []int64{0, 0}, []int32{0}}
		}},
		{kernel: "streamGroups", fn: streamGroups, gen: func(r *rand.Rand, n int) []any {
			return []any{floats[float32](r, n), ints[int32](r, n), grid(2, n, func(int, int) float64 { return uniform(r, 0, 10) })}
		}},
		{kernel: "blockDims", fn: blockDims, gen: func(r *rand.Rand, n int) []any {
			return []any{ints[int64](r, n)}
		}},
		{kernel: "serialFeed", fn: serialFeed, gen: func(r *rand.Rand, n int) []any {
			return []any{floats[float64](r, n), make([]float64, n), int32(r.IntN(50)), make([]int64, 5)}
		}},
		atomicIntCase("atomicsint", atomicsint),
		atomicIntCase("atomicsint32", atomicsint32),
		atomicIntCase("atomicsint64", atomicsint64),
		atomicIntCase("atomicsuint", atomicsuint),
		atomicIntCase("atomicsuint32", atomicsuint32),
		atomicIntCase("atomicsuint64", atomicsuint64),
		atomicFloatCase("atomicsfloat32", atomicsfloat32),
		atomicFloatCase("atomicsfloat64", atomicsfloat64),
	}, valueCases()...)
}
