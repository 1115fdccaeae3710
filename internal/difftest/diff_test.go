package difftest

// Differential tests: every kernel of kernels.go and kernels_gen.go runs
// three ways on the same random inputs, and the results must agree:
//
//  1. natively: the kernel is an ordinary Go function, called with slices
//     (serially, on the test goroutine): the reference;
//  2. compiled by qd.Compile from the very same files (Source), on
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
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffgen"
	"github.com/quadrants-go/qd/internal/testarchs"
)

// archs runs the tests on the backends of the behaviour suite, with its
// rule: with QD_GPU_RUN=1 a missing CUDA fails them.
var archs = testarchs.New(func(a qd.Arch) (*qd.Program, error) { return qd.Init(qd.WithArch(a)) }, qd.CPU, qd.CUDA, qd.AMDGPU)

func TestMain(m *testing.M) { archs.Main(m) }

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
	src, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs.Archs(t) {
		t.Run(arch.String(), func(t *testing.T) {
			p, err := qd.Init(qd.WithArch(arch))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			mod, err := qd.Compile(p, src, qd.WithFilename(FileName))
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

// TestGeneratedPositions: an error in a generated kernel names its place
// in kernels_gen.go, not in the joined source that qd.Compile sees.
func TestGeneratedPositions(t *testing.T) {
	const good, bad = "out[i][0] = x + y", "out[i][0] = x + 1.5"
	at := bytes.Index(genSrc, []byte(good))
	if at < 0 {
		t.Fatalf("%s has no %q", diffgen.FileName, good)
	}
	line := bytes.Count(genSrc[:at], []byte("\n")) + 1
	col := at - bytes.LastIndexByte(genSrc[:at], '\n') + len("out[i][0] = x + ")
	src, err := diffgen.Join(handSrc, bytes.Replace(genSrc, []byte(good), []byte(bad), 1))
	if err != nil {
		t.Fatal(err)
	}
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = qd.Compile(p, src, qd.WithFilename(FileName))
	if want := fmt.Sprintf("%s:%d:%d: ", diffgen.FileName, line, col); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("compiling a generated kernel with an error: %v; want the error at %s", err, want)
	}
}
