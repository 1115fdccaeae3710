package qd

import (
	"fmt"
	"math"
	"strconv"

	"github.com/quadrants-go/qd/internal/ir"
)

// Scalar arguments.
//
// A launch takes its arguments as ...any, so Go has already given each a
// type: a typed value keeps its own, and an untyped constant becomes an
// int, a float64 (or a bool). The rule is what a Go call of the kernel
// function would do: a typed argument must have the parameter's exact type
// (int32 for an int parameter is refused, as is int64); an int or a
// float64, which is what an untyped constant becomes, is converted to the
// parameter's type as Go converts an untyped constant, so it must fit: 2
// and 0.5 work for a float32 parameter, 1<<40 does not fit an int32, and
// 2.5 would be truncated for an int. qd cannot tell an untyped constant
// from an int or a float64 variable, so it judges by the value. An int
// variable that fits converts like the constant it could have been. For a
// float32 parameter a float64 converts only when it is what a constant of
// float32's precision would be: exactly a float32, or written in at most 9
// significant digits (0.1, 9.81, 1e-4). A float64 computed at run time
// (1.0/3, a float64 variable of the program) is refused, as Go refuses a
// float64 variable for a float32 parameter; so is a constant with more
// digits than a float32 holds (math.Pi): write float32(math.Pi). Kernels
// built with the IR builder have no Go types; there a 64-bit integer
// parameter takes int or int64, and uint or uint64.

// scalarRule is quoted by every error about a scalar argument.
const scalarRule = "a scalar argument has the parameter's type, or is an untyped constant such as 2 or 0.5, " +
	"which is converted as in a Go call of the kernel and must fit"

// scalarArg converts a scalar argument for p to its ir.Const bit pattern,
// or says what is wrong with it.
func scalarArg(p *ir.Param, v any) (uint64, string) {
	if bits, ok := exactScalar(p, v); ok {
		return bits, ""
	}
	switch x := v.(type) {
	case int:
		if bits, msg, ok := constInt(p, int64(x)); ok || msg != "" {
			return bits, msg
		}
	case float64:
		if bits, msg, ok := constFloat(p, x); ok || msg != "" {
			return bits, msg
		}
	}
	return 0, fmt.Sprintf("want %s, got %s (%s)", scalarName(p), describe(v), scalarRule)
}

// declared is p's Go type when the source declared it as a predeclared
// scalar type, else "" (a kernel built with the IR builder, or a named
// type): then int and int64 (uint and uint64) both match a 64-bit integer.
func declared(p *ir.Param) string {
	switch p.GoType {
	case "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return p.GoType
	}
	return ""
}

// matches reports whether a value of Go type t (int, int64, uint or
// uint64) matches p, a 64-bit integer parameter.
func matches(p *ir.Param, t string) bool {
	d := declared(p)
	return d == "" || d == t
}

// scalarName is p's type in messages.
func scalarName(p *ir.Param) string {
	if d := declared(p); d != "" {
		return d
	}
	return goTypeName(p.Elem)
}

// exactScalar converts v if it has p's own Go type.
func exactScalar(p *ir.Param, v any) (uint64, bool) {
	switch x := v.(type) {
	case bool:
		if p.Elem == ir.Bool {
			if x {
				return 1, true
			}
			return 0, true
		}
	case int32:
		if p.Elem == ir.I32 {
			return uint64(int64(x)), true
		}
	case int8:
		if p.Elem == ir.I8 {
			return uint64(int64(x)), true
		}
	case int16:
		if p.Elem == ir.I16 {
			return uint64(int64(x)), true
		}
	case uint8:
		if p.Elem == ir.U8 {
			return uint64(x), true
		}
	case uint16:
		if p.Elem == ir.U16 {
			return uint64(x), true
		}
	case int:
		if p.Elem == ir.I64 && matches(p, "int") {
			return uint64(x), true
		}
	case int64:
		if p.Elem == ir.I64 && matches(p, "int64") {
			return uint64(x), true
		}
	case uint32:
		if p.Elem == ir.U32 {
			return uint64(x), true
		}
	case uint:
		if p.Elem == ir.U64 && matches(p, "uint") {
			return uint64(x), true
		}
	case uint64:
		if p.Elem == ir.U64 && matches(p, "uint64") {
			return x, true
		}
	case float32:
		if p.Elem == ir.F32 {
			return uint64(math.Float32bits(x)), true
		}
	case float64:
		if p.Elem == ir.F64 {
			return math.Float64bits(x), true
		}
	}
	return 0, false
}

