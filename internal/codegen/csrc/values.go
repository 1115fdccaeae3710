package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

// Values beyond the 32- and 64-bit scalars: the leaves of record
// elements, the 8- and 16-bit integers and bit casts.
//
// A record array arrives as the address of its first byte (unsigned
// char *): a leaf is the byte at element·Rec.Size + Leaf.Offset, read
// and written through a pointer of the leaf's C type (the compilers run
// without type-based alias analysis, CompilerOptions). The 8- and 16-bit
// integers are C's signed char, short, unsigned char and unsigned short,
// whose conversions are Go's (gosem.SmallInts): to them by the low bits,
// from them extended by their signedness, to floats exactly; from a float
// through int32 (gosem.FloatToInt). A scalar parameter of such a type
// fills a 4-byte slot (kabi.ScalarSlot) and is read by its low bits.

// at is the C lvalue of leaf of element off (an int64 operand) of array a.
func (f *fn) at(a *ir.Param, off string, leaf int) string {
	if a.Rec == nil {
		return fmt.Sprintf("%s[%s]", f.array(a), off)
	}
	return fmt.Sprintf("(*(%s *)(%s + (qd_u64)%s * %du + %d))", memType(a.LeafType(leaf)), f.array(a), off, a.Rec.Size, a.LeafOffset(leaf))
}

// arrayType is the C type of array a's elements in an entry's parameter:
// bytes for a record array.
func arrayType(a *ir.Param) string {
	if a.Rec != nil {
		return "unsigned char"
	}
	return memType(a.Elem)
}

// slotType is the C type of a scalar parameter's slot: bools and the 8-
// and 16-bit integers travel in 32 bits.
func slotType(t ir.Type) string {
	switch {
	case t == ir.Bool || t == ir.U8 || t == ir.U16:
		return "qd_u32"
	case t == ir.I8 || t == ir.I16:
		return "qd_i32"
	}
	return cType(t)
}

// bitcast writes x's bits (of type from) as a value of type to, of the
// same size (gosem.Bitcast): through the prelude's bit casts for floats,
// a conversion (which keeps the bits) between integers.
func (f *fn) bitcast(to, from ir.Type, x string) string {
	if to.Size() != from.Size() || to.IsSmall() || !to.IsNumeric() || !from.IsNumeric() {
		f.fail("bit cast of %v to %v", from, to)
	}
	switch {
	case from.IsFloat():
		return f.tmp(to, "(%s)qd_bits_%v(%s)", cType(to), from, x)
	case to.IsFloat():
		return f.tmp(to, "qd_%v_from((%s)%s)", to, unsignedOf(to), x)
	}
	return f.tmp(to, "(%s)%s", cType(to), x)
}
