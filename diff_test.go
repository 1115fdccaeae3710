package qd_test

// Differential tests: every kernel of diffkernels_test.go runs three ways on
// the same random inputs, and the results must agree:
//
//  1. natively: the kernel is an ordinary Go function, called with slices
//     (serially, on the test goroutine): the reference;
//  2. compiled by qd.Compile from the very same file (embedded below), on
//     every backend of the behaviour suite (the CPU, and CUDA when present),
//     with the array arguments passed as Go slices;
//  3. the same, with the arrays passed as Ndarrays on a stream.
//
// Comparison (see tolerance):
//   - integers and bools: exactly, everywhere;
//   - floats on the CPU backend: bit for bit (it runs Go's own operations
//     and Go's math; NaNs compare by NaN-ness only, because the sign and
//     payload of a generated NaN differ between x86 and the GPU);
//   - floats on a GPU: bit for bit for IEEE operations (+ − × ÷, sqrt,
//     conversions, floor/ceil/trunc/round, abs, mod, min/max: the PTX code
//     generator uses correctly rounded instructions and never contracts into
//     an fma), and within a per-function ulp bound for the transcendental
//     functions (mathBounds);
//   - float atomic sums whose rounding depends on the order of the adds:
//     within the worst-case error of recursive summation, on every backend.

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffgen"
)

//go:generate go run ./internal/diffgen/gen

// The kernels' source: the hand-written file and the generated per-type
// kernels, which TestDiff joins (diffgen.Join) because the generated ones
// use the constants of the hand-written file and qd.Compile compiles one
// source.
var (
	//go:embed diffkernels_test.go
	diffHandSrc []byte
	//go:embed diffkernels_gen_test.go
	diffGenSrc []byte
)

// diffSizes are the lengths each kernel runs at: empty, one element, around
// the CPU backend's batch of 512 lanes and GPU block sizes, and lengths that
// are no multiple of either.
func diffSizes() []int {
	if testing.Short() {
		return []int{0, 1, 513, 1000}
	}
	return []int{0, 1, 2, 255, 511, 513, 1000, 2100}
}

// tolerance says how far a float element may be from the native result.
type tolerance struct {
	gpuULPs uint64  // on a GPU backend: distance in ulps of the element's type (0: bit for bit)
	abs     float64 // on every backend: absolute error allowed (order-dependent float sums)
}

type diffCase struct {
	kernel string // the //qd:kernel function, compiled by name
	fn     any    // the same function, called natively
	// gen makes the arguments for length n, in parameter order.
	gen func(r *rand.Rand, n int) []any
	// tol gives the comparison of element idx of argument arg; nil: exact.
	tol func(n, arg int, idx []int) tolerance
}

func TestDiff(t *testing.T) {
	cases := diffCases()
	src, err := diffgen.Join(diffHandSrc, diffGenSrc)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range qd.SuiteArchs(t) {
		t.Run(arch.String(), func(t *testing.T) {
			p, err := qd.Init(qd.WithArch(arch))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			mod, err := qd.Compile(p, src, qd.WithFilename("diffkernels_test.go"))
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close()
			// Every kernel of the file has a case: a kernel added without one
			// would go untested.
			have := map[string]bool{}
			for _, c := range cases {
				have[c.kernel] = true
			}
			for _, name := range mod.Kernels() {
				if !have[name] {
					t.Errorf("kernel %s has no differential case", name)
				}
			}
			s, err := p.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, c := range cases {
				t.Run(c.kernel, func(t *testing.T) {
					k, err := mod.Kernel(c.kernel)
					if err != nil {
						t.Fatal(err)
					}
					for _, n := range diffSizes() {
						runDiff(t, p, s, k, c, n)
					}
				})
			}
		})
	}
}

