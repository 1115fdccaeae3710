package frontend

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// lhs is the target of an assignment.
type lhs struct {
	pos     token.Pos
	discard bool         // _
	def     types.Object // a new variable to declare
	v       *ir.Var      // an existing scalar local
	array   *ir.Param    // an array element: array[index...]
	pl      *placeExpr   // a local value or a part of one
	rec     *recAccess   // an element of a record array, or a part of one
	index   []ast.Expr   // array's indices, or pl's dynamic indices
	ok      bool
}

// resolveLHS classifies an assignment target and reports targets kernels
// cannot assign.
func (b *builder) resolveLHS(e ast.Expr) lhs {
	e = ast.Unparen(e)
	t := lhs{pos: e.Pos()}
	switch x := e.(type) {
	case *ast.Ident:
		if x.Name == "_" {
			t.discard, t.ok = true, true
			return t
		}
		if obj := b.info.Defs[x]; obj != nil {
			t.def, t.ok = obj, true
			return t
		}
		obj := b.info.Uses[x]
		bd := b.lookup(obj)
		switch {
		case bd != nil && bd.bad:
		case bd == nil:
			if v, ok := obj.(*types.Var); ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
				b.errorf(x.Pos(), "package-level variable %s cannot be used in kernels; pass it as a parameter or declare it const", x.Name)
			} else {
				b.errorf(x.Pos(), "cannot assign to %s in a kernel", x.Name)
			}
		case bd.v != nil:
			t.v, t.ok = bd.v, true
		case bd.agg:
			t.pl, t.ok = &placeExpr{t: b.typ(x), vars: bd.vars}, true
		case bd.idx3 != nil:
			b.errorf(x.Pos(), "cannot assign to %s, a qd.NDRange3 index", x.Name)
		default:
			b.placePath(x) // reports why
		}
	case *ast.IndexExpr:
		if bd, isPT := b.perThreadIndex(x); isPT { // blocks.go
			switch {
			case bd == nil:
			case bd.v != nil:
				t.v, t.ok = bd.v, true
			default:
				t.pl, t.ok = &placeExpr{t: b.typ(x), vars: bd.vars}, true
			}
			return t
		}
		if b.isRecordAccess(x) {
			return b.recordLHS(x, t)
		}
		if b.isLocalIndex(x.X) {
			return b.placeLHS(x, t)
		}
		p, idx, ok := b.arrayIndex(x)
		if ok {
			if len(idx) != p.Dims {
				b.errorf(x.Pos(), "%s has %d dimensions; assign to an element by indexing all of them", p.Name, p.Dims)
				return t
			}
			t.array, t.index, t.ok = p, idx, true
		}
	case *ast.SelectorExpr, *ast.StarExpr:
		if b.isRecordAccess(x) {
			return b.recordLHS(x, t)
		}
		return b.placeLHS(x, t)
	default:
		b.errorf(e.Pos(), "cannot assign to %s in a kernel", shortExpr(e))
	}
	return t
}

// placeLHS resolves a target inside a local value.
func (b *builder) placeLHS(e ast.Expr, t lhs) lhs {
	pe, ok := b.placePath(e)
	if !ok {
		return t
	}
	t.pl, t.index, t.ok = &pe, pe.indices(), true
	return t
}

// recordLHS resolves a target in an element of a record array.
func (b *builder) recordLHS(e ast.Expr, t lhs) lhs {
	a, ok := b.recordPath(e)
	if !ok {
		return t
	}
	t.rec, t.index, t.ok = &a, a.operands(), true
	return t
}

// assignStmt translates =, := and op=.
func (b *builder) assignStmt(s *ast.AssignStmt) {
	if s.Tok != token.ASSIGN && s.Tok != token.DEFINE {
		if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
			b.opAssign(s.Lhs[0], s.Tok, s.Rhs[0], s.Pos())
		}
		return
	}
	b.assign(s.Lhs, s.Rhs)
}

