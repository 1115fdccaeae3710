package frontend

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// forStmt translates a 3-clause, condition-only or infinite for loop: always
// serial, at the top level too.
func (b *builder) forStmt(s *ast.ForStmt, label *types.Label) {
	if obj, vals, ok := b.constLoop(s); ok && b.shouldUnroll(int64(len(vals)), obj, s.Body) {
		b.unroll(b.at(s.Pos()), label, s.Body.List, len(vals), func(k int) { b.bindConst(obj, vals[k], s.Body) })
		return
	}
	loop := &ir.For{Pos: b.at(s.Pos())}
	t := &target{label: label, loop: true, brk: loop, cont: loop}
	if s.Init != nil {
		b.nested(inLoop, &loop.Init, func() { b.stmt(s.Init, false) })
		if !allKinds(loop.Init, true) {
			// An init that needs more than declarations and assignments
			// (an inlined call) runs once before the loop instead.
			*b.block = append(*b.block, loop.Init...)
			loop.Init = nil
		}
	}
	b.emit(loop)
	var pre []ir.Stmt
	if s.Cond != nil {
		var c ir.Expr
		b.nested(inLoop, &pre, func() { c = b.cond(s.Cond) })
		if len(pre) == 0 {
			loop.Cond = c
		} else {
			// The condition needs statements (an inlined call): evaluate it
			// at the top of every iteration, after Post.
			pre = append(pre, &ir.If{Pos: loop.Pos, Cond: &ir.Unary{Op: ir.Not, X: c},
				Then: []ir.Stmt{&ir.Break{Pos: loop.Pos, Loop: loop}}})
		}
	}
	if s.Post != nil {
		b.nested(inLoop, &loop.Post, func() { b.stmt(s.Post, false) })
	}
	var post []ir.Stmt
	if !allKinds(loop.Post, false) {
		// ir.For.Post holds only assignments and stores: run a complex post
		// statement at the end of the body, and let continue leave a
		// one-trip loop around the body to reach it.
		post, loop.Post = loop.Post, nil
		t.contBrk = &ir.For{Pos: loop.Pos}
	}
	var body []ir.Stmt
	b.withTarget(t, func() {
		b.nested(inLoop, &body, func() { b.stmtList(s.Body.List, false) })
	})
	if t.contBrk != nil {
		t.contBrk.Body = append(body, &ir.Break{Pos: loop.Pos, Loop: t.contBrk})
		body = append([]ir.Stmt{t.contBrk}, post...)
	}
	loop.Body = append(pre, body...)
}

