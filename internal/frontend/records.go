package frontend

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// Arrays of records: array parameters whose elements are structs or fixed
// arrays ([]Particle, [][]Cell, []qd.Vec3[float32]). The element is not a
// value the kernel holds but memory in Go's layout (ir.Record), read and
// written one leaf at a time. The leaves are the element type's value
// leaves (values.go), in the same order, so a field or a constant element
// of an element is the same run of leaves in memory as in registers:
// ps[i].V is the Loads of ps's leaves [off, off+n), ps[i] = q the Stores of
// q's leaves, and &ps[i].M an Atomic on one leaf.

// recordOf is the ir.Record of element type t, whose value layout is l:
// the leaves' offsets and the element's size and alignment are Go's
// (go/types with the gc compiler's amd64 sizes, which are those of every
// 64-bit target Go supports), so they are what unsafe.Offsetof and
// unsafe.Sizeof give the host's copy of the array.
func (fc *fileCtx) recordOf(t types.Type, l *layout) *ir.Record {
	r := &ir.Record{Name: fc.typeString(t), Size: int(sizes.Sizeof(t)), Align: int(sizes.Alignof(t))}
	r.Leaves = make([]ir.Leaf, 0, l.size())
	leafOffsets(t, 0, &r.Leaves, l)
	return r
}

// leafOffsets appends the leaves of a value of type t at byte offset off,
// in the order of the value layout, taking each leaf's path and type from
// l (the whole element's layout).
func leafOffsets(t types.Type, off int64, out *[]ir.Leaf, l *layout) {
	if _, ok := basicType(t); ok {
		i := len(*out)
		*out = append(*out, ir.Leaf{Path: l.names[i], Type: l.types[i], Offset: int(off)})
		return
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		fields := make([]*types.Var, u.NumFields())
		for i := range fields {
			fields[i] = u.Field(i)
		}
		offs := sizes.Offsetsof(fields)
		for i, f := range fields {
			leafOffsets(f.Type(), off+offs[i], out, l)
		}
	case *types.Array:
		es := sizes.Sizeof(u.Elem())
		for i := range u.Len() {
			leafOffsets(u.Elem(), off+i*es, out, l)
		}
	}
}

// recordParamType returns the Record of an array parameter's element type
// t, reporting at p why it cannot be one (naming the field that has no
// meaning on a device).
func (b *builder) recordParamType(t types.Type, whole types.Type, p token.Pos, what string) (*ir.Record, bool) {
	l, why := b.fc.layoutOf(t)
	if l == nil {
		if why == tooLarge {
			b.errorf(p, "%s has type %s, whose elements have more than %d scalars; split the element type into several arrays", what, b.fc.typeString(whole), maxValueLeaves)
			return nil, false
		}
		b.errorf(p, "%s has type %s; in its element type %s, %s", what, b.fc.typeString(whole), b.fc.typeString(t), why)
		return nil, false
	}
	if l.size() == 0 {
		b.errorf(p, "%s has type %s, whose element type %s has no scalar in it; it has no meaning on a device", what, b.fc.typeString(whole), b.fc.typeString(t))
		return nil, false
	}
	return b.fc.recordOf(t, l), true
}

// recAccess is a part of an element of a record array: the leaves [off,
// off+n) of p[index...], a value of type t.
type recAccess struct {
	p      *ir.Param
	index  []ast.Expr
	off, n int
	t      types.Type
}

// isRecordAccess reports whether e is an element of a record array, or a
// field or constant element inside one, by its syntax: a chain of indices
// and field selections down to an array parameter with a Record.
func (b *builder) isRecordAccess(e ast.Expr) bool {
	sawIndex := false
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e, sawIndex = x.X, true
		case *ast.SelectorExpr:
			if sel, ok := b.info.Selections[x]; !ok || sel.Kind() != types.FieldVal {
				return false
			}
			e = x.X
		case *ast.Ident:
			bd := b.lookup(b.info.Uses[x])
			return sawIndex && bd != nil && bd.param != nil && bd.param.Rec != nil
		default:
			return false
		}
	}
}