// assign assigns rhs to lhs with Go's two phases: index operands on the left
// and the values on the right are evaluated first, in order, then the
// assignments are made left to right.
func (b *builder) assign(lhsList []ast.Expr, rhsList []ast.Expr) {
	if b.blockDecl(lhsList, rhsList) { // blocks.go
		return
	}
	targets := make([]lhs, len(lhsList))
	var operands []ast.Expr
	good := true
	for i, l := range lhsList {
		targets[i] = b.resolveLHS(l)
		good = good && targets[i].ok
		operands = append(operands, targets[i].index...)
	}
	var vals []val
	if len(rhsList) == 1 && len(lhsList) > 1 {
		call, ok := ast.Unparen(rhsList[0]).(*ast.CallExpr)
		if !ok {
			b.errorf(rhsList[0].Pos(), "only a call of a helper function with several results can be assigned to several variables")
			return
		}
		vals = b.valList(operands)
		vals = append(vals, b.callVals(call)...)
	} else {
		vals = b.valList(append(operands, rhsList...))
	}
	if !good || len(vals) != len(operands)+len(lhsList) {
		return
	}
	idx := make([]ir.Expr, len(operands))
	for i := range operands {
		idx[i] = vals[i].scalar()
	}
	rhs := vals[len(operands):]
	// The places, once their indices are known.
	places := make([]place, len(targets))
	k := 0
	for i := range targets {
		t := &targets[i]
		n := len(t.index)
		if t.pl != nil {
			b.placeIndices(idx[k : k+n])
			pl, ok := b.buildPlace(*t.pl, idx[k:k+n], t.pos)
			if !ok {
				return
			}
			places[i] = pl
		}
		k += n
	}
	if len(lhsList) > 1 {
		// The right-hand side may read what the left-hand side writes
		// (a, b = b, a): take such values before assigning any.
		var vars []*ir.Var
		stores := false
		for i, t := range targets {
			if t.v != nil {
				vars = append(vars, t.v)
			}
			vars = append(vars, placeVars(places[i])...)
			stores = stores || t.array != nil || t.rec != nil
		}
		for i, x := range idx {
			if clobbered(x, vars, stores) {
				idx[i] = b.spill(x)
			}
		}
		for i := range rhs {
			for j, l := range rhs[i].leaves {
				if clobbered(l, vars, stores) {
					rhs[i].leaves[j] = b.spill(l)
				}
			}
		}
	}
	k = 0
	for i := range targets {
		t := &targets[i]
		n := len(t.index)
		b.setLHS(t, idx[k:k+n], places[i], rhs[i])
		k += n
	}
}

// setLHS stores v into the target t (pl is its place, for a target inside a
// local value).
func (b *builder) setLHS(t *lhs, idx []ir.Expr, pl place, v val) {
	p := b.pos
	if t.pos.IsValid() {
		p = b.at(t.pos)
	}
	switch {
	case t.discard:
		b.discardVal(v)
	case t.def != nil:
		b.declare(t.def, v, t.pos, p)
	case t.v != nil:
		b.emit(&ir.Assign{Pos: p, Var: t.v, Value: b.convertTo(t.v.Type, v.scalar())})
	case t.array != nil:
		b.emit(&ir.Store{Pos: p, Array: t.array, Index: idx, Value: b.convertTo(t.array.Elem, v.scalar())})
	case t.rec != nil:
		if b.recordIndices(*t.rec, idx) {
			b.recordStore(*t.rec, idx, v, p)
		}
	case t.pl != nil:
		saved := b.pos
		b.pos = p
		b.writePlace(pl, v)
		b.pos = saved
	}
}

