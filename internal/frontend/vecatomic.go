package frontend

import (
	"go/ast"
	"go/token"

	"github.com/quadrants-go/qd/internal/ir"
)

// Vector atomics: qd.AtomicAddVec(&grid[i][j].V, dv) adds each component
// atomically on its own, so it becomes one ir.Atomic per leaf of the
// vector, each its own statement (the function has no result), in
// component order, all on the same element.
//
// The statements are shaped so that the PTX generator can fuse two or four
// float32 adds into one red.global.add.v2/.v4.f32 (codegen/ptx vecred.go):
// adjacent leaves of one element in a row, the element's indices the same
// pure expressions in every atomic (spilled to locals when they are not
// simple) and the values pure (each component spilled when it is not
// simple, which also evaluates the whole vector before the first add, as
// Go evaluates arguments before the call). Every other generator, and the
// reduction pass, sees separate scalar atomics, each correct on its own:
// an add whose element does not vary with the parallel index is a
// reduction per component.

// atomicVec translates qd.AtomicAddVec(&x[i...].F, v).
func (b *builder) atomicVec(x *ast.CallExpr, op ir.AtomicOp, qual string) {
	if len(x.Args) != 2 {
		return // a type error already
	}
	addr, ok := ast.Unparen(x.Args[0]).(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND || !b.isRecordAccess(addr.X) {
		b.errorf(x.Args[0].Pos(), "the first argument of %s must be the address of a vector in an array parameter: &vs[i] or &grid[i][j].V; a local vector has no address to update atomically, add to it directly", qual)
		return
	}
	target := addr.X
	a, ok := b.recordPath(target)
	if !ok {
		return
	}
	if len(a.dyn) > 0 {
		b.errorf(a.dyn[0].index.Pos(), "the first argument of %s indexes %s inside an element of %s with %s, which is not a constant; an atomic needs one address: index with a constant, or with the variable of a loop over a constant count (for k := range N), which is unrolled",
			qual, shortExpr(target), a.p.Name, shortExpr(a.dyn[0].index))
		return
	}
	for k := range a.n {
		if !a.p.LeafType(a.off + k).IsNumeric() {
			b.errorf(x.Args[0].Pos(), "%s needs a vector of integers or floats; %s has type %s", qual, shortExpr(target), b.fc.typeString(a.t))
			return
		}
	}
	vals := b.valList(append(append([]ast.Expr(nil), a.index...), x.Args[1]))
	n := len(a.index)
	if len(vals) != n+1 {
		return
	}
	idx := make([]ir.Expr, n)
	for i, v := range vals[:n] {
		idx[i] = v.scalar()
	}
	if !b.recordIndices(a, idx) {
		return
	}
	v := vals[n]
	if len(v.leaves) != a.n {
		return // an error in the value, already reported
	}
	comps := make([]ir.Expr, a.n)
	for k, l := range v.leaves {
		c := b.convertTo(a.p.LeafType(a.off+k), l)
		if !isSimple(c) {
			c = b.spill(c)
		}
		comps[k] = c
	}
	// recordIndices spills the indices only for an access of several
	// leaves; a vector always has several, but make sure: the PTX fusion
	// needs every atomic's index to be the same pure expression.
	b.placeIndices(idx)
	for k, c := range comps {
		b.emit(&ir.ExprStmt{Pos: b.pos, X: &ir.Atomic{Op: op, Array: a.p, Index: idx, Leaf: a.off + k, Value: c}})
	}
}