// runDiff runs one case at length n natively and compiled, both ways of
// passing arrays, and compares.
func runDiff(t *testing.T, p *qd.Program, s *qd.Stream, k *qd.Kernel, c diffCase, n int) {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(c.kernel))
	args := c.gen(rand.New(rand.NewPCG(h.Sum64(), uint64(n))), n)

	want := deepCopy(args)
	if err := callNative(c.fn, want); err != nil {
		t.Fatalf("n=%d: native run: %v", n, err)
	}
	gpu := p.Arch() != qd.CPU
	check := func(mode string, got []any) {
		t.Helper()
		for i := range args {
			if reflect.TypeOf(args[i]).Kind() != reflect.Slice {
				continue
			}
			var tol func(idx []int) tolerance
			if c.tol != nil {
				tol = func(idx []int) tolerance { return c.tol(n, i, idx) }
			}
			var bad []string
			compareValues(reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), nil, tol, gpu, &bad)
			if len(bad) > 0 {
				t.Errorf("n=%d, %s: argument %d differs from the native run at %d elements, first: %s",
					n, mode, i, len(bad), strings.Join(bad[:min(len(bad), 5)], "; "))
			}
		}
	}

	// Arrays as Go slices: copied in and back by the launch.
	got := deepCopy(args)
	if err := k.Launch(got...); err != nil {
		t.Fatalf("n=%d: Launch with slices: %v", n, err)
	}
	check("slices", got)

	// Arrays as Ndarrays, launched on a stream; results read back.
	got = deepCopy(args)
	launch := make([]any, len(got))
	var reads []func() error
	for i, a := range got {
		if reflect.TypeOf(a).Kind() != reflect.Slice {
			launch[i] = a
			continue
		}
		nd, read, closeNd, err := toNdarray(p, a)
		if err != nil {
			t.Fatalf("n=%d: argument %d: %v", n, i, err)
		}
		defer closeNd()
		launch[i] = nd
		reads = append(reads, read)
	}
	if err := k.LaunchOn(s, launch...); err != nil {
		t.Fatalf("n=%d: LaunchOn with Ndarrays: %v", n, err)
	}
	for _, read := range reads {
		if err := read(); err != nil {
			t.Fatalf("n=%d: reading back: %v", n, err)
		}
	}
	check("ndarrays", got)
}

// callNative calls the kernel as a Go function, turning a panic into an
// error.
func callNative(fn any, args []any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a)
	}
	reflect.ValueOf(fn).Call(in)
	return nil
}

// deepCopy copies the slices of args (of any depth); scalars are values.
func deepCopy(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = copyValue(reflect.ValueOf(a)).Interface()
	}
	return out
}

func copyValue(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Slice {
		return v
	}
	c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	if v.Type().Elem().Kind() != reflect.Slice {
		reflect.Copy(c, v)
		return c
	}
	for i := range v.Len() {
		c.Index(i).Set(copyValue(v.Index(i)))
	}
	return c
}

// leaves calls f on every innermost slice of v, in row-major order.
func leaves(v reflect.Value, f func(leaf reflect.Value)) {
	if v.Type().Elem().Kind() != reflect.Slice {
		f(v)
		return
	}
	for i := range v.Len() {
		leaves(v.Index(i), f)
	}
}

// shapeOf is the shape of a rectangular slice of 1 to 3 dimensions.
func shapeOf(v reflect.Value) []int {
	var shape []int
	for v.Kind() == reflect.Slice {
		shape = append(shape, v.Len())
		if v.Len() == 0 {
			// An empty level hides the lengths below it; they are 0.
			for t := v.Type().Elem(); t.Kind() == reflect.Slice; t = t.Elem() {
				shape = append(shape, 0)
			}
			break
		}
		v = v.Index(0)
	}
	return shape
}

// toNdarray makes an Ndarray holding the slice a; read copies the array
// back into a.
func toNdarray(p *qd.Program, a any) (nd any, read, closeNd func() error, err error) {
	t := reflect.TypeOf(a)
	for t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return ndOf[bool](p, a)
	case reflect.Int:
		return ndOf[int](p, a)
	case reflect.Int32:
		return ndOf[int32](p, a)
	case reflect.Int64:
		return ndOf[int64](p, a)
	case reflect.Uint:
		return ndOf[uint](p, a)
	case reflect.Uint32:
		return ndOf[uint32](p, a)
	case reflect.Uint64:
		return ndOf[uint64](p, a)
	case reflect.Float32:
		return ndOf[float32](p, a)
	case reflect.Float64:
		return ndOf[float64](p, a)
	}
	return nil, nil, nil, fmt.Errorf("no Ndarray for %T", a)
}