// declare declares the local obj set to v (or to its zero value when v is
// bad), a scalar or a value's leaves.
func (b *builder) declare(obj types.Object, v val, at token.Pos, p ir.Pos) {
	t := b.subst(obj.Type())
	if isAggregate(t) {
		l, ok := b.valueLayout(t, at, "variable "+obj.Name())
		if !ok {
			b.fr.vars[obj] = &binding{bad: true}
			return
		}
		if vars, ok := b.adopt(v, l); ok {
			for i, nv := range vars {
				nv.Name = obj.Name() + l.names[i]
			}
			b.fr.own(vars)
			b.fr.vars[obj] = &binding{agg: true, vars: vars}
			return
		}
		if !v.bad() {
			v = b.convertVal(v, t, l)
		}
		vars := b.declLeaves(obj.Name(), l, v, p)
		b.fr.own(vars)
		b.fr.vars[obj] = &binding{agg: true, vars: vars}
		return
	}
	typ, ok := b.scalarType(t, at, "variable "+obj.Name())
	if !ok {
		b.fr.vars[obj] = &binding{bad: true}
		return
	}
	sl := &layout{types: []ir.Type{typ}, names: []string{""}, scalar: true}
	if vars, ok := b.adopt(v, sl); ok {
		vars[0].Name = obj.Name()
		b.fr.own(vars)
		b.fr.vars[obj] = &binding{v: vars[0]}
		return
	}
	nv := b.newVar(obj.Name(), typ)
	d := &ir.Decl{Pos: p, Var: nv}
	if !v.bad() {
		d.Init = b.convertTo(typ, v.scalar())
	}
	b.emit(d)
	b.fr.own([]*ir.Var{nv})
	b.fr.vars[obj] = &binding{v: nv}
}

// convertTo returns v as type t: go/types has checked assignability, so
// this only bridges Go types that map to one IR type and untyped constants.
func (b *builder) convertTo(t ir.Type, v ir.Expr) ir.Expr {
	if v.Type() == t || v.Type() == ir.Invalid || t == ir.Invalid {
		return v
	}
	if c, ok := v.(*ir.Const); ok {
		return convertConst(c, t)
	}
	if t == ir.Bool || v.Type() == ir.Bool {
		return v
	}
	return &ir.Convert{To: t, X: v}
}

// assignResults assigns vals to the result locals simultaneously. The
// leaves are assigned in order, so a leaf that reads a result assigned
// before it is computed into a temporary first; a result set to itself
// (return r of a named result r) is no assignment.
func (b *builder) assignResults(results []result, vals []val) {
	assigned := map[*ir.Var]bool{}
	var spills [][2]int
	for i, r := range results {
		if i >= len(vals) || len(vals[i].leaves) != len(r.vars) {
			continue
		}
		for j, v := range r.vars {
			l := vals[i].leaves[j]
			if len(assigned) > 0 && readsAny(l, assigned) {
				spills = append(spills, [2]int{i, j})
			}
			if ref, ok := l.(*ir.VarRef); !ok || ref.Var != v {
				assigned[v] = true
			}
		}
	}
	for _, s := range spills {
		vals[s[0]].leaves[s[1]] = b.spill(vals[s[0]].leaves[s[1]])
	}
	for i, r := range results {
		if i >= len(vals) || vals[i].bad() || len(vals[i].leaves) != len(r.vars) {
			continue
		}
		b.assignLeaves(r.vars, vals[i].leaves)
	}
}

var assignOps = map[token.Token]ir.BinOp{
	token.ADD_ASSIGN: ir.Add, token.SUB_ASSIGN: ir.Sub, token.MUL_ASSIGN: ir.Mul,
	token.QUO_ASSIGN: ir.Div, token.REM_ASSIGN: ir.Rem, token.AND_ASSIGN: ir.And,
	token.OR_ASSIGN: ir.Or, token.XOR_ASSIGN: ir.Xor, token.SHL_ASSIGN: ir.Shl,
	token.SHR_ASSIGN: ir.Shr, token.AND_NOT_ASSIGN: ir.AndNot,
}

