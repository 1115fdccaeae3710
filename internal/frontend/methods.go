package frontend

import (
	"go/ast"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// Method calls. A method is inlined as a helper whose first parameter is
// the receiver. A value receiver is a copy of the operand (bound to the
// operand's leaves when the method never writes it). A pointer receiver
// points to the operand's leaves: the method's writes through it are
// assignments to the caller's locals. An operand whose place depends on a
// dynamic index, or an element of an array parameter, is copied into a
// temporary before the call and back after it: nothing else can reach the
// operand while the method runs, so the copy is not observable. A method
// promoted from an embedded field works on that field, and a method called
// through a type parameter is looked up on the type it stands for.

// methodCall translates a call x.M(args) of a method.
func (b *builder) methodCall(x *ast.CallExpr, sel *ast.SelectorExpr, s *types.Selection) []val {
	fn, ok := s.Obj().(*types.Func)
	if !ok {
		return nil
	}
	recvExpr, args := sel.X, x.Args
	if s.Kind() == types.MethodExpr {
		// T.M(r, args): the receiver is the first argument.
		if len(x.Args) == 0 {
			return nil
		}
		recvExpr, args = x.Args[0], x.Args[1:]
	}
	recvT := b.subst(s.Recv())
	path := s.Index()[:len(s.Index())-1]
	if fs := fn.Type().(*types.Signature); fs.Recv() != nil && types.IsInterface(fs.Recv().Type()) {
		// A method of a type parameter's constraint: the method of the
		// type the parameter stands for.
		obj, index, _ := types.LookupFieldOrMethod(recvT, true, fn.Pkg(), fn.Name())
		m, isFunc := obj.(*types.Func)
		if !isFunc || len(index) == 0 {
			b.errorf(sel.Sel.Pos(), "method %s of %s cannot be called in kernels", fn.Name(), b.fc.typeString(recvT))
			return nil
		}
		fn, path = m, index[:len(index)-1]
	}
	c := b.calleeOf(fn)
	if c == nil {
		b.errorf(sel.Sel.Pos(), "method %s of %s cannot be called in kernels: only methods declared in the kernel's file and those of qd's value types are", fn.Name(), b.fc.typeString(recvT))
		return nil
	}
	sig := c.fn.Type().(*types.Signature)
	_, ptrRecv := sig.Recv().Type().(*types.Pointer)

	// The receiver's own type: the operand's, dereferenced, and then the
	// type of the embedded field the method is promoted from.
	baseT := recvT
	if p, isPtr := baseT.Underlying().(*types.Pointer); isPtr {
		baseT = p.Elem()
	}
	off, n, fieldT := 0, 0, baseT
	if len(path) > 0 {
		var ok bool
		if off, n, fieldT, ok = b.fieldPath(baseT, path); !ok {
			return nil
		}
		if p, isPtr := fieldT.Underlying().(*types.Pointer); isPtr {
			fieldT = p.Elem()
		}
	}
	c.env = recvEnv(c.fn, fieldT)

	if !ptrRecv {
		recv := &receiver{arg: func() val {
			v := b.operandVal(recvExpr, recvT)
			if len(path) == 0 {
				return v
			}
			return b.project(v, fieldT, off, n)
		}}
		return b.inline(x, c, recv, args)
	}
	if s.Kind() == types.MethodExpr {
		b.errorf(x.Pos(), "method expressions with a pointer receiver are not supported in kernels; call the method on the value: v.%s(...)", fn.Name())
		return nil
	}
	vars, finish, ok := b.receiverPlace(recvExpr, recvT, path)
	if !ok {
		return nil
	}
	out := b.inline(x, c, &receiver{ptr: true, vars: vars}, args)
	finish()
	return out
}

// operandVal is the value of a method's operand of type t, dereferenced
// when it is a pointer.
func (b *builder) operandVal(e ast.Expr, t types.Type) val {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return b.derefVal(e, p.Elem())
	}
	return b.value(e)
}

