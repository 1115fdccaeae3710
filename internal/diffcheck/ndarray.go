package diffcheck

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/quadrants-go/qd"
)

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

// shapeOf is the shape of a rectangular slice of 1 to 4 dimensions.
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
	case reflect.Int8:
		return ndOf[int8](p, a)
	case reflect.Int16:
		return ndOf[int16](p, a)
	case reflect.Uint8:
		return ndOf[uint8](p, a)
	case reflect.Uint16:
		return ndOf[uint16](p, a)
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
	if f, ok := recordElems.Load(t); ok {
		return f.(func(*qd.Program, any) (any, func() error, func() error, error))(p, a)
	}
	return nil, nil, nil, fmt.Errorf("no Ndarray for %T (a struct or array element type needs RecordElem)", a)
}

// recordElems maps struct and array element types to ndOf for them: Go
// cannot instantiate ndOf from a reflect.Type, so the tests name theirs.
var recordElems sync.Map

// RecordElem lets Check pass slices of the struct or array type T as
// Ndarrays.
func RecordElem[T any]() {
	recordElems.Store(reflect.TypeFor[T](), ndOf[T])
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
