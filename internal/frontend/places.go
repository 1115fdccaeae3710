package frontend

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// Places: the parts of local values that assignments write and pointer
// receivers point to. A place is named by a path from a local (or from
// what a pointer receiver points to) through fields and array elements.
// Fields and constant indices select a run of the local's leaves at
// compile time. A dynamic index cannot, so the place becomes one
// alternative per element, each with the condition index == k: a read is
// a chain of selects over the alternatives, a write an if per
// alternative. An index out of range matches no alternative: a read gives
// the zero value and a write does nothing. (Go panics there; an index check
// in the IR is a later phase, and until then the result is at least
// defined: never a crash, never another element's value.)

// maxDynamicLeaves bounds the leaves one dynamic access touches: every leaf
// of the indexed array costs a compare and a select (or a conditional move)
// per access. 64 covers a Mat4 indexed by a row (16 leaves) four times over
// and a [64]float32 by element; beyond it an access costs more than the
// local-memory round trip it replaces, and the array is better indexed
// with constants, which a loop over a constant count provides once
// unrolled.
const maxDynamicLeaves = 64

// pathStep is one step of a place's path.
type pathStep struct {
	off, n int      // a field or a constant index: the leaves kept
	index  ast.Expr // a dynamic index (nil otherwise), evaluated with the assignment's operands
	elem   int      // leaves per element, for a dynamic index
	length int      // elements, for a dynamic index
}

// placeExpr is a place before its dynamic indices are evaluated.
type placeExpr struct {
	t     types.Type
	vars  []*ir.Var // the root's leaves
	steps []pathStep
}

// indices are the dynamic index operands of p, in evaluation order.
func (p *placeExpr) indices() []ast.Expr {
	var out []ast.Expr
	for _, s := range p.steps {
		if s.index != nil {
			out = append(out, s.index)
		}
	}
	return out
}

// place is an evaluated place: one alternative when its path is constant,
// one per candidate element otherwise, none when a constant index is out of
// range.
type place struct {
	t    types.Type
	alts []placeAlt
}

type placeAlt struct {
	cond ir.Expr // nil: always
	vars []*ir.Var
}

// isLocalArray reports whether indexing a value of type t selects an
// element of a local value: t is an array or a pointer to one (slices are
// array parameters).
func isLocalArray(t types.Type) bool {
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	_, ok := t.Underlying().(*types.Array)
	return ok
}

// placePath resolves e, an addressable expression rooted at a local, into
// its path. ok is false after an error.
func (b *builder) placePath(e ast.Expr) (placeExpr, bool) {
	t := b.typ(e)
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		bd := b.lookup(b.info.Uses[x])
		switch {
		case bd == nil:
			b.errorf(x.Pos(), "cannot assign to %s in a kernel", x.Name)
		case bd.bad:
		case bd.agg:
			return placeExpr{t: t, vars: bd.vars}, true
		case bd.v != nil:
			return placeExpr{t: t, vars: []*ir.Var{bd.v}}, true
		case bd.ptr:
			b.errorf(x.Pos(), "cannot assign to the pointer %s; assign to *%s or its fields", x.Name, x.Name)
		case bd.param != nil && bd.param.Dims > 0:
			b.errorf(x.Pos(), "cannot assign to array parameter %s; assign its elements instead (%s[i] = v)", x.Name, x.Name)
		case bd.param != nil:
			b.errorf(x.Pos(), "cannot assign to kernel parameter %s: parameters are read-only in kernels; copy it to a local first (v := %s)", x.Name, x.Name)
		default:
			// A helper's parameter bound to its argument: assignedIn
			// should have given it a local of its own.
			b.errorf(x.Pos(), "internal error: %s has no local to assign to; please report this kernel", x.Name)
		}
		return placeExpr{}, false
	case *ast.StarExpr:
		vars, ok := b.pointee(x.X, x.Pos())
		return placeExpr{t: t, vars: vars}, ok
	case *ast.SelectorExpr:
		sel, ok := b.info.Selections[x]
		if !ok || sel.Kind() != types.FieldVal {
			b.errorf(x.Pos(), "cannot assign to %s in a kernel", shortExpr(x))
			return placeExpr{}, false
		}
		base, ok := b.basePlace(x.X)
		if !ok {
			return placeExpr{}, false
		}
		off, n, _, ok := b.fieldPath(base.t, sel.Index())
		if !ok {
			return placeExpr{}, false
		}
		base.steps = append(base.steps, pathStep{off: off, n: n})
		base.t = t
		return base, true
	case *ast.IndexExpr:
		if bd, isPT := b.perThreadIndex(x); isPT { // v[t] of a per-thread value
			switch {
			case bd == nil:
				return placeExpr{}, false
			case bd.v != nil:
				return placeExpr{t: t, vars: []*ir.Var{bd.v}}, true
			}
			return placeExpr{t: t, vars: bd.vars}, true
		}
		base, ok := b.basePlace(x.X)
		if !ok {
			return placeExpr{}, false
		}
		l, ok := b.layoutOr(base.t, x.X.Pos(), func() string { return "array " + shortExpr(x.X) })
		if !ok || !l.array {
			return placeExpr{}, false
		}
		if k, isConst := b.intConst(x.Index); isConst {
			if k < 0 || k >= int64(l.length) {
				return placeExpr{}, false // go/types has reported it
			}
			base.steps = append(base.steps, pathStep{off: int(k) * l.elem, n: l.elem})
		} else {
			base.steps = append(base.steps, pathStep{index: x.Index, elem: l.elem, length: l.length})
		}
		base.t = t
		return base, true
	}
	b.errorf(e.Pos(), "cannot assign to %s in a kernel", shortExpr(e))
	return placeExpr{}, false
}

