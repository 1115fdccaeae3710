package ptx

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// Values beyond the 32- and 64-bit scalars: the 8- and 16-bit integers,
// bit casts, and the leaves of record elements.
//
// An 8- or 16-bit value lives in a 32-bit register in canonical form
// (classOf): its own bits sign-extended (int8, int16) or zero-extended
// (uint8, uint16). Loads make it (ld.s8 sign-extends, ld.u8 zero-extends),
// stores keep the low bits, a scalar parameter is made canonical once at
// entry, and conversions keep it: to a small type the value is cut to the
// type's bits and extended again (Go's truncation, gosem.SmallInts); from
// one, a 32-bit result is the register itself and a 64-bit one extends
// it by the source's signedness; a float converts through int32 as Go's
// compiler does (cvt.rzi.s32, which saturates and gives 0 for NaN, then
// the cut: gosem.FloatToInt). The IR has no arithmetic on small values,
// so nothing else needs the form.

// canonical is the instruction that puts src's low bits in t's canonical
// form in dst: a sign extension from the type's width, or a mask.
func canonical(t ir.Type, dst, src string) string {
	switch t {
	case ir.I8:
		return fmt.Sprintf("cvt.s32.s8 %s, %s", dst, src)
	case ir.I16:
		return fmt.Sprintf("cvt.s32.s16 %s, %s", dst, src)
	case ir.U8:
		return fmt.Sprintf("and.b32 %s, %s, 255", dst, src)
	case ir.U16:
		return fmt.Sprintf("and.b32 %s, %s, 65535", dst, src)
	}
	panic(fmt.Sprintf("ptx: %v is not an 8- or 16-bit type", t))
}

// convertSmall writes a conversion to or from an 8- or 16-bit type.
func (f *fnWriter) convertSmall(to, from ir.Type, x string) string {
	r := f.reg(to)
	switch {
	case to.IsSmall() && from.IsFloat():
		// Through int32, as Go's compiler converts (gosem.FloatToInt).
		w := f.reg(ir.I32)
		f.emit("cvt.rzi.s32.%s %s, %s", opType(from), w, x)
		f.emit("%s", canonical(to, r, w))
	case to.IsSmall() && from.Size() == 8:
		w := f.reg(ir.U32)
		f.emit("cvt.u32.u64 %s, %s", w, x)
		f.emit("%s", canonical(to, r, w))
	case to.IsSmall():
		// From a 32-bit or small register: its low bits, extended again.
		f.emit("%s", canonical(to, r, x))
	case to.IsFloat():
		// Exact: the register holds the value extended to 32 bits.
		f.emit("cvt.rn.%s.%s %s, %s", opType(to), opType(from), r, x)
	case to.Size() == 8:
		f.emit("cvt.%s.%s %s, %s", opType(widen(from)), opType(from), r, x)
	default:
		f.mov(to, r, x) // to 32 bits: the canonical register is the value
	}
	return r
}

// bitcast writes x's bits (of type from) as a value of type to, of the
// same size (gosem.Bitcast): a move between register classes.
func (f *fnWriter) bitcast(to, from ir.Type, x string) string {
	if to.Size() != from.Size() || to.IsSmall() || !to.IsNumeric() || !from.IsNumeric() {
		f.fail("bit cast of %v to %v", from, to)
	}
	r := f.reg(to)
	f.emit("mov.b%d %s, %s", 8*to.Size(), r, x)
	return r
}

// leafOffset is the byte offset, within an element of a, of the leaf an
// access names: 0 for an array of scalars.
func leafOffset(a *ir.Param, leaf int) int64 { return int64(a.LeafOffset(leaf)) }

// plus is the address operand addr (a register, or register+immediate)
// moved by off bytes.
func plus(addr string, off int64) string {
	if off == 0 {
		return addr
	}
	if reg, imm, ok := strings.Cut(addr, "+"); ok {
		if n, err := strconv.ParseInt(imm, 10, 64); err == nil {
			return fmt.Sprintf("%s+%d", reg, n+off)
		}
	}
	return fmt.Sprintf("%s+%d", addr, off)
}