// recordPath resolves e, for which isRecordAccess holds, into the element
// it indexes and the run of leaves it selects; ok is false after an error.
func (b *builder) recordPath(e ast.Expr) (recAccess, bool) {
	t := b.typ(e)
	switch x := ast.Unparen(e).(type) {
	case *ast.IndexExpr:
		if !isLocalArray(b.typ(x.X)) {
			p, idx, ok := b.arrayIndexBase(x)
			if !ok {
				return recAccess{}, false
			}
			if len(idx) != p.Dims {
				b.errorf(x.Pos(), "%s is a row of the %d-dimensional array %s; index all %d dimensions to reach an element",
					shortExpr(x), p.Dims, p.Name, p.Dims)
				return recAccess{}, false
			}
			return recAccess{p: p, index: idx, n: len(p.Rec.Leaves), t: t}, true
		}
		base, ok := b.recordPath(x.X)
		if !ok {
			return recAccess{}, false
		}
		l, _ := b.fc.layoutOf(base.t)
		if l == nil || !l.array {
			return recAccess{}, false
		}
		k, ok := b.recordElemIndex(x.Index, l.length)
		if !ok {
			b.errorf(x.Index.Pos(), "index %s into %s, an array inside an element of %s, is not a constant; index with a constant, or with the variable of a loop over a constant count (for k := range N), which is unrolled, or copy the element to a local first",
				shortExpr(x.Index), shortExpr(x.X), base.p.Name)
			return recAccess{}, false
		}
		if k < 0 || k >= l.length {
			// go/types has reported a constant out of range; the
			// variable of an unrolled loop stays in range.
			return recAccess{}, false
		}
		base.off += k * l.elem
		base.n = l.elem
		base.t = t
		return base, true
	case *ast.SelectorExpr:
		sel := b.info.Selections[x]
		base, ok := b.recordPath(x.X)
		if !ok {
			return recAccess{}, false
		}
		off, n, _, ok := b.fieldPath(base.t, sel.Index())
		if !ok {
			return recAccess{}, false
		}
		base.off += off
		base.n = n
		base.t = t
		return base, true
	}
	b.errorf(e.Pos(), "%s cannot be used in kernels", shortExpr(e))
	return recAccess{}, false
}

// recordElemIndex is the value of a constant index into an array inside
// an element (-1 when out of range): a Go constant, or the variable of an
// unrolled loop, which is a constant by now.
func (b *builder) recordElemIndex(e ast.Expr, length int) (int, bool) {
	if k, ok := b.intConst(e); ok {
		if k < 0 || k >= int64(length) {
			return -1, true
		}
		return int(k), true
	}
	if _, ok := ast.Unparen(e).(*ast.Ident); !ok {
		return 0, false // evaluating it could have effects
	}
	c, ok := b.expr(e).(*ir.Const)
	if !ok || !c.T.IsInteger() {
		return 0, false
	}
	k, in := constIndex(c, length)
	if !in {
		return -1, true
	}
	return k, true
}

// recordIndices evaluates the element indices of a, checked to be
// integers; with several leaves to access, each index is made safe to
// repeat.
func (b *builder) recordIndices(a recAccess, vals []ir.Expr) bool {
	for i, v := range vals {
		if !v.Type().IsInteger() {
			if v.Type() != ir.Invalid {
				b.errorf(a.index[i].Pos(), "array index must be an integer")
			}
			return false
		}
	}
	if a.n > 1 {
		b.placeIndices(vals)
	}
	return true
}

// recordLoad reads the leaves of a at the evaluated indices idx.
func recordLoad(a recAccess, idx []ir.Expr) val {
	leaves := make([]ir.Expr, a.n)
	for i := range leaves {
		leaves[i] = &ir.Load{Array: a.p, Index: idx, Leaf: a.off + i}
	}
	return val{t: a.t, leaves: leaves}
}

// recordVal reads an element of a record array, or a part of one.
func (b *builder) recordVal(e ast.Expr) val {
	a, ok := b.recordPath(e)
	if !ok {
		return b.badVal(b.typ(e))
	}
	idx := b.exprList(a.index)
	if len(idx) != len(a.index) || !b.recordIndices(a, idx) {
		return b.badVal(a.t)
	}
	return recordLoad(a, idx)
}

// recordStore writes v to the leaves of a at the evaluated indices idx.
// A leaf of v that loads from memory is read before any leaf is stored:
// ps[i] = Particle{X: ps[i].V, V: ps[i].X} swaps, as in Go.
func (b *builder) recordStore(a recAccess, idx []ir.Expr, v val, p ir.Pos) {
	if v.bad() || len(v.leaves) != a.n {
		return
	}
	leaves := v.leaves
	if a.n > 1 {
		leaves = append([]ir.Expr(nil), v.leaves...)
		for i, l := range leaves {
			if clobbered(l, nil, true) {
				leaves[i] = b.spill(l)
			}
		}
	}
	for i, l := range leaves {
		leaf := a.off + i
		b.emit(&ir.Store{Pos: p, Array: a.p, Index: idx, Leaf: leaf, Value: b.convertTo(a.p.LeafType(leaf), l)})
	}
}

// recordAddress reports &e, where e is (a part of) an element of a record
// array, as unsupported; atomics handle their own operand.
func (b *builder) recordAddress(e ast.Expr, p token.Pos) {
	b.errorf(p, "&%s: pointers into array parameters are not supported in kernels; copy the element to a local (v := %s), work on it, and store it back", shortExpr(e), shortExpr(e))
}