func ndOf[T qd.Elem](p *qd.Program, a any) (any, func() error, func() error, error) {
	v := reflect.ValueOf(a)
	var flat []T
	leaves(v, func(l reflect.Value) { flat = append(flat, l.Interface().([]T)...) })
	nd, err := qd.NewNdarray[T](p, shapeOf(v)...)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := nd.CopyFromHost(flat); err != nil {
		nd.Close()
		return nil, nil, nil, err
	}
	read := func() error {
		out, err := nd.ToSlice()
		if err != nil {
			return err
		}
		if len(out) != len(flat) {
			return fmt.Errorf("ToSlice returned %d elements, want %d", len(out), len(flat))
		}
		leaves(v, func(l reflect.Value) { out = out[copy(l.Interface().([]T), out):] })
		return nil
	}
	return nd, read, nd.Close, nil
}

// compareValues compares got with want element by element, appending a
// description of each mismatch to bad.
func compareValues(got, want reflect.Value, idx []int, tol func([]int) tolerance, gpu bool, bad *[]string) {
	if got.Len() != want.Len() {
		*bad = append(*bad, fmt.Sprintf("%v: length %d, want %d", idx, got.Len(), want.Len()))
		return
	}
	for i := range got.Len() {
		at := append(idx[:len(idx):len(idx)], i)
		g, w := got.Index(i), want.Index(i)
		if g.Kind() == reflect.Slice {
			compareValues(g, w, at, tol, gpu, bad)
			continue
		}
		var ok bool
		switch g.Kind() {
		case reflect.Float32, reflect.Float64:
			var tl tolerance
			if tol != nil {
				tl = tol(at)
			}
			ok = floatClose(g.Float(), w.Float(), g.Kind() == reflect.Float32, tl, gpu)
		default:
			ok = g.Equal(w)
		}
		if !ok {
			*bad = append(*bad, fmt.Sprintf("%v: got %v, want %v", at, g, w))
		}
	}
}

// floatClose reports whether a compiled float result matches the native
// one under tl.
func floatClose(got, want float64, f32 bool, tl tolerance, gpu bool) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	if tl.abs > 0 {
		return math.Abs(got-want) <= tl.abs
	}
	if gpu && tl.gpuULPs > 0 {
		return ulpDist(got, want, f32) <= tl.gpuULPs
	}
	if f32 {
		return math.Float32bits(float32(got)) == math.Float32bits(float32(want))
	}
	return math.Float64bits(got) == math.Float64bits(want)
}

// ulpDist is the number of representable values of the type between a and
// b (±0 count as one value; infinities are one step beyond the largest
// finite value).
func ulpDist(a, b float64, f32 bool) uint64 {
	ord := func(x float64) int64 {
		var bits int64
		if f32 {
			bits = int64(math.Float32bits(float32(x)))
			if bits&(1<<31) != 0 {
				bits = -(bits &^ (1 << 31))
			}
			return bits
		}
		u := math.Float64bits(x)
		if u&(1<<63) != 0 {
			return -int64(u &^ (1 << 63))
		}
		return int64(u)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

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
				return tolerance{abs: 2 * float64(n*n+1) * eps}
			}
			return tolerance{}
		}}
}

// mathFn describes one column of the math kernels: the inputs drawn for it
// and the ulps a GPU result may be from Go's math on float64 and float32.
//
// The GPU runs qd's own PTX math library (internal/codegen/ptx/ptxmath),
// within 1.75 ulp of the exact result on float64 and within 0.5 ulp + 2^-28
// on float32 (it rounds a float64 result once). Go's math is about 1 ulp
// from exact on the ranges below, and far more in known corners that the
// ranges avoid: Log2 just above 1 (it adds log2 of the mantissa to the
// exponent and cancels), Acos near ±1 (π/2 − Asin), Pow with large |y|
// (repeated squaring), Sin/Cos/Tan of large arguments and near their zeros,
// Log of subnormals. Running these very ranges through ptxmath's
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
				return tolerance{gpuULPs: mathFns[idx[1]].ulps32}
			}
			return tolerance{gpuULPs: mathFns[idx[1]].ulps64}
		}}
}

func diffCases() []diffCase {
	return []diffCase{
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
			return []any{x, floats[float64](r, n), zeros[int32](n, 5)}
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
	}
}