// basePlace resolves the operand of a field selection or an index: a place,
// or, when the operand is a pointer receiver, what it points to.
func (b *builder) basePlace(x ast.Expr) (placeExpr, bool) {
	if t := b.typ(x); t != nil {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			vars, ok := b.pointee(x, x.Pos())
			return placeExpr{t: p.Elem(), vars: vars}, ok
		}
	}
	return b.placePath(x)
}

// buildPlace evaluates a place from its path and the values of its dynamic
// indices (idx, in the order of indices()).
func (b *builder) buildPlace(pe placeExpr, idx []ir.Expr, p token.Pos) (place, bool) {
	pl := place{t: pe.t, alts: []placeAlt{{vars: pe.vars}}}
	k := 0
	for _, s := range pe.steps {
		if len(pl.alts) == 0 {
			if s.index != nil {
				k++
			}
			continue
		}
		if s.index == nil {
			for i := range pl.alts {
				a := &pl.alts[i]
				if s.off+s.n > len(a.vars) {
					return place{}, false
				}
				a.vars = a.vars[s.off : s.off+s.n]
			}
			continue
		}
		if k >= len(idx) {
			return place{}, false
		}
		iv := idx[k]
		k++
		if !iv.Type().IsInteger() {
			return place{}, false // reported where the index was evaluated
		}
		if c, ok := iv.(*ir.Const); ok {
			e, in := constIndex(c, s.length)
			if !in {
				pl.alts = nil
				continue
			}
			for i := range pl.alts {
				a := &pl.alts[i]
				a.vars = a.vars[e*s.elem : (e+1)*s.elem]
			}
			continue
		}
		if touched := len(pl.alts) * len(pl.alts[0].vars); touched > maxDynamicLeaves {
			b.errorf(s.index.Pos(), "index %s is not a constant, and the array it indexes has %d scalars, more than the %d that one dynamic access may touch; index with a constant, or with the variable of a loop over a constant count (for i := range N), which is unrolled",
				shortExpr(s.index), touched, maxDynamicLeaves)
			return place{}, false
		}
		var alts []placeAlt
		for _, a := range pl.alts {
			for e := range s.length {
				c := ir.Expr(ir.NewBinary(ir.Eq, iv, ir.IntC(iv.Type(), int64(e))))
				if a.cond != nil {
					c = ir.NewBinary(ir.LAnd, a.cond, c)
				}
				alts = append(alts, placeAlt{cond: c, vars: a.vars[e*s.elem : (e+1)*s.elem]})
			}
		}
		pl.alts = alts
	}
	return pl, true
}

// constIndex returns the element a constant index selects, and whether it
// is in range.
func constIndex(c *ir.Const, length int) (int, bool) {
	if c.T.IsSigned() {
		v := signed(c)
		return int(v), v >= 0 && v < int64(length)
	}
	return int(c.Bits), c.Bits < uint64(length)
}

// placeIndices makes the index operands of a place safe to test in every
// alternative: each is spilled unless it is simple.
func (b *builder) placeIndices(idx []ir.Expr) {
	for i, v := range idx {
		if !isSimple(v) {
			idx[i] = b.spill(v)
		}
	}
}

// readPlace reads the value at pl, a value of layout l.
func (b *builder) readPlace(pl place, l *layout) val {
	switch {
	case len(pl.alts) == 0:
		return zeroVal(pl.t, l)
	case len(pl.alts) == 1 && pl.alts[0].cond == nil:
		return val{t: pl.t, leaves: refs(pl.alts[0].vars)}
	}
	for _, a := range pl.alts {
		if len(a.vars) != l.size() {
			return b.badVal(pl.t)
		}
	}
	conds := b.shareConds(pl.alts, l.size())
	leaves := make([]ir.Expr, l.size())
	for j, lt := range l.types {
		e := ir.Zero(lt)
		for i := len(pl.alts) - 1; i >= 0; i-- {
			e = &ir.Select{Cond: conds[i], X: &ir.VarRef{Var: pl.alts[i].vars[j]}, Y: e}
		}
		leaves[j] = e
	}
	return val{t: pl.t, leaves: leaves}
}

