package cpu

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

func TestAssignedBeforeRead(t *testing.T) {
	x, y := &ir.Var{Name: "x", Type: ir.I64}, &ir.Var{Name: "y", Type: ir.I64}
	c := ir.Op(ir.Gt, ir.Ref(y), ir.I64c(0))
	set := func(v ir.Expr) ir.Stmt { return &ir.Assign{Var: x, Value: v} }
	use := &ir.Assign{Var: y, Value: ir.Ref(x)}
	loop := &ir.For{Cond: c, Body: []ir.Stmt{set(ir.I64c(1))}}
	tests := []struct {
		name string
		list []ir.Stmt
		want bool
	}{
		{"both branches assign", []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{set(ir.I64c(1))}, Else: []ir.Stmt{set(ir.I64c(2))}}, use}, true},
		{"only then assigns", []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{set(ir.I64c(1))}}, use}, false},
		{"read first", []ir.Stmt{use, set(ir.I64c(1))}, false},
		{"never assigned", []ir.Stmt{use}, false},
		{"assigned from itself", []ir.Stmt{set(ir.Op(ir.Add, ir.Ref(x), ir.I64c(1)))}, false},
		{"else leaves the loop", []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{set(ir.I64c(1))}, Else: []ir.Stmt{&ir.Break{}}}, use}, true},
		{"assigned in a loop", []ir.Stmt{loop, use}, false},
		{"condition reads it", []ir.Stmt{&ir.If{Cond: ir.Op(ir.Gt, ir.Ref(x), ir.I64c(0)), Then: []ir.Stmt{set(ir.I64c(1))}, Else: []ir.Stmt{set(ir.I64c(2))}}}, false},
		{"other statements first", []ir.Stmt{&ir.Assign{Var: y, Value: ir.I64c(3)}, set(ir.Ref(y)), use}, true},
		{"nested ifs", []ir.Stmt{&ir.If{Cond: c,
			Then: []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{set(ir.I64c(1))}, Else: []ir.Stmt{set(ir.I64c(2))}}},
			Else: []ir.Stmt{set(ir.I64c(3))}}, use}, true},
		{"a branch reads it first", []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{use, set(ir.I64c(1))}, Else: []ir.Stmt{set(ir.I64c(2))}}}, false},
		{"assigned later on every path", []ir.Stmt{&ir.If{Cond: c, Then: []ir.Stmt{set(ir.I64c(1))}}, set(ir.I64c(2)), use}, true},
	}
	for _, tt := range tests {
		if got := assignedBeforeRead(x, tt.list); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestZeroValueKept: a variable assigned on some lanes only keeps its zero
// value on the others, batch after batch, even though the register holds
// other values in between.
func TestZeroValueKept(t *testing.T) {
	b := ir.NewBuilder("zero")
	out := b.Array("out", ir.I64, 1)
	b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		x := b.DeclZero("x", ir.I64)
		b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(i), ir.I64c(3)), ir.I64c(0)), func() {
			b.Assign(x, ir.Op(ir.Add, ir.Ref(i), ir.I64c(1)))
		}, nil)
		b.Store(out, ir.Ref(x), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	got := make([]int64, 3*Batch+5)
	if err := launch(p, &Args{Arrays: []Array{arr(got)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		want := int64(0)
		if i%3 == 0 {
			want = int64(i + 1)
		}
		if v != want {
			t.Fatalf("out[%d] = %d, want %d", i, v, want)
		}
	}
}
