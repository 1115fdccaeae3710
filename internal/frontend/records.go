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
// off+n) of p[index...], a value of type t. An index into an array inside
// the element that is no constant (ps[i].X[k]) is a step of dyn: the
// access is then one alternative per element of that array, as a dynamic
// index into a local is (places.go), and off is that of the first.
type recAccess struct {
	p      *ir.Param
	index  []ast.Expr
	off, n int
	t      types.Type
	dyn    []recDyn
}

// recDyn is a dynamic index into an array inside an element: its elements
// are stride leaves apart.
type recDyn struct {
	index          ast.Expr
	stride, length int
}

// operands are the index operands of a, in evaluation order: the
// element's, then those inside it.
func (a recAccess) operands() []ast.Expr {
	if len(a.dyn) == 0 {
		return a.index
	}
	out := append([]ast.Expr(nil), a.index...)
	for _, d := range a.dyn {
		out = append(out, d.index)
	}
	return out
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
		if !b.isLocalIndex(x.X) {
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
			alts := 1
			for _, d := range base.dyn {
				alts *= d.length
			}
			if touched := alts * l.size(); touched > maxDynamicLeaves {
				b.errorf(x.Index.Pos(), "index %s is not a constant, and the array it indexes has %d scalars, more than the %d that one dynamic access may touch; index with a constant, or with the variable of a loop over a constant count (for k := range N), which is unrolled",
					shortExpr(x.Index), touched, maxDynamicLeaves)
				return recAccess{}, false
			}
			base.dyn = append(base.dyn, recDyn{index: x.Index, stride: l.elem, length: l.length})
			base.n = l.elem
			base.t = t
			return base, true
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

// recordIndices checks the evaluated operands of a (see operands) to be
// integers; with several leaves or alternatives to access, each is made
// safe to repeat.
func (b *builder) recordIndices(a recAccess, vals []ir.Expr) bool {
	ops := a.operands()
	if len(vals) != len(ops) {
		return false
	}
	for i, v := range vals {
		if !v.Type().IsInteger() {
			if v.Type() != ir.Invalid {
				b.errorf(ops[i].Pos(), "array index must be an integer")
			}
			return false
		}
	}
	if a.n > 1 || len(a.dyn) > 0 {
		b.placeIndices(vals)
	}
	return true
}

// recAlt is one alternative of an access: its first leaf, under cond (nil:
// always).
type recAlt struct {
	cond ir.Expr
	off  int
}

// alts are the alternatives of a, given the values dv of its dynamic
// indices: one without a condition when there are none, none when a
// constant one is out of range.
func (a recAccess) alts(dv []ir.Expr) []recAlt {
	alts := []recAlt{{off: a.off}}
	for i, d := range a.dyn {
		v := dv[i]
		if c, ok := v.(*ir.Const); ok {
			k, in := constIndex(c, d.length)
			if !in {
				return nil
			}
			for j := range alts {
				alts[j].off += k * d.stride
			}
			continue
		}
		var next []recAlt
		for _, al := range alts {
			for k := range d.length {
				c := ir.Expr(ir.NewBinary(ir.Eq, v, ir.IntC(v.Type(), int64(k))))
				if al.cond != nil {
					c = ir.NewBinary(ir.LAnd, al.cond, c)
				}
				next = append(next, recAlt{cond: c, off: al.off + k*d.stride})
			}
		}
		alts = next
	}
	return alts
}

// recordLoad reads the leaves of a, which has no dynamic index inside the
// element, at the evaluated indices idx.
func recordLoad(a recAccess, idx []ir.Expr) val {
	leaves := make([]ir.Expr, a.n)
	for i := range leaves {
		leaves[i] = &ir.Load{Array: a.p, Index: idx, Leaf: a.off + i}
	}
	return val{t: a.t, leaves: leaves}
}

// recordRead reads a at its evaluated operands vals: a dynamic index
// inside the element selects among the alternatives' loads, and one out of
// range reads the zero value, as for a local (places.go).
func (b *builder) recordRead(a recAccess, vals []ir.Expr) val {
	n := len(a.index)
	alts := a.alts(vals[n:])
	switch {
	case len(alts) == 1 && alts[0].cond == nil:
		return recordLoad(recAccess{p: a.p, off: alts[0].off, n: a.n, t: a.t}, vals[:n])
	case len(alts) == 0:
		l, ok := b.layoutOr(a.t, token.NoPos, func() string { return "value" })
		if !ok {
			return b.badVal(a.t)
		}
		return zeroVal(a.t, l)
	}
	conds := b.recordConds(alts, a.n)
	leaves := make([]ir.Expr, a.n)
	for j := range leaves {
		lt := a.p.LeafType(a.off + j)
		var e ir.Expr = ir.Zero(lt)
		for i := len(alts) - 1; i >= 0; i-- {
			e = &ir.Select{Cond: conds[i], X: &ir.Load{Array: a.p, Index: vals[:n], Leaf: alts[i].off + j}, Y: e}
		}
		leaves[j] = e
	}
	return val{t: a.t, leaves: leaves}
}

// recordConds are the alternatives' conditions, through bool locals when
// each is used for several leaves.
func (b *builder) recordConds(alts []recAlt, leaves int) []ir.Expr {
	conds := make([]ir.Expr, len(alts))
	for i, al := range alts {
		conds[i] = al.cond
		if leaves > 1 {
			conds[i] = &ir.VarRef{Var: b.decl("is", al.cond)}
		}
	}
	return conds
}

// recordVal reads an element of a record array, or a part of one.
func (b *builder) recordVal(e ast.Expr) val {
	a, ok := b.recordPath(e)
	if !ok {
		return b.badVal(b.typ(e))
	}
	vals := b.exprList(a.operands())
	if !b.recordIndices(a, vals) {
		return b.badVal(a.t)
	}
	return b.recordRead(a, vals)
}

// recordStore writes v to the leaves of a at its evaluated operands vals;
// with a dynamic index inside the element, each alternative stores under
// its condition, and an index out of range stores nothing. A leaf of v
// that loads from memory is read before any leaf is stored:
// ps[i] = Particle{X: ps[i].V, V: ps[i].X} swaps, as in Go.
func (b *builder) recordStore(a recAccess, vals []ir.Expr, v val, p ir.Pos) {
	if v.bad() || len(v.leaves) != a.n {
		return
	}
	n := len(a.index)
	alts := a.alts(vals[n:])
	leaves := v.leaves
	if a.n > 1 || len(alts) != 1 {
		leaves = append([]ir.Expr(nil), v.leaves...)
		for i, l := range leaves {
			if clobbered(l, nil, true) || (len(alts) > 1 && !isSimple(l)) {
				leaves[i] = b.spill(l)
			}
		}
	}
	for _, al := range alts {
		store := func() {
			for i, l := range leaves {
				leaf := al.off + i
				b.emit(&ir.Store{Pos: p, Array: a.p, Index: vals[:n], Leaf: leaf, Value: b.convertTo(a.p.LeafType(leaf), l)})
			}
		}
		if al.cond == nil {
			store()
			continue
		}
		node := &ir.If{Pos: p, Cond: al.cond}
		b.into(&node.Then, store)
		b.emit(node)
	}
	if len(alts) == 0 {
		b.discardVal(val{t: v.t, leaves: leaves})
	}
}

// recordOpAssign stores old op y to the leaf of a in each of its
// alternatives (olds are the leaf's loads, one per alternative), under the
// alternative's condition.
func (b *builder) recordOpAssign(a *recAccess, vals []ir.Expr, alts []recAlt, olds []ir.Expr, op ir.BinOp, y ir.Expr, p ir.Pos) {
	if len(alts) > 1 && !isSimple(y) {
		y = b.spill(y)
	}
	n := len(a.index)
	for i, al := range alts {
		st := &ir.Store{Pos: p, Array: a.p, Index: vals[:n], Leaf: al.off, Value: arith(op, olds[i], y)}
		if al.cond == nil {
			b.emit(st)
			continue
		}
		b.emit(&ir.If{Pos: p, Cond: al.cond, Then: []ir.Stmt{st}})
	}
}

// recordAddress reports &e, where e is (a part of) an element of a record
// array, as unsupported; atomics handle their own operand.
func (b *builder) recordAddress(e ast.Expr, p token.Pos) {
	b.errorf(p, "&%s: pointers into array parameters are not supported in kernels; copy the element to a local (v := %s), work on it, and store it back", shortExpr(e), shortExpr(e))
}
