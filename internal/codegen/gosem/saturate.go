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
func Saturate(t ir.Type, x float64) (bits uint64, inRange bool) {
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
