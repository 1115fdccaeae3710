package ir

import "fmt"

// Type is a scalar type of the IR. Arrays are described by Param.Dims over an
// element Type.
type Type uint8

// The scalar types. Go's int and uint map to I64 and U64.
const (
	Invalid Type = iota
	Bool
	I32
	I64
	U32
	U64
	F32
	F64
	// The 8- and 16-bit integers (appended, so the types above keep their
	// numbers). Arithmetic is done in 32 bits and converted back, as the
	// front end writes it: generators only load, store, convert and hold
	// them.
	I8
	I16
	U8
	U16
)

var typeNames = [...]string{Invalid: "invalid", Bool: "bool", I32: "i32", I64: "i64", U32: "u32", U64: "u64", F32: "f32", F64: "f64",
	I8: "i8", I16: "i16", U8: "u8", U16: "u16"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Valid reports whether t is one of the scalar types.
func (t Type) Valid() bool { return t >= Bool && t <= U16 }

// IsSmall reports whether t is an 8- or 16-bit integer type, which holds
// values but is computed with in 32 bits.
func (t Type) IsSmall() bool { return t >= I8 && t <= U16 }

// Size is the size of a value of t in bytes, as stored in an array.
func (t Type) Size() int {
	switch t {
	case Bool, I8, U8:
		return 1
	case I16, U16:
		return 2
	case I32, U32, F32:
		return 4
	case I64, U64, F64:
		return 8
	}
	return 0
}

// Bits is the width of t in bits (1 for Bool).
func (t Type) Bits() int {
	if t == Bool {
		return 1
	}
	return 8 * t.Size()
}

// IsInteger reports whether t is a signed or unsigned integer type.
func (t Type) IsInteger() bool { return t >= I32 && t <= U64 || t.IsSmall() }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t == I32 || t == I64 || t == I8 || t == I16 }

// IsUnsigned reports whether t is an unsigned integer type.
func (t Type) IsUnsigned() bool { return t == U32 || t == U64 || t == U8 || t == U16 }

// IsFloat reports whether t is F32 or F64.
func (t Type) IsFloat() bool { return t == F32 || t == F64 }

// IsNumeric reports whether t is an integer or float type.
func (t Type) IsNumeric() bool { return t.IsInteger() || t.IsFloat() }

// Pos is a source position: the file, line and column a node came from.
// The zero Pos means "unknown" and prints as the empty string.
type Pos struct {
	File      string
	Line, Col int
}

// IsKnown reports whether p holds a position.
func (p Pos) IsKnown() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsKnown() {
		return ""
	}
	file := p.File
	if file == "" {
		file = "<kernel>"
	}
	if p.Col > 0 {
		return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d", file, p.Line)
}
