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
	v       *ir.Var      // an existing local
	array   *ir.Param    // an array element: array[index...]
	index   []ast.Expr
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
			if v, ok := obj.(*types.Var); ok && v.Parent() == v.Pkg().Scope() {
				b.errorf(x.Pos(), "package-level variable %s cannot be used in kernels; pass it as a parameter or declare it const", x.Name)
			} else {
				b.errorf(x.Pos(), "cannot assign to %s in a kernel", x.Name)
			}
		case bd.v != nil:
			t.v, t.ok = bd.v, true
		case bd.idx3 != nil:
			b.errorf(x.Pos(), "cannot assign to %s, a qd.NDRange3 index", x.Name)
		case bd.param != nil && bd.param.Dims > 0:
			b.errorf(x.Pos(), "cannot assign to array parameter %s; assign its elements instead (%s[i] = v)", x.Name, x.Name)
		case bd.param != nil:
			b.errorf(x.Pos(), "cannot assign to kernel parameter %s: parameters are read-only in kernels; copy it to a local first (v := %s)", x.Name, x.Name)
		default:
			b.errorf(x.Pos(), "cannot assign to %s in a kernel", x.Name)
		}
	case *ast.IndexExpr:
		p, idx, ok := b.arrayIndex(x)
		if ok {
			if len(idx) != p.Dims {
				b.errorf(x.Pos(), "%s has %d dimensions; assign to an element by indexing all of them", p.Name, p.Dims)
				return t
			}
			t.array, t.index, t.ok = p, idx, true
		}
	case *ast.SelectorExpr:
		b.errorf(x.Pos(), "cannot assign to %s: struct fields are not supported in kernels", shortExpr(x))
	case *ast.StarExpr:
		b.errorf(x.Pos(), "pointers are not supported in kernels")
	default:
		b.errorf(e.Pos(), "cannot assign to %s in a kernel", shortExpr(e))
	}
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
	targets := make([]lhs, len(lhsList))
	var operands []ast.Expr
	good := true
	for i, l := range lhsList {
		targets[i] = b.resolveLHS(l)
		good = good && targets[i].ok
		operands = append(operands, targets[i].index...)
	}
	var vals []ir.Expr
	if len(rhsList) == 1 && len(lhsList) > 1 {
		call, ok := ast.Unparen(rhsList[0]).(*ast.CallExpr)
		if !ok {
			b.errorf(rhsList[0].Pos(), "only a call of a helper function with several results can be assigned to several variables")
			return
		}
		idx := b.exprList(operands)
		vals = b.call(call)
		vals = append(idx, vals...)
	} else {
		vals = b.exprList(append(operands, rhsList...))
	}
	if !good || len(vals) != len(operands)+len(lhsList) {
		return
	}
	if len(lhsList) > 1 {
		// The right-hand side may read what the left-hand side writes
		// (a, b = b, a): take such values before assigning any.
		var vars []*ir.Var
		stores := false
		for _, t := range targets {
			if t.v != nil {
				vars = append(vars, t.v)
			}
			stores = stores || t.array != nil
		}
		for i, v := range vals {
			if clobbered(v, vars, stores) {
				vals[i] = b.spill(v)
			}
		}
	}
	k := 0
	for i := range targets {
		t := &targets[i]
		idx := vals[k : k+len(t.index)]
		k += len(t.index)
		b.setLHS(t, idx, vals[len(operands)+i])
	}
}

// setLHS stores v into the target t.
func (b *builder) setLHS(t *lhs, idx []ir.Expr, v ir.Expr) {
	p := b.pos
	if t.pos.IsValid() {
		p = b.fc.pos(t.pos)
	}
	switch {
	case t.discard:
		b.discard(v)
	case t.def != nil:
		typ, ok := b.scalarType(t.def.Type(), t.pos, "variable "+t.def.Name())
		if !ok {
			b.fr.vars[t.def] = &binding{bad: true}
			return
		}
		nv := b.newVar(t.def.Name(), typ)
		b.emit(&ir.Decl{Pos: p, Var: nv, Init: b.convertTo(typ, v)})
		b.fr.vars[t.def] = &binding{v: nv}
	case t.v != nil:
		b.emit(&ir.Assign{Pos: p, Var: t.v, Value: b.convertTo(t.v.Type, v)})
	case t.array != nil:
		b.emit(&ir.Store{Pos: p, Array: t.array, Index: idx, Value: b.convertTo(t.array.Elem, v)})
	}
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

// assignVars assigns vals to vars simultaneously.
func (b *builder) assignVars(vars []*ir.Var, vals []ir.Expr) {
	if len(vars) > 1 {
		for i, v := range vals {
			if clobbered(v, vars, false) {
				vals[i] = b.spill(v)
			}
		}
	}
	for i, v := range vars {
		b.emit(&ir.Assign{Pos: b.pos, Var: v, Value: b.convertTo(v.Type, vals[i])})
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
	for i, x := range idx {
		if !isSimple(x) {
			idx[i] = b.spill(x)
		}
	}
	var old ir.Expr
	var typ ir.Type
	if t.v != nil {
		old, typ = &ir.VarRef{Var: t.v}, t.v.Type
	} else {
		old, typ = &ir.Load{Array: t.array, Index: idx}, t.array.Elem
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
	b.setLHS(&t, idx, ir.NewBinary(op, old, y))
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
		b.errorf(gd.Pos(), "type declarations are not supported in kernels")
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
			typ, ok := b.scalarType(obj.Type(), n.Pos(), "variable "+n.Name)
			if !ok {
				b.fr.vars[obj] = &binding{bad: true}
				continue
			}
			v := b.newVar(n.Name, typ)
			b.emit(&ir.Decl{Pos: b.fc.pos(n.Pos()), Var: v})
			b.fr.vars[obj] = &binding{v: v}
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
