package kabi

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// AddSite numbers the sites in the order they are added and marks the
// dimensions indexed by a uint64.
func TestAddSite(t *testing.T) {
	a := &ir.Param{Name: "a", Elem: ir.F32, Dims: 2}
	b := &ir.Param{Name: "b", Elem: ir.I32, Dims: 1}
	i32, u64, i64 := ir.I32c(1), &ir.Const{T: ir.U64, Bits: 1}, ir.I64c(1)
	cases := []struct {
		array *ir.Param
		index []ir.Expr
		line  int
		want  Site
	}{
		{a, []ir.Expr{i64, i64}, 3, Site{Array: "a", Pos: ir.Pos{Line: 3}}},
		{a, []ir.Expr{u64, i32}, 4, Site{Array: "a", Pos: ir.Pos{Line: 4}, U64: 0b01}},
		{a, []ir.Expr{i32, u64}, 5, Site{Array: "a", Pos: ir.Pos{Line: 5}, U64: 0b10}},
		{b, []ir.Expr{u64}, 6, Site{Array: "b", Pos: ir.Pos{Line: 6}, U64: 0b1}},
	}
	m := &Module{Bounds: true}
	for i, c := range cases {
		if got := m.AddSite(c.array, c.index, ir.Pos{Line: c.line}); got != i {
			t.Errorf("site %d numbered %d", i, got)
		}
	}
	if len(m.Sites) != len(cases) {
		t.Fatalf("%d sites, want %d", len(m.Sites), len(cases))
	}
	for i, c := range cases {
		if m.Sites[i] != c.want {
			t.Errorf("site %d = %+v, want %+v", i, m.Sites[i], c.want)
		}
	}
}