// shareConds returns the alternatives' conditions, through bool locals
// when each is used for several leaves.
func (b *builder) shareConds(alts []placeAlt, leaves int) []ir.Expr {
	conds := make([]ir.Expr, len(alts))
	for i, a := range alts {
		conds[i] = a.cond
		if leaves > 1 {
			conds[i] = &ir.VarRef{Var: b.decl("is", a.cond)}
		}
	}
	return conds
}

// writePlace stores v at pl.
func (b *builder) writePlace(pl place, v val) {
	if v.bad() {
		return
	}
	switch {
	case len(pl.alts) == 0:
		b.discardVal(v)
		return
	case len(pl.alts) == 1 && pl.alts[0].cond == nil:
		b.assignLeaves(pl.alts[0].vars, v.leaves)
		return
	}
	leaves := make([]ir.Expr, len(v.leaves))
	for i, l := range v.leaves {
		leaves[i] = l
		if !isSimple(l) || readsVars(l, pl.alts) {
			leaves[i] = b.spill(l)
		}
	}
	for _, a := range pl.alts {
		node := &ir.If{Pos: b.pos, Cond: a.cond}
		b.into(&node.Then, func() { b.assignLeaves(a.vars, leaves) })
		b.emit(node)
	}
}

// readsVars reports whether e reads a leaf of any alternative: a write to
// one alternative must not change what the next one is given.
func readsVars(e ir.Expr, alts []placeAlt) bool {
	found := false
	ir.InspectExpr(e, func(n ir.Node) bool {
		if r, ok := n.(*ir.VarRef); ok {
			for _, a := range alts {
				for _, v := range a.vars {
					found = found || r.Var == v
				}
			}
		}
		return !found
	})
	return found
}

// assignLeaves sets vars to leaves, skipping a leaf set to itself (return r
// of a named result r).
func (b *builder) assignLeaves(vars []*ir.Var, leaves []ir.Expr) {
	if len(vars) != len(leaves) {
		return
	}
	for i, v := range vars {
		if r, ok := leaves[i].(*ir.VarRef); ok && r.Var == v {
			continue
		}
		b.emit(&ir.Assign{Pos: b.pos, Var: v, Value: b.convertTo(v.Type, leaves[i])})
	}
}

// placeVars are every local a write to pl may change.
func placeVars(pl place) []*ir.Var {
	var out []*ir.Var
	for _, a := range pl.alts {
		out = append(out, a.vars...)
	}
	return out
}

// staticPlace resolves e to the leaves it names when its path is constant
// (&p.V, a pointer receiver's operand); ok is false after an error.
func (b *builder) staticPlace(e ast.Expr) ([]*ir.Var, bool) {
	pe, ok := b.placePath(e)
	if !ok {
		return nil, false
	}
	if len(pe.indices()) > 0 {
		b.errorf(e.Pos(), "&%s: the address of an element at a dynamic index is not supported; index with a constant", shortExpr(e))
		return nil, false
	}
	pl, ok := b.buildPlace(pe, nil, e.Pos())
	if !ok || len(pl.alts) != 1 {
		return nil, false
	}
	return pl.alts[0].vars, true
}

// elementOf returns element idx of the array value v, whose elements have
// type et and layout el.
func (b *builder) elementOf(v val, idx ir.Expr, et types.Type, el *layout, length int, p token.Pos) val {
	if v.bad() || idx.Type() == ir.Invalid {
		return b.badVal(et)
	}
	if c, ok := idx.(*ir.Const); ok {
		e, in := constIndex(c, length)
		if !in {
			b.discardVal(v)
			return zeroVal(et, el)
		}
		return b.project(v, et, e*el.size(), el.size())
	}
	if len(v.leaves) > maxDynamicLeaves {
		b.errorf(p, "index is not a constant, and the array it indexes has %d scalars, more than the %d that one dynamic access may touch; index with a constant, or with the variable of a loop over a constant count (for i := range N), which is unrolled",
			len(v.leaves), maxDynamicLeaves)
		return b.badVal(et)
	}
	if !isSimple(idx) {
		idx = b.spill(idx)
	}
	alts := make([]placeAlt, length)
	for e := range length {
		alts[e].cond = ir.NewBinary(ir.Eq, idx, ir.IntC(idx.Type(), int64(e)))
	}
	conds := b.shareConds(alts, el.size())
	leaves := make([]ir.Expr, el.size())
	for j, lt := range el.types {
		var e ir.Expr = ir.Zero(lt)
		for k := length - 1; k >= 0; k-- {
			e = &ir.Select{Cond: conds[k], X: v.leaves[k*el.size()+j], Y: e}
		}
		leaves[j] = e
	}
	return val{t: et, leaves: leaves}
}
