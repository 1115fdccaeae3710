package builtin

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestFillKernels: every fill kernel verifies and lowers, and every element
// size an Ndarray can have has one.
func TestFillKernels(t *testing.T) {
	for _, ft := range FillTypes {
		k := Fill(ft)
		if err := ir.Verify(k); err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if _, err := lower.Lower(k); err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
	}
	for _, et := range []ir.Type{ir.Bool, ir.I8, ir.I16, ir.U8, ir.U16, ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64} {
		if ft, ok := FillType(et.Size()); !ok || ft.Size() != et.Size() {
			t.Errorf("no fill kernel for %s (%d bytes)", et, et.Size())
		}
	}
}
