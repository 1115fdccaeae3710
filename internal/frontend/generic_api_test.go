package frontend_test

import (
	"errors"
	"go/types"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
)

// genericSrc holds generic kernels over scalars, over qd's vectors and over
// a struct of the file.
const genericSrc = `package k

import "github.com/quadrants-go/qd"

type Particle struct {
	X, V float32
}

type Meters float32

//qd:kernel
func saxpy[T qd.Float](a T, x, y []T) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i]
	}
}

//qd:kernel
func norm[V qd.Vec3[T], T qd.Float](x, out []T) {
	for i := range len(x) {
		v := V{x[i], 1, 2}
		out[i] = qd.Vec3[T](v).Norm2()
	}
}

//qd:kernel
func fill[T any](x []float32, v T) {
	for i := range len(x) {
		var m map[int]T
		_ = m
		x[i] = 1
	}
}
`

// Particle mirrors the source's type, as the root package would see a
// launch argument's element type through reflect.
type Particle struct {
	X, V float32
}

type Meters float32

func generics(t *testing.T) map[string]*frontend.Generic {
	t.Helper()
	f, err := frontend.ParseFile("k.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Kernels) != 0 || len(f.Generics) != 3 {
		t.Fatalf("got %d kernels and %d generics", len(f.Kernels), len(f.Generics))
	}
	out := map[string]*frontend.Generic{}
	for _, g := range f.Generics {
		out[g.Name] = g
	}
	return out
}

// TestGenericInstantiate: the template instantiates per type list, names
// each instance by it, and refuses type arguments its constraint refuses,
// at the type parameter.
func TestGenericInstantiate(t *testing.T) {
	gs := generics(t)
	saxpy := gs["saxpy"]
	if strings.Join(saxpy.TypeParams, ",") != "T" || !saxpy.Pos.IsKnown() {
		t.Fatalf("saxpy: %+v", saxpy)
	}
	for _, tc := range []struct {
		arg  types.Type
		elem ir.Type
	}{{types.Typ[types.Float32], ir.F32}, {types.Typ[types.Float64], ir.F64}} {
		k, err := saxpy.Instantiate(tc.arg)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(k); err != nil {
			t.Fatal(err)
		}
		if len(k.Params) != 3 || k.Params[0].Elem != tc.elem || k.Params[1].Elem != tc.elem || k.Params[1].GoType != "[]"+tc.arg.String() {
			t.Errorf("%s: params %+v %+v", k.Name, k.Params[0], k.Params[1])
		}
		if want := "saxpy_" + tc.arg.String(); k.Name != want {
			t.Errorf("kernel name %s, want %s", k.Name, want)
		}
	}
	// A constraint violation, and a wrong number of type arguments.
	for _, tc := range []struct {
		args []types.Type
		want string
	}{
		{[]types.Type{types.Typ[types.Int]}, "k.go:12:12: kernel saxpy[int]: type argument int for T: int does not satisfy qd.Float"},
		{[]types.Type{types.Typ[types.Float32], types.Typ[types.Float32]}, "kernel saxpy has 1 type parameters; got 2 type arguments"},
		{[]types.Type{nil}, "no type argument for T"},
	} {
		_, err := saxpy.Instantiate(tc.args...)
		var el frontend.ErrorList
		if !errors.As(err, &el) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Instantiate(%v): %v, want %q", tc.args, err, tc.want)
		}
	}
	// An error found while translating names the instance.
	_, err := gs["fill"].Instantiate(types.Typ[types.Int32])
	if err == nil || !strings.Contains(err.Error(), "kernel fill[int32]: variable m has map type") {
		t.Errorf("fill[int32]: %v", err)
	}
}

// TestGenericTypes: type arguments come from reflect types (scalars,
// qd's types, the file's types) and from source; Infer unifies parameter
// types with argument types.
func TestGenericTypes(t *testing.T) {
	gs := generics(t)
	norm := gs["norm"]
	for _, tc := range []struct {
		rt   reflect.Type
		want string
	}{
		{reflect.TypeFor[float32](), "float32"},
		{reflect.TypeFor[int64](), "int64"},
		{reflect.TypeFor[qd.Vec3[float32]](), "github.com/quadrants-go/qd.Vec3[float32]"},
		{reflect.TypeFor[qd.Mat2[float64]](), "github.com/quadrants-go/qd.Mat2[float64]"},
		{reflect.TypeFor[Particle](), "k.Particle"},
		{reflect.TypeFor[[3]Meters](), "[3]k.Meters"},
		{reflect.TypeFor[[]float64](), "[]float64"},
	} {
		got, err := norm.TypeFor(tc.rt)
		if err != nil || got.String() != tc.want {
			t.Errorf("TypeFor(%v) = %v, %v; want %s", tc.rt, got, err, tc.want)
		}
	}
	type Other struct{ Y int }
	if _, err := norm.TypeFor(reflect.TypeFor[Other]()); err == nil {
		t.Error("TypeFor of a type the file does not declare succeeded")
	}
	type Particle struct{ X int32 } // same name, another structure
	if _, err := norm.TypeFor(reflect.TypeFor[Particle]()); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("TypeFor of a mismatched Particle: %v", err)
	}
	if _, err := norm.TypeFor(reflect.TypeFor[*float32]()); err == nil {
		t.Error("TypeFor of a pointer succeeded")
	}

	f32, _ := norm.TypeFor(reflect.TypeFor[float32]())
	targs, err := gs["saxpy"].Infer([]types.Type{f32, types.NewSlice(f32), types.NewSlice(f32)})
	if err != nil || len(targs) != 1 || targs[0] != f32 {
		t.Fatalf("Infer: %v, %v", targs, err)
	}
	if _, err := gs["saxpy"].Infer([]types.Type{f32, types.NewSlice(types.Typ[types.Float64]), types.NewSlice(f32)}); err == nil {
		t.Error("Infer accepted []float64 for []T with T float32")
	}
	// norm's V is not fixed by its parameters: it must be given.
	if _, err := norm.Infer([]types.Type{types.NewSlice(f32), types.NewSlice(f32)}); err == nil || !strings.Contains(err.Error(), "cannot infer V") {
		t.Errorf("Infer of norm: %v", err)
	}
	vec, err := norm.Type("qd.Vec3[float32]")
	if err != nil {
		t.Fatal(err)
	}
	k, err := norm.Instantiate(vec, f32)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "norm_qd_Vec3_float32_float32" || norm.InstanceName(vec, f32) != "norm[qd.Vec3[float32], float32]" {
		t.Errorf("instance named %s, %s", k.Name, norm.InstanceName(vec, f32))
	}
	if _, err := norm.Instantiate(vec, types.Typ[types.Float64]); err == nil {
		t.Error("norm[qd.Vec3[float32], float64] violates V's constraint but was accepted")
	}
}

// TestGenericConcurrent instantiates from several goroutines; run with
// -race.
func TestGenericConcurrent(t *testing.T) {
	saxpy := generics(t)["saxpy"]
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arg := types.Typ[types.Float32]
			if i%2 == 1 {
				arg = types.Typ[types.Float64]
			}
			for range 10 {
				if _, err := saxpy.Instantiate(arg); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestParseRefusesGenericKernels: Parse, which the root package calls
// until it launches generic kernels, says so at the type parameters.
func TestParseRefusesGenericKernels(t *testing.T) {
	_, err := frontend.Parse("k.go", []byte(genericSrc))
	if err == nil || !strings.Contains(err.Error(), "k.go:12:11: kernel saxpy: kernel saxpy is generic; launching generic kernels is not supported yet") {
		t.Fatalf("got %v", err)
	}
}
