package qd

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Arrays of values (docs/semantics.md#kernels): element types built from
// scalars by fixed arrays and structs, in Go's layout on every backend.

type testParticle struct {
	X, V Vec2[float32]
	C    Mat2[float32]
	J    float32
	Tag  int16
	Hot  bool
}

type testCell struct {
	V Vec2[float32]
	M float32
}

// TestElementLayouts: an element type's leaves are Go's fields and
// elements, in order, at Go's offsets.
func TestElementLayouts(t *testing.T) {
	l := layoutOf[testParticle]()
	if l.err != nil {
		t.Fatal(l.err)
	}
	rt := reflect.TypeFor[testParticle]()
	if l.size != int(rt.Size()) || l.rec.Size != int(rt.Size()) || l.rec.Align != rt.Align() {
		t.Fatalf("size %d / record %d, align %d; Go says %d and %d", l.size, l.rec.Size, l.rec.Align, rt.Size(), rt.Align())
	}
	want := []ir.Leaf{
		{Path: ".X[0]", Type: ir.F32, Offset: 0}, {Path: ".X[1]", Type: ir.F32, Offset: 4},
		{Path: ".V[0]", Type: ir.F32, Offset: 8}, {Path: ".V[1]", Type: ir.F32, Offset: 12},
		{Path: ".C[0][0]", Type: ir.F32, Offset: 16}, {Path: ".C[0][1]", Type: ir.F32, Offset: 20},
		{Path: ".C[1][0]", Type: ir.F32, Offset: 24}, {Path: ".C[1][1]", Type: ir.F32, Offset: 28},
		{Path: ".J", Type: ir.F32, Offset: 32}, {Path: ".Tag", Type: ir.I16, Offset: 36}, {Path: ".Hot", Type: ir.Bool, Offset: 38},
	}
	if !reflect.DeepEqual(l.rec.Leaves, want) {
		t.Fatalf("leaves %v, want %v", l.rec.Leaves, want)
	}
	for _, c := range []struct {
		lay  *elemLayout
		want ir.Type
	}{{layoutOf[int8](), ir.I8}, {layoutOf[uint16](), ir.U16}, {layoutOf[int](), ir.I64}, {layoutOf[Meters](), ir.F32}} {
		if c.lay.err != nil || c.lay.scalar != c.want || c.lay.rec != nil {
			t.Errorf("%s: scalar %v, record %v, err %v; want scalar %v", c.lay.name, c.lay.scalar, c.lay.rec, c.lay.err, c.want)
		}
	}
}

// Meters is a defined type over a scalar: an element type like its
// underlying type.
type Meters float32

// TestElementTypesRefused: a type with no meaning on a device is refused
// when an array is made, with an error naming the field.
func TestElementTypesRefused(t *testing.T) {
	type named struct {
		X    float32
		Name string
	}
	type nested struct {
		A [2]struct{ P *int }
	}
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	for _, c := range []struct {
		make func() error
		want string
	}{
		{func() error { return closeMade(NewNdarray[named](p, 4)) }, "its field .Name has type string"},
		{func() error { return closeMade(NewNdarray[nested](p, 4)) }, "its field .A[0].P has type *int"},
		{func() error { return closeMade(NewNdarray[string](p, 4)) }, "string is not an array element type"},
		{func() error { return closeMade(NewNdarray[struct{}](p, 4)) }, "has no scalar in it"},
		{func() error { return closeMade(NewHostArray[complex64](p, 4)) }, "complex64 is not an array element type"},
	} {
		err := c.make()
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want ErrInvalidArgument saying %q", err, c.want)
		}
	}
}

// TestStructArrays: arrays of structs and of vectors move between the host
// and the device as they are, and fill with a value of 1, 4 or 8 bytes.
func TestStructArrays(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		ps := make([]testParticle, 37)
		for i := range ps {
			f := float32(i)
			ps[i] = testParticle{X: Vec2[float32]{f, -f}, V: Vec2[float32]{2 * f, 1}, C: Mat2[float32]{{f, 0}, {0, f}}, J: 1 + f, Tag: int16(-i), Hot: i%2 == 0}
		}
		a := newNdarray[testParticle](t, p, len(ps))
		check(t, a.CopyFromHost(ps))
		if got := toSlice(t, a); !reflect.DeepEqual(got, ps) {
			t.Fatalf("ToSlice of an array of structs: got %v", got[:2])
		}
		h := must(NewHostArray[testParticle](p, len(ps)))(t)
		defer h.Close()
		s := newStream(t, p)
		check(t, a.CopyToHostOn(s, h))
		if got := must(h.Data())(t); !reflect.DeepEqual(got, ps) {
			t.Fatal("CopyToHostOn into a HostArray of structs changed the elements")
		}
		v := newNdarrayOn[Vec2[float32]](t, s, 3, 5)
		check(t, v.FillOn(s, Vec2[float32]{1.5, -2}))
		allEqual(t, "FillOn of a Vec2 array", toSlice(t, v), Vec2[float32]{1.5, -2})
		small := newNdarray[int8](t, p, 9)
		check(t, small.CopyFromHost([]int8{-128, -1, 0, 1, 2, 3, 4, 5, 127}))
		if got := toSlice(t, small); got[0] != -128 || got[8] != 127 {
			t.Fatalf("an int8 array: %v", got)
		}
	})
}

// TestReshapeAndShapes: Reshape views an array with another shape of the
// same element count; copies refuse differing shapes, leading dimensions
// of 1 aside.
func TestReshapeAndShapes(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		a := newNdarray[float32](t, p, 4, 4)
		vals := make([]float32, 16)
		for i := range vals {
			vals[i] = float32(i)
		}
		check(t, a.CopyFromHost(vals))
		h := must(NewHostArray[float32](p, 2, 8))(t)
		defer h.Close()
		s := newStream(t, p)
		err := a.CopyToHostOn(s, h)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "shape [2 8] for an Ndarray of shape [4 4]") {
			t.Fatalf("a 4×4 array copied into a 2×8 HostArray: %v", err)
		}
		r := must(a.Reshape(2, 8))(t)
		if got := r.Shape(); !reflect.DeepEqual(got, []int{2, 8}) {
			t.Fatalf("Reshape(2, 8).Shape() = %v", got)
		}
		check(t, r.CopyToHostOn(s, h))
		if got := must(h.Data())(t); got[9] != 9 {
			t.Fatalf("through a reshaped view: %v", got)
		}
		_, err = a.Reshape(3, 5)
		wantErr(t, err, ErrInvalidArgument)
		// A row of a 2-D array and a 1-D array: leading 1s aside, equal.
		row := must(a.Rows(2, 3))(t)
		one := newNdarray[float32](t, p, 4)
		check(t, one.CopyFromOn(s, row))
		if got := toSlice(t, one); got[0] != 8 || got[3] != 11 {
			t.Fatalf("row 2 copied into a 1-D array: %v", got)
		}
		check(t, a.Close())
		_, err = r.Reshape(16)
		wantErr(t, err, ErrClosed)
	})
}
