package builtin

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

// FillTypes are the element types of the fill kernels, one per element
// size: an array of any element type is filled through the one of its
// size, with the value's bits. The 1- and 2-byte kernels store u8 and u16,
// which hold any bit pattern of those sizes (a bool's too).
var FillTypes = []ir.Type{ir.U8, ir.U16, ir.U32, ir.U64}

// FillType is the fill kernel's element type for elements of size bytes,
// and false when there is none.
func FillType(size int) (ir.Type, bool) {
	for _, t := range FillTypes {
		if t.Size() == size {
			return t, true
		}
	}
	return ir.Invalid, false
}

// Fill is the fill kernel for 1-D arrays of t (one of FillTypes):
// x[i] = v for every i.
func Fill(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder(fmt.Sprintf("qdFill%d", 8*t.Size()))
	x, v := b.Array("x", t, 1), b.Scalar("v", t)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(x, ir.P(v), ir.Ref(i))
	})
	return b.Kernel()
}