// constInt converts an int, taken as an untyped integer constant. ok is
// false with no message when p is not numeric.
func constInt(p *ir.Param, x int64) (bits uint64, msg string, ok bool) {
	overflows := func() (uint64, string, bool) {
		return 0, fmt.Sprintf("got int %d, which overflows %s (%s)", x, scalarName(p), scalarRule), false
	}
	switch p.Elem {
	case ir.I32:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return overflows()
		}
		return uint64(x), "", true
	case ir.I64:
		return uint64(x), "", true
	case ir.I8, ir.I16:
		if lim := int64(1) << (p.Elem.Bits() - 1); x < -lim || x >= lim {
			return overflows()
		}
		return uint64(x), "", true
	case ir.U8, ir.U16:
		if x < 0 || x >= int64(1)<<p.Elem.Bits() {
			return overflows()
		}
		return uint64(x), "", true
	case ir.U32:
		if x < 0 || x > math.MaxUint32 {
			return overflows()
		}
		return uint64(x), "", true
	case ir.U64:
		if x < 0 {
			return overflows()
		}
		return uint64(x), "", true
	case ir.F32:
		return uint64(math.Float32bits(float32(x))), "", true
	case ir.F64:
		return math.Float64bits(float64(x)), "", true
	}
	return 0, "", false
}

// constFloat converts a float64, taken as an untyped floating-point
// constant: to an integer type only when it is a whole number that fits,
// to float32 rounded unless it overflows.
func constFloat(p *ir.Param, x float64) (bits uint64, msg string, ok bool) {
	fail := func(why string) (uint64, string, bool) {
		return 0, fmt.Sprintf("got float64 %v, which %s %s (%s)", x, why, scalarName(p), scalarRule), false
	}
	var lo, hi float64 // the integer type's range, hi exclusive
	switch p.Elem {
	case ir.F32:
		f := float32(x)
		if math.IsInf(float64(f), 0) && !math.IsInf(x, 0) {
			return fail("overflows")
		}
		if !float32Constant(x) {
			return 0, fmt.Sprintf("got float64 %v for a float32 parameter: a float64 value is not a float32, as in a Go call; pass float32(x) (an untyped constant converts, but one with more digits than a float32 holds, such as math.Pi, needs float32(...) too)", x), false
		}
		return uint64(math.Float32bits(f)), "", true
	case ir.I32:
		lo, hi = math.MinInt32, math.MaxInt32+1
	case ir.I64:
		lo, hi = math.MinInt64, -math.MinInt64
	case ir.U32:
		lo, hi = 0, math.MaxUint32+1
	case ir.I8, ir.I16:
		hi = float64(int64(1) << (p.Elem.Bits() - 1))
		lo = -hi
	case ir.U8, ir.U16:
		lo, hi = 0, float64(int64(1)<<p.Elem.Bits())
	case ir.U64:
		lo, hi = 0, 2*-float64(math.MinInt64)
	default:
		return 0, "", false
	}
	if x != math.Trunc(x) {
		return fail("would be truncated converting to")
	}
	if x < lo || x >= hi {
		return fail("overflows")
	}
	if p.Elem == ir.U64 && x >= -float64(math.MinInt64) {
		return uint64(x), "", true // beyond int64: convert directly
	}
	return uint64(int64(x)), "", true
}

// float32Constant reports whether x, a float64 argument for a float32
// parameter, is what an untyped constant of float32's precision becomes:
// exactly a float32, or a number of at most 9 significant decimal digits
// (float32's decimal precision: every float32 prints in 9).
func float32Constant(x float64) bool {
	if float64(float32(x)) == x || math.IsInf(x, 0) || math.IsNaN(x) {
		return true
	}
	digits := 0
	for _, c := range strconv.FormatFloat(x, 'e', -1, 64) {
		if c == 'e' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return digits <= 9
}
