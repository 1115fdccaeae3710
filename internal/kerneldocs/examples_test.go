package kerneldocs

// The examples of docs/kernels.md, run natively and compiled.
//
// Inputs come from each kernel's parameters, the same for every backend
// (a PCG seeded by the kernel's name and the parameter's position):
//
//   - arrays: 1000 elements ([]T), 24×24 ([][]T), 8×8×8 ([][][]T), so that
//     a 1-D array is at least as long as any extent of the others;
//   - their elements: integers in [0, 100) (they may index an array of the
//     example), floats uniform in [-2, 2), bools at random;
//   - scalars: 3 for every integer type, 1.5 for floats, true for bool.
//
// Comparison (internal/diffcheck): exact, except that
//
//   - an element of a float array that the native run updated more than
//     once with qd.AtomicAdd or qd.AtomicSub is the sum of its additions
//     in an order the backend chooses (docs/semantics.md#reductions):
//     every order of summing k terms is within γ_k·Σ|xᵢ| (γ_k = k·u/(1-k·u),
//     u the unit roundoff) of the exact sum, the native one included, so
//     the two may differ by twice that; the test allows 2·k·eps·Σ|xᵢ|
//     (eps = 2u), with Σ|xᵢ| (the element's first value and every addend)
//     recorded by the native run (recordAdd);
//   - on a GPU, the floats of a kernel that calls a transcendental function
//     may be gpuMathULPs from Go's (docs/accuracy.md: the device math
//     library is within 2 ulp of the exact value, Go's own math about 1,
//     and an example may compute with the result).

import (
	"errors"
	"fmt"
	"go/format"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffcheck"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
)

func TestMain(m *testing.M) { diffcheck.Archs.Main(m) }

// gpuMathULPs is how far, in ulps, a float result of a kernel that calls a
// transcendental function may be from Go's on a GPU.
const gpuMathULPs = 16

// page reads docs/kernels.md and its blocks.
func page(t *testing.T) ([]byte, []Block) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", Page))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Blocks(md)
	if err != nil {
		t.Fatal(err)
	}
	return md, blocks
}

// TestGeneratedFileFresh fails when the generated examples differ from
// what the page generates now: the page was edited without running
// go generate ./internal/kerneldocs.
func TestGeneratedFileFresh(t *testing.T) {
	md, _ := page(t)
	want, err := Generate(md)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(FileName)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: %s changed; run go generate ./internal/kerneldocs", FileName, Page)
	}
}

// TestExamples runs every kernel of every example natively and compiled
// on every backend present, and compares.
func TestExamples(t *testing.T) {
	_, blocks := page(t)
	var examples []Block
	for _, b := range blocks {
		if b.Kind == Example {
			examples = append(examples, b)
		}
	}
	if len(examples) != len(natives) {
		t.Fatalf("%s has %d examples, %s %d; run go generate ./internal/kerneldocs", Page, len(examples), FileName, len(natives))
	}
	diffcheck.OnEachArch(t, func(t *testing.T, p *qd.Program, s *qd.Stream) {
		for i, b := range examples {
			t.Run(fmt.Sprintf("line%d", b.Line), func(t *testing.T) { runExample(t, p, s, b, natives[i+1]) })
		}
	})
}

