package comm

import (
	"fmt"
	"unsafe"
)

// The CPU transport's arithmetic: dst = dst op src elementwise, and Avg's
// final division. Integers wrap as in Go; Max and Min of floats follow
// Go's max and min (a NaN wins).

type number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func as[T number](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(*new(T))))
}

func combine[T number](op Op, d, s []T) {
	s = s[:len(d)]
	switch op {
	case Sum, Avg:
		for i := range d {
			d[i] += s[i]
		}
	case Prod:
		for i := range d {
			d[i] *= s[i]
		}
	case Max:
		for i := range d {
			d[i] = max(d[i], s[i])
		}
	case Min:
		for i := range d {
			d[i] = min(d[i], s[i])
		}
	}
}

// The divisions go through 64 bits: a group of 300 ranks averages int8s
// without a divisor that wraps to 44 (or to 0, which would panic).
func divideInt[T ~int8 | ~int16 | ~int32 | ~int64](d []T, n int) {
	for i := range d {
		d[i] = T(int64(d[i]) / int64(n))
	}
}

func divideUint[T ~uint8 | ~uint16 | ~uint32 | ~uint64](d []T, n int) {
	for i := range d {
		d[i] = T(uint64(d[i]) / uint64(n))
	}
}

func divideFloat[T ~float32 | ~float64](d []T, n int) {
	for i := range d {
		d[i] /= T(n)
	}
}

// reduceInto sets dst = dst op src, elements of dt (equal lengths).
func reduceInto(dt DType, op Op, dst, src []byte) {
	switch dt {
	case Int8:
		combine(op, as[int8](dst), as[int8](src))
	case Uint8:
		combine(op, as[uint8](dst), as[uint8](src))
	case Int16:
		combine(op, as[int16](dst), as[int16](src))
	case Uint16:
		combine(op, as[uint16](dst), as[uint16](src))
	case Int32:
		combine(op, as[int32](dst), as[int32](src))
	case Uint32:
		combine(op, as[uint32](dst), as[uint32](src))
	case Int64:
		combine(op, as[int64](dst), as[int64](src))
	case Uint64:
		combine(op, as[uint64](dst), as[uint64](src))
	case Float32:
		combine(op, as[float32](dst), as[float32](src))
	case Float64:
		combine(op, as[float64](dst), as[float64](src))
	default:
		panic(fmt.Sprintf("comm: reduce of %v", dt))
	}
}

// finish applies op's last step to a reduced dst: Avg divides by n
// (integers truncate toward zero, as Go's /).
func finish(dt DType, op Op, dst []byte, n int) {
	if op != Avg || n == 1 {
		return
	}
	switch dt {
	case Int8:
		divideInt(as[int8](dst), n)
	case Uint8:
		divideUint(as[uint8](dst), n)
	case Int16:
		divideInt(as[int16](dst), n)
	case Uint16:
		divideUint(as[uint16](dst), n)
	case Int32:
		divideInt(as[int32](dst), n)
	case Uint32:
		divideUint(as[uint32](dst), n)
	case Int64:
		divideInt(as[int64](dst), n)
	case Uint64:
		divideUint(as[uint64](dst), n)
	case Float32:
		divideFloat(as[float32](dst), n)
	case Float64:
		divideFloat(as[float64](dst), n)
	}
}
