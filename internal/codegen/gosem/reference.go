package gosem

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Reference computes c natively in Go, with Go's own operators on Go's
// own types (int32 / int32, a uint64 << an int32, int32(float64), the
// builtins min and max), and reports whether Go panics. Where a rule is
// Defined the table's Want must equal it, where it Panics Go must panic,
// and out of range of an ImplementationDefined conversion it is what this
// machine's Go gives, which is what the CPU backend gives (HostGo).
func Reference(c Case) (bits uint64, panics bool) {
	defer func() {
		if recover() != nil {
			bits, panics = 0, true
		}
	}()
	if c.Bitcast {
		return bitcastOf(c), false
	}
	if c.IsConversion() {
		switch c.X {
		case ir.F32:
			return convertTo(c.To, math.Float32frombits(uint32(c.A))), false
		case ir.F64:
			return convertTo(c.To, math.Float64frombits(c.A)), false
		case ir.I8:
			return convertTo(c.To, int8(c.A)), false
		case ir.I16:
			return convertTo(c.To, int16(c.A)), false
		case ir.U8:
			return convertTo(c.To, uint8(c.A)), false
		case ir.U16:
			return convertTo(c.To, uint16(c.A)), false
		case ir.I32:
			return convertTo(c.To, int32(c.A)), false
		case ir.I64:
			return convertTo(c.To, int64(c.A)), false
		case ir.U32:
			return convertTo(c.To, uint32(c.A)), false
		case ir.U64:
			return convertTo(c.To, c.A), false
		}
		panic("gosem: conversion from " + c.X.String())
	}
	switch c.X {
	case ir.I32:
		return integerOp(c, int32(c.A)), false
	case ir.I64:
		return integerOp(c, int64(c.A)), false
	case ir.U32:
		return integerOp(c, uint32(c.A)), false
	case ir.U64:
		return integerOp(c, c.A), false
	case ir.F32:
		return toBits(floatOp(c.Op, math.Float32frombits(uint32(c.A)), math.Float32frombits(uint32(c.B)))), false
	case ir.F64:
		return toBits(floatOp(c.Op, math.Float64frombits(c.A), math.Float64frombits(c.B))), false
	}
	panic("gosem: operands of type " + c.X.String())
}

type integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64
}

// number is every type a conversion starts from or ends at.
type number interface {
	integer | ~int8 | ~int16 | ~uint8 | ~uint16 | float
}

type float interface{ ~float32 | ~float64 }

// integerOp is c's operator on a, with B read as c.Y (a shift's count) or
// as a's type.
func integerOp[T integer](c Case, a T) uint64 {
	if c.Op.IsShift() {
		switch c.Y {
		case ir.I32:
			return toBits(shiftBy(c.Op, a, int32(c.B)))
		case ir.I64:
			return toBits(shiftBy(c.Op, a, int64(c.B)))
		case ir.U32:
			return toBits(shiftBy(c.Op, a, uint32(c.B)))
		case ir.U64:
			return toBits(shiftBy(c.Op, a, c.B))
		}
		panic("gosem: shift count of type " + c.Y.String())
	}
	b := T(c.B)
	switch c.Op {
	case ir.Div:
		return toBits(a / b)
	case ir.Rem:
		return toBits(a % b)
	case ir.Min:
		return toBits(min(a, b))
	case ir.Max:
		return toBits(max(a, b))
	}
	panic("gosem: integer operator")
}

// shiftBy is a << n or a >> n, n of its own integer type: Go panics on a
// negative n.
func shiftBy[T, N integer](op ir.BinOp, a T, n N) T {
	if op == ir.Shl {
		return a << n
	}
	return a >> n
}

func floatOp[T float](op ir.BinOp, a, b T) T {
	switch op {
	case ir.Min:
		return min(a, b)
	case ir.Max:
		return max(a, b)
	}
	panic("gosem: float operator")
}

// convertTo is Go's conversion of x to type to.
func convertTo[F number](to ir.Type, x F) uint64 {
	switch to {
	case ir.I8:
		return toBits(int8(x))
	case ir.I16:
		return toBits(int16(x))
	case ir.U8:
		return toBits(uint8(x))
	case ir.U16:
		return toBits(uint16(x))
	case ir.F32:
		return toBits(float32(x))
	case ir.F64:
		return toBits(float64(x))
	case ir.I32:
		return toBits(int32(x))
	case ir.I64:
		return toBits(int64(x))
	case ir.U32:
		return toBits(uint32(x))
	case ir.U64:
		return toBits(uint64(x))
	}
	panic("gosem: conversion to " + to.String())
}

// bitcastOf is c's bits read as c.To, with the math package's
// functions where Go has them and a conversion (which keeps the bits)
// between integers of one size.
func bitcastOf(c Case) uint64 {
	switch {
	case c.X == ir.F32 && c.To == ir.U32:
		return toBits(math.Float32bits(math.Float32frombits(uint32(c.A))))
	case c.X == ir.F32 && c.To == ir.I32:
		return toBits(int32(math.Float32bits(math.Float32frombits(uint32(c.A)))))
	case c.X == ir.F64 && c.To == ir.U64:
		return toBits(math.Float64bits(math.Float64frombits(c.A)))
	case c.X == ir.F64 && c.To == ir.I64:
		return toBits(int64(math.Float64bits(math.Float64frombits(c.A))))
	case c.To == ir.F32:
		return toBits(math.Float32frombits(uint32(c.A)))
	case c.To == ir.F64:
		return toBits(math.Float64frombits(c.A))
	}
	return narrow(c.To, c.A)
}

// toBits is v as ir.Const holds a value of its type.
func toBits[T number](v T) uint64 {
	switch v := any(v).(type) {
	case int8:
		return uint64(int64(v))
	case int16:
		return uint64(int64(v))
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case int32:
		return uint64(int64(v))
	case int64:
		return uint64(v)
	case uint32:
		return uint64(v)
	case uint64:
		return v
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	}
	panic("gosem: a value of a named type")
}