// runExample compiles one example and checks each of its kernels.
func runExample(t *testing.T, p *qd.Program, s *qd.Stream, b Block, fns map[string]any) {
	src := b.Source(Page)
	mod, err := qd.Compile(p, src, qd.WithFilename(Page))
	if err != nil && p.Arch() == qd.Vulkan && errors.Is(err, qd.ErrUnsupported) {
		t.Skipf("not on Vulkan yet (docs/vulkan.md): %v", err)
	}
	if err != nil {
		t.Fatalf("the example at %s:%d does not compile:\n%v", Page, b.Line, err)
	}
	defer mod.Close()
	irs, err := frontend.Parse(Page, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range irs {
		fn := fns[k.Name]
		if fn == nil {
			t.Fatalf("kernel %s has no native function; run go generate ./internal/kerneldocs", k.Name)
		}
		kern, err := mod.Kernel(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		args := inputs(k.Name, reflect.TypeOf(fn))
		var want []any
		sums := map[any]*sum{}
		native := func(a []any) error {
			want = a
			recording = sums
			defer func() { recording = nil }()
			return diffcheck.CallNative(fn, a)
		}
		usesMath := callsTranscendental(k)
		tol := func(arg int, idx []int) diffcheck.Tolerance {
			v := reflect.ValueOf(want[arg])
			for _, i := range idx {
				v = v.Index(i)
			}
			if s := sums[v.Addr().Interface()]; s != nil && s.n > 1 {
				k := v.Kind()
				if k == reflect.Array { // a vector of recordAddVec
					k = v.Type().Elem().Kind()
				}
				return diffcheck.Tolerance{Abs: 2 * float64(s.n) * eps(k) * s.abs}
			}
			if usesMath {
				return diffcheck.Tolerance{GPUULPs: gpuMathULPs}
			}
			return diffcheck.Tolerance{}
		}
		diffcheck.Check(t, fmt.Sprintf("kernel %s (%s:%d)", k.Name, Page, b.Line), p, s, kern, args, native, tol)
	}
}

// callsTranscendental reports whether k calls a math function whose GPU
// result may differ from Go's.
func callsTranscendental(k *ir.Kernel) bool {
	found := false
	ir.Inspect(k.Body, func(n ir.Node) bool {
		if c, ok := n.(*ir.Call); ok && !c.Fn.Exact() {
			found = true
		}
		return !found
	})
	return found
}

func eps(k reflect.Kind) float64 {
	if k == reflect.Float32 {
		return 0x1p-23
	}
	return 0x1p-52
}

// Array lengths by number of dimensions.
var arrayShape = map[int][]int{1: {1000}, 2: {24, 24}, 3: {8, 8, 8}, 4: {4, 4, 4, 4}}

// inputs makes the arguments of a kernel of type fn (see the top of the
// file).
func inputs(kernel string, fn reflect.Type) []any {
	args := make([]any, fn.NumIn())
	for i := range args {
		h := fnv.New64a()
		h.Write([]byte(kernel))
		r := rand.New(rand.NewPCG(h.Sum64(), uint64(i)))
		t := fn.In(i)
		if t.Kind() != reflect.Slice {
			args[i] = scalar(t).Interface()
			continue
		}
		dims := 0
		for e := t; e.Kind() == reflect.Slice; e = e.Elem() {
			dims++
		}
		args[i] = array(r, t, arrayShape[dims]).Interface()
	}
	return args
}

// scalar is the value of a scalar parameter of type t.
func scalar(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
	return v
}

// array is a slice of type t and the given shape, of random elements.
func array(r *rand.Rand, t reflect.Type, shape []int) reflect.Value {
	v := reflect.MakeSlice(t, shape[0], shape[0])
	for i := range shape[0] {
		e := v.Index(i)
		if e.Kind() == reflect.Slice {
			e.Set(array(r, t.Elem(), shape[1:]))
			continue
		}
		fill(r, e)
	}
	return v
}

// fill sets e, a scalar or a struct or array of them, to random values.
func fill(r *rand.Rand, e reflect.Value) {
	switch e.Kind() {
	case reflect.Bool:
		e.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.SetInt(int64(r.IntN(100)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.SetUint(uint64(r.IntN(100)))
	case reflect.Float32, reflect.Float64:
		e.SetFloat(4*r.Float64() - 2)
	case reflect.Struct:
		for f := range e.NumField() {
			fill(r, e.Field(f))
		}
	case reflect.Array:
		for k := range e.Len() {
			fill(r, e.Index(k))
		}
	}
}

// TestRefused compiles every refused block and matches its errors with its
// ERROR markers.
func TestRefused(t *testing.T) {
	_, blocks := page(t)
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, b := range blocks {
		if b.Kind != Refused {
			continue
		}
		t.Run(fmt.Sprintf("line%d", b.Line), func(t *testing.T) {
			want, err := markers(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("the refused block at %s:%d has no ERROR marker", Page, b.Line)
			}
			_, err = qd.Compile(p, b.Source(Page), qd.WithFilename(Page))
			if err == nil {
				t.Fatalf("the refused block at %s:%d compiles", Page, b.Line)
			}
			for _, problem := range matchMarkers(want, compileErrors(err)) {
				t.Error(problem)
			}
		})
	}
}

// compileErrors flattens what qd.Compile returned into its positioned
// errors; an error without a position stands for itself.
func compileErrors(err error) []*ir.Error {
	var e *ir.Error
	if errors.As(err, &e) && e == err {
		return []*ir.Error{e}
	}
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*ir.Error
		for _, x := range u.Unwrap() {
			out = append(out, compileErrors(x)...)
		}
		return out
	}
	return []*ir.Error{{Msg: err.Error()}}
}

// TestFormatted fails when a Go block of the page is not gofmt-formatted:
// readers copy them.
func TestFormatted(t *testing.T) {
	_, blocks := page(t)
	for _, b := range blocks {
		got, err := format.Source([]byte(b.Text))
		if err != nil {
			continue // TestSnippets, TestExamples or TestRefused says why
		}
		if string(got) != b.Text {
			t.Errorf("the Go block at %s:%d is not gofmt-formatted; gofmt makes it:\n%s", Page, b.Line, got)
		}
	}
}

// TestSnippets parses every other Go block of the page.
func TestSnippets(t *testing.T) {
	_, blocks := page(t)
	for _, b := range blocks {
		if b.Kind == Snippet {
			if err := parseSnippet(b.Text); err != nil {
				t.Errorf("the Go block at %s:%d parses neither as declarations nor as statements: %v", Page, b.Line, err)
			}
		}
	}
}

// sum is what the native run of a kernel added to one float element with
// qd.AtomicAdd and qd.AtomicSub: how many additions, and the sum of the
// magnitudes of the element's first value and of every addend.
type sum struct {
	n   int
	abs float64
}

// recording, during a native run, is every float element's sum, by the
// element's address (a *float32 or *float64).
var recording map[any]*sum

func recordAdd[T qd.AtomicElem](p *T, v T) T { record(p, v); return qd.AtomicAdd(p, v) }
func recordSub[T qd.AtomicElem](p *T, v T) T { record(p, v); return qd.AtomicSub(p, v) }

// recordAddVec records a vector add under the vector's address, which is
// the element's when p is &vs[i] (the tolerance is per element): every
// component's magnitude adds to the one bound, a conservative one.
func recordAddVec[V qd.AtomicVec](p *V, v V) {
	if k := reflect.TypeFor[V]().Elem().Kind(); recording != nil && (k == reflect.Float32 || k == reflect.Float64) {
		s := recording[p]
		if s == nil {
			s = &sum{}
			for c := range reflect.ValueOf(*p).Len() {
				s.abs += math.Abs(reflect.ValueOf(*p).Index(c).Float())
			}
			recording[p] = s
		}
		s.n++
		for c := range reflect.ValueOf(v).Len() {
			s.abs += math.Abs(reflect.ValueOf(v).Index(c).Float())
		}
	}
	qd.AtomicAddVec(p, v)
}

func record[T qd.AtomicElem](p *T, v T) {
	k := reflect.TypeFor[T]().Kind()
	if recording == nil || k != reflect.Float32 && k != reflect.Float64 {
		return
	}
	s := recording[p]
	if s == nil {
		s = &sum{abs: math.Abs(reflect.ValueOf(*p).Float())}
		recording[p] = s
	}
	s.n++
	s.abs += math.Abs(reflect.ValueOf(v).Float())
}

// qd's own vector types, which examples use as array elements; the
// generated file registers only the types the examples declare.
func init() {
	diffcheck.RecordElem[qd.Vec2[float32]]()
	diffcheck.RecordElem[qd.Vec3[float32]]()
	diffcheck.RecordElem[qd.Vec4[float32]]()
}
