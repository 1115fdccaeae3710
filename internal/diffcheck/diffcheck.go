// Package diffcheck runs a compiled kernel against the Go function it was
// compiled from and compares the results: the core of the differential
// tests (internal/difftest) and of the checked examples of docs/kernels.md
// (internal/kerneldocs). Only tests import it.
//
// Check runs the kernel three ways on the same arguments:
//
//  1. natively: the kernel is an ordinary Go function, called with slices
//     (serially, on the test goroutine): the reference;
//  2. compiled, with the array arguments passed as Go slices;
//  3. compiled, with the arrays passed as Ndarrays on a stream.
//
// Comparison (Tolerance):
//   - integers and bools: exactly, everywhere;
//   - floats: bit for bit unless the caller's tolerance says otherwise
//     (NaNs compare by NaN-ness only, because the sign and payload of a
//     generated NaN differ between x86 and the GPU); a tolerance allows a
//     distance in ulps on GPU backends (their math functions are not Go's)
//     or an absolute error on every backend (float sums whose order varies).
package diffcheck

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/testarchs"
)

// Archs are the backends a test binary's checks run on: the CPU, and each
// GPU backend that opens (package testarchs, with its rule: under
// QD_GPU_RUN=1 a missing CUDA fails). The binary's TestMain is
// Archs.Main(m).
var Archs = testarchs.New(func(a qd.Arch) (*qd.Program, error) { return qd.Init(qd.WithArch(a)) }, qd.CPU, qd.CUDA, qd.AMDGPU, qd.Vulkan)

// OnEachArch runs f in a subtest per backend of Archs, named after it,
// with a Program of that backend and a stream of it.
func OnEachArch(t *testing.T, f func(t *testing.T, p *qd.Program, s *qd.Stream)) {
	t.Helper()
	for _, arch := range Archs.Archs(t) {
		t.Run(arch.String(), func(t *testing.T) {
			p, err := qd.Init(qd.WithArch(arch))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s, err := p.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f(t, p, s)
		})
	}
}

// Tolerance says how far a float element may be from the native result.
type Tolerance struct {
	GPUULPs uint64  // on a GPU backend: distance in ulps of the element's type (0: bit for bit)
	Abs     float64 // on every backend: absolute error allowed (order-dependent float sums)
}

// Check runs k on args compiled (arrays as Go slices, then as Ndarrays
// launched on s) and native on a copy of args, and reports with t.Errorf
// every argument whose elements differ; label starts each message. tol
// gives the comparison of element idx of argument arg; nil: exact.
// native gets the copy it must run on: normally CallNative of the kernel's
// Go function.
func Check(t testing.TB, label string, p *qd.Program, s *qd.Stream, k *qd.Kernel, args []any,
	native func(args []any) error, tol func(arg int, idx []int) Tolerance) {
	t.Helper()
	want := DeepCopy(args)
	if err := native(want); err != nil {
		t.Errorf("%s: native run: %v", label, err)
		return
	}
	gpu := p.Arch() != qd.CPU
	check := func(mode string, got []any) {
		t.Helper()
		for i := range args {
			if reflect.TypeOf(args[i]).Kind() != reflect.Slice {
				continue
			}
			var tl func(idx []int) Tolerance
			if tol != nil {
				tl = func(idx []int) Tolerance { return tol(i, idx) }
			}
			var bad []string
			compareValues(reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), nil, tl, gpu, &bad)
			if len(bad) > 0 {
				t.Errorf("%s, %s: argument %d differs from the native run at %d elements, first: %s",
					label, mode, i, len(bad), strings.Join(bad[:min(len(bad), 5)], "; "))
			}
		}
	}

	// Arrays as Go slices: copied in and back by the launch.
	got := DeepCopy(args)
	if err := k.Launch(got...); err != nil {
		if p.Arch() == qd.Vulkan && errors.Is(err, qd.ErrUnsupported) {
			// The Vulkan generator refuses what it does not compile yet
			// (docs/vulkan.md), in a positioned error naming it.
			t.Skipf("%s: not on Vulkan yet: %v", label, err)
		}
		t.Errorf("%s: Launch with slices: %v", label, err)
		return
	}
	check("slices", got)

	// Arrays as Ndarrays, launched on a stream; results read back.
	got = DeepCopy(args)
	launch := make([]any, len(got))
	var reads []func() error
	for i, a := range got {
		if reflect.TypeOf(a).Kind() != reflect.Slice {
			launch[i] = a
			continue
		}
		nd, read, closeNd, err := toNdarray(p, a)
		if err != nil {
			t.Errorf("%s: argument %d: %v", label, i, err)
			return
		}
		defer closeNd()
		launch[i] = nd
		reads = append(reads, read)
	}
	if err := k.LaunchOn(s, launch...); err != nil {
		t.Errorf("%s: LaunchOn with Ndarrays: %v", label, err)
		return
	}
	for _, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s: reading back: %v", label, err)
			return
		}
	}
	check("ndarrays", got)
}

// CallNative calls the kernel fn as a Go function with args, turning a
// panic into an error.
func CallNative(fn any, args []any) (err error) {
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

// DeepCopy copies the slices of args (of any depth); scalars are values.
func DeepCopy(args []any) []any {
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

// compareValues compares got with want element by element, appending a
// description of each mismatch to bad.
func compareValues(got, want reflect.Value, idx []int, tol func([]int) Tolerance, gpu bool, bad *[]string) {
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
		var tl Tolerance
		if tol != nil {
			tl = tol(at)
		}
		if !leafClose(g, w, tl, gpu) {
			*bad = append(*bad, fmt.Sprintf("%v: got %v, want %v", at, g, w))
		}
	}
}

// leafClose compares one element: a scalar, or a struct or array element
// scalar by scalar, so that its floats compare as floats do (NaNs by
// NaN-ness, -0 apart from +0) rather than with ==.
func leafClose(g, w reflect.Value, tl Tolerance, gpu bool) bool {
	switch g.Kind() {
	case reflect.Float32, reflect.Float64:
		return floatClose(g.Float(), w.Float(), g.Kind() == reflect.Float32, tl, gpu)
	case reflect.Struct:
		for f := range g.NumField() {
			if !leafClose(g.Field(f), w.Field(f), tl, gpu) {
				return false
			}
		}
		return true
	case reflect.Array:
		for e := range g.Len() {
			if !leafClose(g.Index(e), w.Index(e), tl, gpu) {
				return false
			}
		}
		return true
	}
	return g.Equal(w)
}

// floatClose reports whether a compiled float result matches the native
// one under tl.
func floatClose(got, want float64, f32 bool, tl Tolerance, gpu bool) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	if tl.Abs > 0 {
		return math.Abs(got-want) <= tl.Abs
	}
	if gpu && tl.GPUULPs > 0 {
		return ulpDist(got, want, f32) <= tl.GPUULPs
	}
	if f32 {
		return math.Float32bits(float32(got)) == math.Float32bits(float32(want))
	}
	return math.Float64bits(got) == math.Float64bits(want)
}

// ulpDist is the number of representable values of the type (float32
// when f32) between a and b (±0 count as one value; infinities are one
// step beyond the largest finite value).
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
