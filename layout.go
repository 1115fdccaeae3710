package qd

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/quadrants-go/qd/internal/ir"
)

// Element types.
//
// An array's element type is any Go type built from scalars (bool, the
// integers of every width, float32, float64, and defined types over them)
// by fixed arrays and structs: float32, qd.Vec3[float32], [4]int16,
// struct{ X, V qd.Vec2[float32]; J float32 }. Device memory holds elements
// in Go's own layout (the fields' offsets and the element's size that
// unsafe.Offsetof and unsafe.Sizeof give), so host copies move bytes as they
// are, and a kernel reads one scalar leaf of an element at its offset. Go
// aligns every scalar to its size, which every backend honours. Pointers,
// slices, maps, strings, interfaces, funcs, channels, complex numbers and
// uintptr have no meaning on a device: an element type holding one is
// refused, naming the field.

// elemLayout is an element type's layout: a scalar's IR type, or the
// record of its leaves.
type elemLayout struct {
	scalar ir.Type    // ir.Invalid for a record
	rec    *ir.Record // nil for a scalar
	size   int        // bytes per element
	name   string     // the Go type, for messages
	err    error      // why the type cannot be an element type, or nil
}

// layouts caches layoutFor by reflect.Type.
var layouts sync.Map

// layoutOf is the layout of T (see layoutFor).
func layoutOf[T any]() *elemLayout { return layoutFor(reflect.TypeFor[T]()) }

// layoutFor is the layout of elements of type t, computed once per type;
// its err says why t cannot be an element type.
func layoutFor(t reflect.Type) *elemLayout {
	if l, ok := layouts.Load(t); ok {
		return l.(*elemLayout)
	}
	l := &elemLayout{name: t.String(), size: int(t.Size())}
	if s, ok := scalarType(t); ok {
		l.scalar = s
	} else {
		r := &ir.Record{Name: t.String(), Size: int(t.Size()), Align: t.Align()}
		l.err = flatten(t, "", 0, r)
		if l.err == nil && len(r.Leaves) == 0 {
			l.err = fmt.Errorf("%s has no scalar in it, so it has no meaning on a device", t)
		}
		l.rec = r
	}
	v, _ := layouts.LoadOrStore(t, l)
	return v.(*elemLayout)
}

// scalarType is the IR type of a scalar Go type (a defined type over one
// too): int and uint are 64-bit.
func scalarType(t reflect.Type) (ir.Type, bool) {
	switch t.Kind() {
	case reflect.Bool:
		return ir.Bool, true
	case reflect.Int8:
		return ir.I8, true
	case reflect.Int16:
		return ir.I16, true
	case reflect.Int32:
		return ir.I32, true
	case reflect.Int, reflect.Int64:
		return ir.I64, true
	case reflect.Uint8:
		return ir.U8, true
	case reflect.Uint16:
		return ir.U16, true
	case reflect.Uint32:
		return ir.U32, true
	case reflect.Uint, reflect.Uint64:
		return ir.U64, true
	case reflect.Float32:
		return ir.F32, true
	case reflect.Float64:
		return ir.F64, true
	}
	return ir.Invalid, false
}

// flatten appends the leaves of a value of type t at offset off, whose
// place in the element is path, to r.
func flatten(t reflect.Type, path string, off int, r *ir.Record) error {
	if s, ok := scalarType(t); ok {
		r.Leaves = append(r.Leaves, ir.Leaf{Path: path, Type: s, Offset: off})
		return nil
	}
	switch t.Kind() {
	case reflect.Array:
		e := t.Elem()
		for i := range t.Len() {
			if err := flatten(e, path+"["+strconv.Itoa(i)+"]", off+i*int(e.Size()), r); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := flatten(f.Type, path+"."+f.Name, off+int(f.Offset), r); err != nil {
				return err
			}
		}
		return nil
	}
	where := "it"
	if path != "" {
		where = "its field " + path
	}
	return fmt.Errorf("%s is not an array element type: %s has type %s, which has no meaning on a device (elements are scalars, fixed arrays and structs of these)", r.Name, where, t)
}

// matches reports whether the layout is that of p's elements: the same
// scalar type, or the same leaves at the same offsets in an element of the
// same size.
func (l *elemLayout) matches(p *ir.Param) bool {
	if p.Rec == nil || l.rec == nil {
		return p.Rec == nil && l.rec == nil && l.scalar == p.Elem
	}
	a, b := l.rec, p.Rec
	if a.Size != b.Size || len(a.Leaves) != len(b.Leaves) {
		return false
	}
	for i, x := range a.Leaves {
		if y := b.Leaves[i]; x.Type != y.Type || x.Offset != y.Offset {
			return false
		}
	}
	return true
}

// mismatch says how the layout differs from that of p's elements when both
// are records ("" otherwise): the first leaf that differs, or the sizes,
// so that a launch with a struct that drifted from the kernel's says where.
func (l *elemLayout) mismatch(p *ir.Param) string {
	if p.Rec == nil || l.rec == nil {
		return ""
	}
	a, b := p.Rec, l.rec
	for i := range min(len(a.Leaves), len(b.Leaves)) {
		x, y := a.Leaves[i], b.Leaves[i]
		if x.Type != y.Type || x.Offset != y.Offset {
			return fmt.Sprintf(": the kernel's %s has %s %s at byte %d where %s has %s %s at byte %d",
				a.Name, x.Path, x.Type, x.Offset, b.Name, y.Path, y.Type, y.Offset)
		}
	}
	if len(a.Leaves) != len(b.Leaves) {
		return fmt.Sprintf(": the kernel's %s has %d scalars, %s %d", a.Name, len(a.Leaves), b.Name, len(b.Leaves))
	}
	if a.Size != b.Size {
		return fmt.Sprintf(": the kernel's %s has %d bytes, %s %d", a.Name, a.Size, b.Name, b.Size)
	}
	return ""
}