// opAssign translates x op= y, and x++ / x-- (rhs nil): the target's index
// operands are evaluated once.
func (b *builder) opAssign(l ast.Expr, tok token.Token, rhs ast.Expr, pos token.Pos) {
	op, ok := assignOps[tok]
	if !ok {
		b.errorf(pos, "assignment operator %s is not supported", tok)
		return
	}
	t := b.resolveLHS(l)
	if !t.ok {
		return
	}
	if t.def != nil || t.discard {
		b.errorf(pos, "cannot use %s with _", tok)
		return
	}
	operands := append([]ast.Expr(nil), t.index...)
	if rhs != nil {
		operands = append(operands, rhs)
	}
	vals := b.exprList(operands)
	if len(vals) != len(operands) {
		return
	}
	idx := vals[:len(t.index)]
	b.placeIndices(idx)
	var olds []ir.Expr   // the target's value, per alternative of a place
	var recAlts []recAlt // a record leaf's alternatives
	var typ ir.Type
	var pl place
	switch {
	case t.v != nil:
		olds, typ = []ir.Expr{&ir.VarRef{Var: t.v}}, t.v.Type
	case t.array != nil:
		olds, typ = []ir.Expr{&ir.Load{Array: t.array, Index: idx}}, t.array.Elem
	case t.rec != nil:
		if typ, ok = basicType(t.rec.t); !ok || t.rec.n != 1 {
			b.scalarType(t.rec.t, t.pos, "target "+shortExpr(l))
			return
		}
		if !b.recordIndices(*t.rec, idx) {
			return
		}
		ne := len(t.rec.index)
		recAlts = t.rec.alts(idx[ne:])
		for _, al := range recAlts {
			olds = append(olds, &ir.Load{Array: t.rec.p, Index: idx[:ne], Leaf: al.off})
		}
	default:
		if pl, ok = b.buildPlace(*t.pl, idx, t.pos); !ok {
			return
		}
		if typ, ok = basicType(t.pl.t); !ok {
			b.scalarType(t.pl.t, t.pos, "target "+shortExpr(l))
			return
		}
		for _, a := range pl.alts {
			if len(a.vars) != 1 {
				return
			}
			olds = append(olds, &ir.VarRef{Var: a.vars[0]})
		}
	}
	var y ir.Expr
	if rhs == nil {
		if !typ.IsNumeric() {
			b.errorf(pos, "++ and -- need a numeric operand")
			return
		}
		y = ir.One(typ)
	} else {
		y = vals[len(vals)-1]
		if !op.IsShift() {
			y = b.convertTo(typ, y)
		}
	}
	if !b.checkOperands(op, typ, y.Type(), pos) {
		return
	}
	if t.rec != nil {
		b.recordOpAssign(t.rec, idx, recAlts, olds, op, y, b.at(t.pos))
		return
	}
	if t.pl == nil {
		v := arith(op, olds[0], y)
		p := b.at(t.pos)
		switch {
		case t.v != nil:
			b.emit(&ir.Assign{Pos: p, Var: t.v, Value: v})
		default:
			b.emit(&ir.Store{Pos: p, Array: t.array, Index: idx, Value: v})
		}
		return
	}
	// A place: each alternative updates its own leaf, under its condition.
	if len(pl.alts) > 1 && !isSimple(y) {
		y = b.spill(y)
	}
	p := b.at(t.pos)
	for i, a := range pl.alts {
		asg := &ir.Assign{Pos: p, Var: a.vars[0], Value: arith(op, olds[i], y)}
		if a.cond == nil {
			b.emit(asg)
			continue
		}
		b.emit(&ir.If{Pos: p, Cond: a.cond, Then: []ir.Stmt{asg}})
	}
}

// declStmt translates var declarations; constants fold where they are used.
func (b *builder) declStmt(s *ast.DeclStmt) {
	gd, ok := s.Decl.(*ast.GenDecl)
	if !ok {
		return
	}
	switch gd.Tok {
	case token.CONST:
		return
	case token.TYPE:
		b.errorf(gd.Pos(), "type declarations are not supported in kernels; declare the type at the top level of the file")
		return
	case token.VAR:
	default:
		b.errorf(gd.Pos(), "this declaration is not supported in kernels")
		return
	}
	for _, spec := range gd.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok {
			continue
		}
		if len(vs.Values) > 0 {
			names := make([]ast.Expr, len(vs.Names))
			for i, n := range vs.Names {
				names[i] = n
			}
			b.assign(names, vs.Values)
			continue
		}
		for _, n := range vs.Names {
			obj := b.info.Defs[n]
			if obj == nil {
				continue // _
			}
			b.declare(obj, val{}, n.Pos(), b.at(n.Pos()))
		}
	}
}

// clobbered reports whether the value of e could change when the variables
// vars are assigned, or array elements stored when stores is set.
func clobbered(e ir.Expr, vars []*ir.Var, stores bool) bool {
	found := false
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.VarRef:
			for _, v := range vars {
				if n.Var == v {
					found = true
				}
			}
		case *ir.Load, *ir.Atomic:
			found = found || stores
		}
		return !found
	})
	return found
}
