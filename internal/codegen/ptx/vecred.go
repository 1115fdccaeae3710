package ptx

import (
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// Vector atomic adds of adjacent float32 leaves.
//
// An atomic add of a Vec2[float32] or Vec4[float32] field, as in a
// particle-to-grid scatter (qd.AtomicAdd(&grid[i][j].V, w·v)), reaches the
// IR as two or four float32 atomic adds, one per leaf, in a row. From
// sm_90 and PTX ISA 8.1 on, red.global.add.v2.f32 (.v4) adds two (four)
// adjacent float32 values in one instruction: one request to memory
// instead of several. The ISA keeps each element's add atomic on its own
// (not the vector as a whole), which is what the separate atomics promise,
// and flushes subnormals to zero as the scalar red.global.add.f32 does.
//
// A run of statements becomes one vector add when:
//
//   - each is an atomic add whose old value is unused, on a float32 leaf
//     of the same record array, and none is a block reduction (reduce.go
//     combines those), with index checks off (each access is its own
//     site when they are on);
//   - the indices are the same expressions, free of loads and atomics,
//     so they name one element, and the values after the first are free
//     of them too, so that issuing the first add after they are computed
//     cannot change what they read;
//   - the leaves lie at offsets o, o+4 (, o+8, o+12) of the element, with
//     o and the record's size multiples of the vector's 8 (16) bytes: the
//     ISA requires the address aligned to the vector's size, and every
//     element then is, when the array's start is. Device allocations are
//     256-byte aligned and views of them start at whole elements, but a
//     uniform test of the start still sends a misaligned array (a foreign
//     buffer) to the scalar adds rather than to a fault.
//
// Anything else, and every target below sm_90 or whose driver lacks PTX
// ISA 8.1 (Target.MaxVersion), keeps the scalar atomics.

// vectorRedISA is the PTX ISA (×10) of red with vector types.
const vectorRedISA = 81

// vectorRed writes ss's leading statements as one vector add when they
// qualify, and returns how many it wrote (0 when none).
func (f *fnWriter) vectorRed(ss []ir.Stmt) int {
	if f.m.target.SM < 90 || !f.m.target.allows(vectorRedISA) || f.bounds() || f.fusedAdd(ss[0]) == nil {
		return 0
	}
	for _, n := range []int{4, 2} {
		if len(ss) >= n && f.fusable(ss[:n]) {
			f.writeVectorRed(ss[:n])
			return n
		}
	}
	return 0
}

// fusedAdd is s's atomic when s is a float32 atomic add on a record leaf
// whose old value is unused and which is not a block reduction.
func (f *fnWriter) fusedAdd(s ir.Stmt) *ir.Atomic {
	es, ok := s.(*ir.ExprStmt)
	if !ok || f.red[es] != nil {
		return nil
	}
	a, ok := es.X.(*ir.Atomic)
	if !ok || a.Op != ir.AtomicAdd || a.Array == nil || a.Array.Rec == nil || a.Array.IsShared() || a.Type() != ir.F32 || a.Value == nil {
		return nil
	}
	return a
}

// fusable reports whether the statements of group (2 or 4) are one
// vector add's.
func (f *fnWriter) fusable(group []ir.Stmt) bool {
	bytes := int64(4 * len(group))
	first := f.fusedAdd(group[0])
	o := leafOffset(first.Array, first.Leaf)
	if o%bytes != 0 || int64(first.Array.Rec.Size)%bytes != 0 {
		return false
	}
	for _, x := range first.Index {
		if !pureExpr(x) {
			return false
		}
	}
	for k, s := range group {
		a := f.fusedAdd(s)
		if a == nil || a.Array != first.Array || leafOffset(a.Array, a.Leaf) != o+4*int64(k) || len(a.Index) != len(first.Index) {
			return false
		}
		for d := range a.Index {
			if !sameExpr(a.Index[d], first.Index[d]) {
				return false
			}
		}
		if k > 0 && !pureExpr(a.Value) {
			return false
		}
	}
	return true
}

// writeVectorRed writes the vector add of group: the element's address
// once, the values in order, then red.global.add.vN.f32, or the scalar
// adds when the array's start is not aligned to the vector.
func (f *fnWriter) writeVectorRed(group []ir.Stmt) {
	f.pos = group[0].Position()
	first := f.fusedAdd(group[0])
	a := first.Array
	addr := plus(f.address(a, first.Index), leafOffset(a, first.Leaf))
	vals := make([]string, len(group))
	for k, s := range group {
		f.pos = s.Position()
		vals[k] = f.expr(f.fusedAdd(s).Value)
	}
	f.m.needISA = max(f.m.needISA, vectorRedISA)
	low, mis := f.reg(ir.U64), f.reg(ir.Bool)
	scalar, done := f.label(), f.label()
	f.emit("and.b64 %s, %s, %d", low, f.array(a), 4*len(group)-1)
	f.emit("setp.ne.u64 %s, %s, 0", mis, low)
	f.braIf(mis, false, scalar)
	f.emit("red.global.add.v%d.f32 [%s], {%s}", len(group), addr, strings.Join(vals, ", "))
	f.bra(done)
	f.place(scalar)
	for k, v := range vals {
		f.emit("red.global.add.f32 [%s], %s", plus(addr, 4*int64(k)), v)
	}
	f.place(done)
}

// pureExpr reports whether e reads no memory and has no effect: constants,
// parameters, locals, extents and operations on them. Its value is the
// same wherever it is evaluated among statements that assign no local.
func pureExpr(e ir.Expr) bool {
	ok := e != nil
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n.(type) {
		case *ir.Const, *ir.ParamRef, *ir.VarRef, *ir.Len, *ir.Unary, *ir.Binary, *ir.Convert, *ir.Bitcast, *ir.Select, *ir.Call:
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// sameExpr reports whether the pure expressions x and y are the same
// expression: equal operators over the same operands.
func sameExpr(x, y ir.Expr) bool {
	switch x := x.(type) {
	case *ir.Const:
		y, ok := y.(*ir.Const)
		return ok && *x == *y
	case *ir.ParamRef:
		y, ok := y.(*ir.ParamRef)
		return ok && x.Param == y.Param
	case *ir.VarRef:
		y, ok := y.(*ir.VarRef)
		return ok && x.Var == y.Var
	case *ir.Len:
		y, ok := y.(*ir.Len)
		return ok && x.Array == y.Array && x.Dim == y.Dim
	case *ir.Unary:
		y, ok := y.(*ir.Unary)
		return ok && x.Op == y.Op && sameExpr(x.X, y.X)
	case *ir.Binary:
		y, ok := y.(*ir.Binary)
		return ok && x.Op == y.Op && sameExpr(x.X, y.X) && sameExpr(x.Y, y.Y)
	case *ir.Convert:
		y, ok := y.(*ir.Convert)
		return ok && x.To == y.To && sameExpr(x.X, y.X)
	case *ir.Bitcast:
		y, ok := y.(*ir.Bitcast)
		return ok && x.To == y.To && sameExpr(x.X, y.X)
	case *ir.Select:
		y, ok := y.(*ir.Select)
		return ok && sameExpr(x.Cond, y.Cond) && sameExpr(x.X, y.X) && sameExpr(x.Y, y.Y)
	}
	return false
}
