package gosem

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Saturate is the result FloatToInt requires of the GPUs for the float x
// (a float32 widens to it exactly): x truncated toward zero and clamped to
// the range of the integer type t, NaN giving 0, as ir.Const bits of t;
// inRange reports whether the truncated x was in t's range, where Go
// defines the same result. It is PTX's cvt.rzi, which the C prelude's
// conversions copy, and kabi's host evaluator converts with it.
//
// To an 8- or 16-bit type the conversion goes through int32, as Go's
// compiler converts (int8(x) is int8(int32(x)) on every architecture it
// targets): x saturated to int32's range, NaN giving 0, then its low
// bits; inRange reports whether the truncated x was in t's own range.
func Saturate(t ir.Type, x float64) (bits uint64, inRange bool) {
	if t.IsSmall() {
		wide, _ := Saturate(ir.I32, x)
		lo, hi := smallRange(t)
		x = math.Trunc(x)
		return narrow(t, wide), x >= lo && x <= hi
	}
	var lo, past float64 // the least value in range and the least above it
	var least, most uint64
	switch t {
	case ir.I32:
		lo, past, least, most = math.MinInt32, 0x1p31, i32(math.MinInt32), math.MaxInt32
	case ir.I64:
		lo, past, least, most = -0x1p63, 0x1p63, i64(math.MinInt64), math.MaxInt64
	case ir.U32:
		past, most = 0x1p32, math.MaxUint32
	case ir.U64:
		past, most = 0x1p64, math.MaxUint64
	default:
		panic("gosem: saturation to " + t.String())
	}
	x = math.Trunc(x)
	switch {
	case x != x:
		return 0, false
	case x < lo:
		return least, false
	case x >= past:
		return most, false
	case t.IsSigned():
		return uint64(int64(x)), true
	}
	return uint64(x), true
}

// smallRange is the least and the greatest value of an 8- or 16-bit type.
func smallRange(t ir.Type) (lo, hi float64) {
	switch t {
	case ir.I8:
		return math.MinInt8, math.MaxInt8
	case ir.I16:
		return math.MinInt16, math.MaxInt16
	case ir.U8:
		return 0, math.MaxUint8
	}
	return 0, math.MaxUint16
}

// narrow is the integer bits x (of any extension) converted to the
// integer type t as Go converts: its low bits, in ir.Const's form.
func narrow(t ir.Type, x uint64) uint64 {
	switch t {
	case ir.I8:
		return uint64(int64(int8(x)))
	case ir.I16:
		return uint64(int64(int16(x)))
	case ir.U8:
		return uint64(uint8(x))
	case ir.U16:
		return uint64(uint16(x))
	case ir.I32:
		return uint64(int64(int32(x)))
	case ir.U32:
		return uint64(uint32(x))
	}
	return x
}