// receiverPlace returns the leaves a pointer receiver points to for the
// operand e (of type t) and the embedded-field path, and what to run after
// the call: nothing, or the copy back of a temporary.
func (b *builder) receiverPlace(e ast.Expr, t types.Type, path []int) ([]*ir.Var, func(), bool) {
	none := func() {}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		vars, ok := b.pointee(e, e.Pos())
		if !ok {
			return nil, none, false
		}
		return b.pathVars(vars, p.Elem(), path)
	}
	if b.isRecordAccess(e) {
		return b.recordReceiver(e, t, path)
	}
	if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
		if bd, isPT := b.perThreadIndex(ix); isPT { // v[t] of a per-thread value
			if bd == nil {
				return nil, none, false
			}
			vars := bd.vars
			if bd.v != nil {
				vars = []*ir.Var{bd.v}
			}
			return b.pathVars(vars, t, path)
		}
	}
	if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok && !b.isLocalIndex(ix.X) {
		// An element of an array parameter: a scalar of a defined type.
		p, idx, ok := b.arrayIndex(ix)
		if !ok {
			return nil, none, false
		}
		if len(idx) != p.Dims {
			b.errorf(e.Pos(), "%s is a row of %s; call methods on elements", shortExpr(e), p.Name)
			return nil, none, false
		}
		vals := b.exprList(idx)
		b.placeIndices(vals)
		tmp := b.decl(p.Name, &ir.Load{Array: p, Index: vals})
		return []*ir.Var{tmp}, func() {
			b.emit(&ir.Store{Pos: b.pos, Array: p, Index: vals, Value: &ir.VarRef{Var: tmp}})
		}, true
	}
	pe, ok := b.placePath(e)
	if !ok {
		return nil, none, false
	}
	if len(path) > 0 {
		off, n, ft, ok := b.fieldPath(t, path)
		if !ok {
			return nil, none, false
		}
		pe.steps = append(pe.steps, pathStep{off: off, n: n})
		pe.t = ft
	}
	idx := b.exprList(pe.indices())
	b.placeIndices(idx)
	pl, ok := b.buildPlace(pe, idx, e.Pos())
	if !ok {
		return nil, none, false
	}
	if len(pl.alts) == 1 && pl.alts[0].cond == nil {
		return pl.alts[0].vars, none, true
	}
	// A dynamic index: the method works on a copy, written back after.
	l, ok := b.layoutOr(pl.t, e.Pos(), func() string { return "receiver " + shortExpr(e) })
	if !ok {
		return nil, none, false
	}
	tmp := b.declLeaves("recv", l, b.readPlace(pl, l), b.pos)
	return tmp, func() { b.writePlace(pl, val{t: pl.t, leaves: refs(tmp)}) }, true
}

// pathVars follows an embedded-field path from the leaves of a value of
// type t.
func (b *builder) pathVars(vars []*ir.Var, t types.Type, path []int) ([]*ir.Var, func(), bool) {
	none := func() {}
	if len(path) == 0 {
		return vars, none, true
	}
	off, n, _, ok := b.fieldPath(t, path)
	if !ok || off+n > len(vars) {
		return nil, none, false
	}
	return vars[off : off+n], none, true
}

// recordReceiver gives a pointer receiver in an element of a record array
// (ps[i].Step()) a copy of its leaves, stored back after the call.
func (b *builder) recordReceiver(e ast.Expr, t types.Type, path []int) ([]*ir.Var, func(), bool) {
	none := func() {}
	a, ok := b.recordPath(e)
	if !ok {
		return nil, none, false
	}
	if len(path) > 0 {
		off, n, ft, ok := b.fieldPath(t, path)
		if !ok {
			return nil, none, false
		}
		a.off, a.n, a.t = a.off+off, n, ft
	}
	l, ok := b.layoutOr(a.t, e.Pos(), func() string { return "receiver " + shortExpr(e) })
	if !ok {
		return nil, none, false
	}
	idx := b.exprList(a.operands())
	if !b.recordIndices(a, idx) {
		return nil, none, false
	}
	b.placeIndices(idx) // read now and stored to after the call
	tmp := b.declLeaves("recv", l, b.recordRead(a, idx), b.pos)
	return tmp, func() { b.recordStore(a, idx, val{t: a.t, leaves: refs(tmp)}, b.pos) }, true
}