// allKinds reports whether list holds only what ir.For.Init (decls true) or
// ir.For.Post (decls false) may hold.
func allKinds(list []ir.Stmt, decls bool) bool {
	for _, s := range list {
		switch s.(type) {
		case *ir.Assign, *ir.Store, *ir.ExprStmt:
		case *ir.Decl:
			if !decls {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (b *builder) withTarget(t *target, f func()) {
	b.fr.targets = append(b.fr.targets, t)
	f()
	b.fr.targets = b.fr.targets[:len(b.fr.targets)-1]
}

// rangeSpace is what a range loop iterates over.
type rangeSpace struct {
	extents []ir.Expr
	array   *ir.Param // range over an array parameter: the value is array[i]
	nd3     bool      // qd.NDRange3: one Index3 value
	// A range over a local array value (always serial): its elements,
	// when the loop has a value variable, with their type and layout.
	local  bool
	arr    val
	elemT  types.Type
	elemL  *layout
	length int
}

// rangeStmt translates a range loop over an integer, an array parameter,
// qd.NDRange or qd.NDRange3: parallel at the top level of the kernel (or of
// a qd.StreamParallel block), serial elsewhere; serial outside a parallel
// loop only inside qd.Serial (refuseSerialRange).
func (b *builder) rangeStmt(s *ast.RangeStmt, label *types.Label) {
	if s.Tok == token.ASSIGN {
		b.errorf(s.Pos(), "range loops must declare their variables (for i := range n); assigning existing variables is not supported")
		return
	}
	if call, _, ok := b.isAPICall(s.X, apiBlocks); ok {
		b.blocksLoop(s, label, call) // blocks.go
		return
	}
	if call, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			if fn, ok := b.info.Uses[sel.Sel].(*types.Func); ok && b.std.blockMethods[fn] == "Threads" {
				b.threadsLoop(s, label, call)
				return
			}
		}
	}
	sp, ok := b.rangeSpace(s)
	if !ok {
		return
	}
	// The variables a body sees: Go gives each iteration its own copy, so a
	// body that assigns one gets a local copy instead of the loop counter.
	var objs []types.Object
	dims := len(sp.extents)
	switch {
	case sp.nd3:
		if s.Value != nil {
			b.errorf(s.Value.Pos(), "a qd.NDRange3 loop has one variable, an Index3 (for p := range qd.NDRange3(n, m, l); use p.I, p.J, p.K)")
			return
		}
		objs = []types.Object{b.defOf(s.Key)}
	case dims == 2:
		objs = []types.Object{b.defOf(s.Key), b.defOf(s.Value)}
	default:
		objs = []types.Object{b.defOf(s.Key)}
		if s.Value != nil && sp.array == nil && !sp.local {
			b.errorf(s.Value.Pos(), "ranging over an integer gives one variable")
			return
		}
	}
	// A range over a local array is a loop over its few elements: serial,
	// as every loop that reads a local value is.
	parallel := b.top && !sp.local
	if !parallel && b.refuseSerialRange(s, sp.local) {
		// The loop is translated on, for the errors of its body, as a
		// serial loop: loops inside it are not reported again.
		savedIn := b.serialIn
		b.serialIn = inSerial
		defer func() { b.serialIn = savedIn }()
	}
	if !parallel && b.unrollRange(s, label, sp, objs[0]) {
		return
	}
	names := make([]string, dims)
	for d := range dims {
		names[d] = "_"
		if d < len(objs) && objs[d] != nil && !sp.nd3 {
			names[d] = objs[d].Name()
		} else if sp.nd3 && objs[0] != nil {
			names[d] = objs[0].Name() + "_" + string("IJK"[d])
		}
	}
	counters := make([]*ir.Var, dims)
	for d := range dims {
		counters[d] = b.newVar(names[d], sp.extents[d].Type())
	}
	// bindVars emits, at the top of the body, the copies and the array value
	// that the body's variables need, and binds them.
	bindVars := func() {
		assigned := b.fc.assignedIn(b.info, s.Body)
		if sp.nd3 {
			if objs[0] != nil {
				b.fr.vars[objs[0]] = &binding{idx3: counters}
			}
			return
		}
		for d, obj := range objs {
			if obj == nil || d >= dims {
				continue
			}
			v := counters[d]
			if assigned[obj] {
				v = b.decl(obj.Name(), &ir.VarRef{Var: counters[d]})
			}
			b.fr.vars[obj] = &binding{v: v}
		}
		if sp.array != nil && sp.array.Rec != nil && s.Value != nil {
			// for _, q := range ps over records: q is a copy of the element.
			if obj := b.defOf(s.Value); obj != nil {
				a := recAccess{p: sp.array, n: len(sp.array.Rec.Leaves), t: b.subst(obj.Type())}
				el := recordLoad(a, []ir.Expr{&ir.VarRef{Var: counters[0]}})
				b.declare(obj, el, s.Value.Pos(), b.at(s.Value.Pos()))
			}
		} else if sp.array != nil && s.Value != nil {
			if obj := b.defOf(s.Value); obj != nil {
				v := b.decl(obj.Name(), &ir.Load{Array: sp.array, Index: []ir.Expr{&ir.VarRef{Var: counters[0]}}})
				b.fr.vars[obj] = &binding{v: v}
			}
		}
		if sp.local && s.Value != nil {
			if obj := b.defOf(s.Value); obj != nil {
				el := b.elementOf(sp.arr, &ir.VarRef{Var: counters[0]}, sp.elemT, sp.elemL, sp.length, s.Value.Pos())
				b.declare(obj, el, s.Value.Pos(), b.at(s.Value.Pos()))
			}
		}
	}
	if parallel {
		b.parallelFor(s, label, sp, counters, bindVars)
		return
	}
	b.serialRange(s, label, sp, counters, bindVars)
}

// defOf returns the object an identifier of a range clause declares.
func (b *builder) defOf(e ast.Expr) types.Object {
	id, ok := e.(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil
	}
	return b.info.Defs[id]
}

// rangeSpace evaluates what s ranges over.
func (b *builder) rangeSpace(s *ast.RangeStmt) (rangeSpace, bool) {
	x := ast.Unparen(s.X)
	if call, ok := x.(*ast.CallExpr); ok {
		switch b.apiOf(call.Fun).kind {
		case apiNDRange, apiNDRange3:
			ext := b.exprList(call.Args)
			if len(ext) != len(call.Args) {
				return rangeSpace{}, false
			}
			return rangeSpace{extents: ext, nd3: len(ext) == 3}, true
		}
	}
	t := b.typ(x)
	if t == nil {
		return rangeSpace{}, false
	}
	if isLocalArray(t) {
		return b.localRangeSpace(s, x, t)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsInteger != 0 {
			n := b.expr(x)
			if n.Type() == ir.Invalid {
				return rangeSpace{}, false
			}
			if !n.Type().IsInteger() {
				b.errorf(x.Pos(), "range over %s: the count must have type int, int32, int64, uint, uint32 or uint64", shortExpr(x))
				return rangeSpace{}, false
			}
			if n.Type().IsSmall() {
				// Loop variables are 32- or 64-bit indices in every
				// generator (and the IR's loops count in them).
				b.errorf(x.Pos(), "range over %s, of type %s: loops over 8- or 16-bit counts are not supported; range over int(%s)", shortExpr(x), b.fc.typeString(t), shortExpr(x))
				return rangeSpace{}, false
			}
			return rangeSpace{extents: []ir.Expr{n}}, true
		}
	case *types.Slice:
		p, idx, ok := b.arrayIndexBase(x)
		if !ok {
			return rangeSpace{}, false
		}
		if len(idx) != 0 {
			b.errorf(x.Pos(), "ranging over a row of an array is not supported; range over the index: for j := range len(%s)", shortExpr(x))
			return rangeSpace{}, false
		}
		if s.Value != nil && p.Dims > 1 {
			b.errorf(s.Value.Pos(), "the range value of %s would be a row of a %d-dimensional array; range over the index only (for i := range %s)", p.Name, p.Dims, p.Name)
			return rangeSpace{}, false
		}
		sp := rangeSpace{extents: []ir.Expr{&ir.Len{Array: p, Dim: 0}}}
		if p.Dims == 1 {
			sp.array = p
		}
		return sp, true
	case *types.Signature:
		b.errorf(x.Pos(), "range over a function is only supported for qd.NDRange and qd.NDRange3")
		return rangeSpace{}, false
	}
	b.errorf(x.Pos(), "range over %s is not supported; kernels range over an integer (range n), an array parameter, qd.NDRange or qd.NDRange3", shortExpr(x))
	return rangeSpace{}, false
}

// parallelFor emits a ParallelFor. A continue in its body leaves a one-trip
// loop wrapped around the body.
func (b *builder) parallelFor(s *ast.RangeStmt, label *types.Label, sp rangeSpace, counters []*ir.Var, bindVars func()) {
	node := &ir.ParallelFor{Pos: b.at(s.Pos()), Vars: counters, Extents: sp.extents}
	if b.blockDimPos.IsValid() {
		node.BlockDim = b.blockDim
		b.blockDimPos = token.NoPos
	}
	for d, e := range node.Extents {
		if hasAtomic(e) {
			node.Extents[d] = b.spill(e)
		}
	}
	b.emit(node)
	wrap := &ir.For{Pos: node.Pos}
	t := &target{label: label, loop: true, parallel: true, contBrk: wrap}
	var body []ir.Stmt
	savedTop, savedPar := b.top, b.inPar
	b.top, b.inPar = false, true
	b.withTarget(t, func() {
		b.into(&body, func() {
			bindVars()
			b.stmtList(s.Body.List, false)
		})
	})
	b.top, b.inPar = savedTop, savedPar
	if t.used {
		wrap.Body = append(body, &ir.Break{Pos: wrap.Pos, Loop: wrap})
		body = []ir.Stmt{wrap}
	}
	node.Body = body
}

// serialRange emits nested serial loops, one per dimension; break leaves
// the outermost, continue continues the innermost.
func (b *builder) serialRange(s *ast.RangeStmt, label *types.Label, sp rangeSpace, counters []*ir.Var, bindVars func()) {
	// Extents are evaluated once, before the loop.
	ext := make([]ir.Expr, len(sp.extents))
	for d, e := range sp.extents {
		ext[d] = e
		if !isInvariant(e) {
			ext[d] = b.spill(e)
		}
	}
	var outer, inner *ir.For
	dst := b.block
	for d := range counters {
		c := counters[d]
		loop := &ir.For{
			Pos:  b.at(s.Pos()),
			Init: []ir.Stmt{&ir.Decl{Pos: b.pos, Var: c, Init: ir.Zero(c.Type)}},
			Cond: ir.NewBinary(ir.Lt, &ir.VarRef{Var: c}, ext[d]),
			Post: []ir.Stmt{&ir.Assign{Pos: b.pos, Var: c, Value: ir.NewBinary(ir.Add, &ir.VarRef{Var: c}, ir.One(c.Type))}},
		}
		*dst = append(*dst, loop)
		dst = &loop.Body
		if outer == nil {
			outer = loop
		}
		inner = loop
	}
	t := &target{label: label, loop: true, brk: outer, cont: inner}
	b.withTarget(t, func() {
		b.nested(inLoop, &inner.Body, func() {
			bindVars()
			b.stmtList(s.Body.List, false)
		})
	})
}

// isInvariant reports whether e cannot change while a loop runs: constants,
// parameters and array extents.
func isInvariant(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Const, *ir.ParamRef, *ir.Len:
		return true
	case *ir.Convert:
		return isInvariant(e.X)
	}
	return false
}

// localRangeSpace evaluates a range over a local array value x of type t.
// The array is read once, before the loop, when the loop has a value
// variable (as Go evaluates it); a local that the body leaves alone is read
// in place.
func (b *builder) localRangeSpace(s *ast.RangeStmt, x ast.Expr, t types.Type) (rangeSpace, bool) {
	at := t
	if p, ok := t.Underlying().(*types.Pointer); ok {
		at = p.Elem()
	}
	arr := at.Underlying().(*types.Array)
	sp := rangeSpace{extents: []ir.Expr{ir.I64c(arr.Len())}, local: true, length: int(arr.Len())}
	if s.Value == nil {
		return sp, true
	}
	al, ok := b.layoutOr(at, x.Pos(), func() string { return "array " + shortExpr(x) })
	if !ok {
		return rangeSpace{}, false
	}
	sp.elemT = b.subst(arr.Elem())
	if sp.elemL, ok = b.layoutOr(sp.elemT, x.Pos(), func() string { return "element of " + shortExpr(x) }); !ok {
		return rangeSpace{}, false
	}
	v := b.operandVal(x, t)
	if v.bad() {
		return rangeSpace{}, false
	}
	if id := rootIdent(x); id == nil || b.fc.assignedIn(b.info, s.Body)[b.info.Uses[id]] || !allDirect(v.leaves, nil) {
		v = val{t: at, leaves: refs(b.declLeaves("range", al, v, b.pos))}
	}
	sp.arr = v
	return sp, true
}

// unrollRange unrolls a serial range loop over a constant count when
// shouldUnroll says so, or over a local array whose elements the loop
// reads; it reports whether it did.
func (b *builder) unrollRange(s *ast.RangeStmt, label *types.Label, sp rangeSpace, key types.Object) bool {
	if len(sp.extents) != 1 || sp.nd3 || sp.array != nil {
		return false
	}
	c, ok := sp.extents[0].(*ir.Const)
	if !ok {
		return false
	}
	trips, _ := constIndex(c, maxUnrollTrips+1)
	value := b.defOf(s.Value)
	switch {
	case trips < 0 || trips > maxUnrollTrips:
		return false
	case sp.local && value != nil:
		if int64(trips)*int64(b.unrollCost(s.Body.List)) > maxUnroll {
			return false
		}
	case !b.shouldUnroll(int64(trips), key, s.Body):
		return false
	}
	b.unroll(b.at(s.Pos()), label, s.Body.List, trips, func(k int) {
		b.bindConst(key, ir.IntC(c.T, int64(k)), s.Body)
		if sp.local && value != nil {
			el := b.project(sp.arr, sp.elemT, k*sp.elemL.size(), sp.elemL.size())
			b.declare(value, el, s.Value.Pos(), b.at(s.Value.Pos()))
		}
	})
	return true
}
