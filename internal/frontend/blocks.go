package frontend

import (
	"errors"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Block loops (qd.Blocks, blockapi.go of package qd): the block loop, its
// thread loops, shared arrays, per-thread values and the block
// collectives. A shared array is bound like an array parameter (an
// ir.Param with a constant shape), so indexing, records and atomics work
// on it as on one; a per-thread value is bound to locals that only a
// thread loop's v[t] reaches. Lowering (internal/lower/blocks.go) checks
// what may sit at the block's level; what the front end refuses here is
// what it can say better in the user's terms.

// blockCtx is the block loop being translated.
type blockCtx struct {
	node   *ir.Blocks
	obj    types.Object // the loop's variable (b)
	thread *ir.Var      // the thread loop's index, while one is translated
}

// perThread is the binding of a qd.PerThread value: the locals of one
// thread's value, of type t.
type perThread struct {
	t    types.Type
	v    *ir.Var   // a scalar
	vars []*ir.Var // a struct or array value's leaves
}

// elem is the binding of v[t]: the thread's value as a local.
func (p *perThread) elem() *binding {
	if p.v != nil {
		return &binding{v: p.v}
	}
	return &binding{agg: true, vars: p.vars}
}

// isAPICall reports whether e is a call of a kernel API function of one
// of kinds.
func (b *builder) isAPICall(e ast.Expr, kinds ...apiKind) (*ast.CallExpr, apiKind, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return nil, apiNone, false
	}
	k := b.apiOf(call.Fun).kind
	for _, want := range kinds {
		if k == want {
			return call, k, true
		}
	}
	return nil, apiNone, false
}

// blocksLoop translates for b := range qd.Blocks(n, size).
func (b *builder) blocksLoop(s *ast.RangeStmt, label *types.Label, call *ast.CallExpr) {
	switch {
	case b.blk != nil:
		b.errorf(s.Pos(), "qd.Blocks loops do not nest; use one block loop and thread loops (for t := range b.Threads()) inside it")
		return
	case !b.top:
		b.errorf(s.Pos(), "a qd.Blocks loop must be a top-level statement of the kernel (or of a qd.StreamParallel block): elsewhere it would run on one thread; move it there and put the condition inside its body")
		return
	case s.Value != nil:
		b.errorf(s.Value.Pos(), "a qd.Blocks loop has one variable, the block (for b := range qd.Blocks(n, size))")
		return
	case len(call.Args) != 2:
		return // go/types reported it
	}
	count, size := b.expr(call.Args[0]), b.expr(call.Args[1])
	if count.Type() == ir.Invalid || size.Type() == ir.Invalid {
		return
	}
	if hasAtomic(count) {
		count = b.spill(count)
	}
	if c, ok := size.(*ir.Const); ok && (c.Int() < 1 || c.Int() > ir.MaxBlockDim) {
		b.errorf(call.Args[1].Pos(), "block size %d is outside 1..%d: a GPU block has at most %d threads", c.Int(), ir.MaxBlockDim, ir.MaxBlockDim)
		return
	}
	if !ir.LaunchScalar(size) {
		b.errorf(call.Args[1].Pos(), "the block size %s must be a constant or computed from scalar parameters, so that a launch knows it", shortExpr(call.Args[1]))
		return
	}
	node := &ir.Blocks{Pos: b.at(s.Pos()), Count: count, Size: size}
	name := "b"
	obj := b.defOf(s.Key)
	if obj != nil {
		name = obj.Name()
	}
	node.Var = b.newVar(name, ir.I64)
	b.emit(node)
	b.sawBlocks = true
	ctx := &blockCtx{node: node, obj: obj}
	if obj != nil {
		b.fr.vars[obj] = &binding{blk: ctx}
	}
	wrap := &ir.For{Pos: node.Pos}
	t := &target{label: label, loop: true, parallel: true, contBrk: wrap}
	var body []ir.Stmt
	savedTop, savedBlk := b.top, b.blk
	b.top, b.blk = false, ctx
	b.withTarget(t, func() {
		b.into(&body, func() { b.stmtList(s.Body.List, false) })
	})
	b.top, b.blk = savedTop, savedBlk
	if t.used {
		wrap.Body = append(body, &ir.Break{Pos: wrap.Pos, Loop: wrap})
		body = []ir.Stmt{wrap}
	}
	node.Body = body
}

// threadsLoop translates for t := range b.Threads().
func (b *builder) threadsLoop(s *ast.RangeStmt, label *types.Label, call *ast.CallExpr) {
	ctx := b.blk
	switch {
	case ctx == nil:
		b.errorf(s.Pos(), "a thread loop (range b.Threads()) must be inside a qd.Blocks loop")
		return
	case ctx.thread != nil:
		b.errorf(s.Pos(), "thread loops do not nest: each thread runs a thread loop's body once; write the inner loop as a serial for loop")
		return
	case s.Value != nil:
		b.errorf(s.Value.Pos(), "a thread loop has one variable, the thread (for t := range b.Threads())")
		return
	}
	if !b.isBlockVar(call.Fun.(*ast.SelectorExpr).X) {
		return
	}
	name := "t"
	obj := b.defOf(s.Key)
	if obj != nil {
		name = obj.Name()
	}
	node := &ir.Threads{Pos: b.at(s.Pos()), Var: b.newVar(name, ir.I64)}
	b.emit(node)
	wrap := &ir.For{Pos: node.Pos}
	t := &target{label: label, loop: true, parallel: true, contBrk: wrap}
	ctx.thread = node.Var
	var body []ir.Stmt
	b.withTarget(t, func() {
		b.into(&body, func() {
			if obj != nil {
				v := node.Var
				if b.fc.assignedIn(b.info, s.Body)[obj] {
					v = b.decl(obj.Name(), &ir.VarRef{Var: node.Var})
				}
				b.fr.vars[obj] = &binding{v: v}
			}
			b.stmtList(s.Body.List, false)
		})
	})
	ctx.thread = nil
	if t.used {
		wrap.Body = append(body, &ir.Break{Pos: wrap.Pos, Loop: wrap})
		body = []ir.Stmt{wrap}
	}
	node.Body = body
}

// isBlockVar reports whether e names the enclosing block loop's variable,
// reporting why not.
func (b *builder) isBlockVar(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if ok {
		if bd := b.lookup(b.info.Uses[id]); bd != nil && bd.blk != nil {
			if bd.blk == b.blk {
				return true
			}
		}
	}
	if b.blk == nil {
		b.errorf(e.Pos(), "%s is used outside the qd.Blocks loop it belongs to", shortExpr(e))
	} else {
		b.errorf(e.Pos(), "call the methods of the block loop's own variable %s (b.Threads(), b.Index(), b.Size()); qd.Block values cannot be stored or passed", b.blk.obj.Name())
	}
	return false
}

// blockMethod translates b.Index(), b.Size() and a misplaced b.Threads().
func (b *builder) blockMethod(x *ast.CallExpr, sel *ast.SelectorExpr, name string) []ir.Expr {
	if !b.isBlockVar(sel.X) {
		return nil
	}
	switch name {
	case "Index":
		return []ir.Expr{&ir.VarRef{Var: b.blk.node.Var}}
	case "Size":
		return []ir.Expr{b.blk.node.Size}
	}
	b.errorf(x.Pos(), "b.Threads() can only be the range of a thread loop (for t := range b.Threads())")
	return nil
}

// atBlockLevel reports, at p, whether a block-level construct (what) is
// where it may be: in a block loop, outside its thread loops.
func (b *builder) atBlockLevel(p token.Pos, what string) bool {
	switch {
	case b.blk == nil:
		b.errorf(p, "%s belongs inside a qd.Blocks loop, at the level of the block (outside its thread loops)", what)
		return false
	case b.blk.thread != nil:
		b.errorf(p, "%s is a statement of the block, not of one thread: move it out of the thread loop, between thread loops", what)
		return false
	}
	return true
}

// blockDecl translates name := qd.Shared[A](), qd.NewPerThread[T](b),
// qd.BlockExclusiveSum(b, v) or qd.BlockInclusiveSum(b, v); it reports
// whether rhs was one of them.
func (b *builder) blockDecl(lhs []ast.Expr, rhs []ast.Expr) bool {
	if len(lhs) != 1 || len(rhs) != 1 {
		calls := 0
		for _, r := range rhs {
			if _, _, ok := b.isAPICall(r, apiShared, apiNewPerThread, apiBlockScan); ok {
				calls++
			}
		}
		switch {
		case calls == 0:
			return false
		case calls == len(rhs) && len(lhs) == len(rhs):
			// a, c := qd.NewPerThread[T](b), qd.NewPerThread[T](b): each
			// pair is a declaration of its own (none has side effects).
			for i := range lhs {
				b.blockDecl(lhs[i:i+1], rhs[i:i+1])
			}
			return true
		}
		for _, r := range rhs {
			if call, _, ok := b.isAPICall(r, apiShared, apiNewPerThread, apiBlockScan); ok {
				b.errorf(call.Pos(), "assign %s to a variable of its own (x := %s), not in one statement with other values", shortExpr(call.Fun), shortExpr(call))
				break
			}
		}
		// The variables are declared, and wrong: their uses say nothing
		// more.
		for _, l := range lhs {
			if id, ok := ast.Unparen(l).(*ast.Ident); ok {
				if obj := b.info.Defs[id]; obj != nil {
					b.fr.vars[obj] = &binding{bad: true}
				}
			}
		}
		return true
	}
	call, kind, ok := b.isAPICall(rhs[0], apiShared, apiNewPerThread, apiBlockScan)
	if !ok {
		return false
	}
	id, isIdent := ast.Unparen(lhs[0]).(*ast.Ident)
	var obj types.Object
	if isIdent {
		obj = b.info.Defs[id]
	}
	if obj == nil {
		b.errorf(lhs[0].Pos(), "%s declares a new variable (x := %s); it cannot be assigned to an existing one", shortExpr(call.Fun), shortExpr(call))
		return true
	}
	switch kind {
	case apiShared:
		b.sharedDecl(obj, call)
	case apiNewPerThread:
		if b.atBlockLevel(call.Pos(), "qd.NewPerThread") && len(call.Args) == 1 && b.isBlockVar(call.Args[0]) {
			b.perThreadDecl(obj, call.Pos())
		} else {
			b.fr.vars[obj] = &binding{bad: true}
		}
	case apiBlockScan:
		a := b.std.funcs[b.funcOf(ast.Unparen(call.Fun)).Origin()]
		b.blockScan(obj, call, a.inclusive)
	}
	return true
}

// sharedDecl declares a shared array.
func (b *builder) sharedDecl(obj types.Object, call *ast.CallExpr) {
	b.fr.vars[obj] = &binding{bad: true}
	if !b.atBlockLevel(call.Pos(), "qd.Shared") {
		return
	}
	ptr, ok := b.subst(b.typ(call)).(*types.Pointer)
	if !ok {
		return
	}
	whole := ptr.Elem()
	var shape []int
	t := whole
	for {
		a, ok := types.Unalias(t).(*types.Array)
		if !ok {
			break
		}
		shape = append(shape, int(a.Len()))
		t = a.Elem()
	}
	what := "qd.Shared array " + obj.Name()
	switch {
	case len(shape) == 0:
		b.errorf(call.Pos(), "%s has type %s; qd.Shared takes an array type of constant size, such as [256]float32 or [16][16]float32", what, b.fc.typeString(whole))
		return
	case len(shape) > ir.MaxDims:
		b.errorf(call.Pos(), "%s has %d dimensions; shared arrays have 1 to %d", what, len(shape), ir.MaxDims)
		return
	}
	for _, n := range shape {
		if n == 0 {
			b.errorf(call.Pos(), "%s has an extent of 0", what)
			return
		}
	}
	p := &ir.Param{Name: obj.Name(), Dims: len(shape), Shared: shape, Pos: b.at(call.Pos()),
		GoType: "*" + types.TypeString(whole, types.RelativeTo(b.fc.pkg))}
	if isAggregate(t) {
		rec, ok := b.recordParamType(t, whole, call.Pos(), what)
		if !ok {
			return
		}
		p.Rec = rec
	} else {
		et, ok := b.scalarType(t, call.Pos(), what)
		if !ok {
			return
		}
		p.Elem = et
	}
	b.nshared++
	p.Index = -b.nshared
	node := b.blk.node
	node.Shared = append(node.Shared, p)
	if bytes := node.SharedBytes(); bytes > ir.MaxSharedBytes {
		b.errorf(call.Pos(), "%s takes %d bytes, bringing the block's shared arrays to %d; a block has at most %d (48 KiB)", what, p.SharedBytes(), bytes, ir.MaxSharedBytes)
		return
	}
	b.fr.vars[obj] = &binding{param: p}
}

// perThreadDecl declares a per-thread value obj of type qd.PerThread[T],
// zero in every thread.
func (b *builder) perThreadDecl(obj types.Object, at token.Pos) *perThread {
	b.fr.vars[obj] = &binding{bad: true}
	named, ok := b.subst(obj.Type()).(*types.Named)
	if !ok || named.TypeArgs().Len() != 1 {
		return nil
	}
	t := b.subst(named.TypeArgs().At(0))
	pt := &perThread{t: t}
	what := "per-thread variable " + obj.Name()
	if isAggregate(t) {
		l, ok := b.valueLayout(t, at, what)
		if !ok {
			return nil
		}
		pt.vars = b.declLeaves(obj.Name(), l, val{}, b.at(at))
		b.blk.node.PerThread = append(b.blk.node.PerThread, pt.vars...)
	} else {
		et, ok := b.scalarType(t, at, what)
		if !ok {
			return nil
		}
		pt.v = b.newVar(obj.Name(), et)
		b.emit(&ir.Decl{Pos: b.at(at), Var: pt.v})
		b.blk.node.PerThread = append(b.blk.node.PerThread, pt.v)
	}
	b.fr.vars[obj] = &binding{pt: pt}
	return pt
}

// collectiveOperand resolves the arguments (b, v) of a block collective:
// v must be a per-thread value of a scalar type.
func (b *builder) collectiveOperand(call *ast.CallExpr, qual string) (*ir.Var, bool) {
	if !b.atBlockLevel(call.Pos(), qual) || len(call.Args) != 2 || !b.isBlockVar(call.Args[0]) {
		return nil, false
	}
	id, ok := ast.Unparen(call.Args[1]).(*ast.Ident)
	var bd *binding
	if ok {
		bd = b.lookup(b.info.Uses[id])
	}
	switch {
	case bd != nil && bd.bad:
		return nil, false
	case bd == nil || bd.pt == nil:
		b.errorf(call.Args[1].Pos(), "%s combines a per-thread value (qd.NewPerThread) by its name; %s is not one", qual, shortExpr(call.Args[1]))
		return nil, false
	case bd.pt.v == nil:
		b.errorf(call.Args[1].Pos(), "%s combines numbers; %s holds %s values: combine each field on its own", qual, id.Name, b.fc.typeString(bd.pt.t))
		return nil, false
	case bd.pt.v.Type.IsSmall() || bd.pt.v.Type == ir.Bool:
		b.errorf(call.Args[1].Pos(), "%s combines 32- and 64-bit numbers; %s holds %s", qual, id.Name, b.fc.typeString(bd.pt.t))
		return nil, false
	}
	return bd.pt.v, true
}

// blockReduce translates qd.BlockSum, qd.BlockMin and qd.BlockMax: the
// block's value, in a uniform local.
func (b *builder) blockReduce(call *ast.CallExpr, op ir.BinOp, qual string) []ir.Expr {
	x, ok := b.collectiveOperand(call, qual)
	if !ok {
		return nil
	}
	r := b.newVar("red", x.Type)
	b.emit(&ir.Decl{Pos: b.pos, Var: r})
	b.emit(&ir.BlockReduce{Pos: b.at(call.Pos()), Op: op, X: x, Result: r})
	return []ir.Expr{&ir.VarRef{Var: r}}
}

// blockScan translates obj := qd.BlockExclusiveSum(b, v) (or inclusive).
func (b *builder) blockScan(obj types.Object, call *ast.CallExpr, inclusive bool) {
	b.fr.vars[obj] = &binding{bad: true}
	qual := "qd.BlockExclusiveSum"
	if inclusive {
		qual = "qd.BlockInclusiveSum"
	}
	x, ok := b.collectiveOperand(call, qual)
	if !ok {
		return
	}
	pt := b.perThreadDecl(obj, call.Pos())
	if pt == nil || pt.v == nil {
		return
	}
	b.emit(&ir.BlockScan{Pos: b.at(call.Pos()), Inclusive: inclusive, X: x, Result: pt.v})
}

// perThreadIndex resolves v[t], v a per-thread value: it is ok when x is
// one, and bd the thread's value; an error has been reported when x is
// one but misused (bd nil).
func (b *builder) perThreadIndex(x *ast.IndexExpr) (bd *binding, isPT bool) {
	id, ok := ast.Unparen(x.X).(*ast.Ident)
	if !ok {
		return nil, false
	}
	vb := b.lookup(b.info.Uses[id])
	if vb == nil || vb.pt == nil {
		return nil, false
	}
	if b.blk == nil || b.blk.thread == nil {
		b.errorf(x.Pos(), "per-thread value %s is read or written as %s[t] inside a thread loop (for t := range b.Threads()); outside one, combine the threads' values with qd.BlockSum, qd.BlockMin or qd.BlockMax", id.Name, id.Name)
		return nil, true
	}
	idx := b.expr(x.Index)
	if r, ok := idx.(*ir.VarRef); !ok || r.Var != b.blk.thread {
		b.errorf(x.Index.Pos(), "a thread reaches only its own per-thread value: index %s with the thread loop's variable (%s[t]); to read another thread's value, store it in a qd.Shared array", id.Name, id.Name)
		return nil, true
	}
	return vb.pt.elem(), true
}

// bindingVal is the value a per-thread element binding holds, for reads.
func bindingVal(bd *binding, t types.Type) val {
	if bd.v != nil {
		return scalarVal(t, &ir.VarRef{Var: bd.v})
	}
	return val{t: t, leaves: refs(bd.vars)}
}

// isSharedRoot reports whether e, an indexed expression, is rooted at a
// shared array: such an index reads memory as an array parameter's does,
// although its Go type is a pointer to an array.
func (b *builder) isSharedRoot(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.SelectorExpr:
			e = x.X
		case *ast.Ident:
			bd := b.lookup(b.info.Uses[x])
			return bd != nil && bd.param != nil && bd.param.IsShared()
		default:
			return false
		}
	}
}

// isLocalIndex reports whether indexing x selects an element of a local
// value (and not of a shared array, which is memory).
func (b *builder) isLocalIndex(x ast.Expr) bool {
	return isLocalArray(b.typ(x)) && !b.isSharedRoot(x)
}

// blockRulesHold reports whether the kernel's block loops keep the rules
// of a block body (internal/lower/blocks.go: no store at the block level,
// no thread loop assigning the block's locals, ...), reporting each breach
// as the front end's own error: the front end reports every refusal
// itself, with Go positions, before lowering sees the kernel.
func (b *builder) blockRulesHold() bool {
	_, err := lower.Lower(b.k)
	if err == nil {
		return true
	}
	var each func(error)
	each = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				each(e)
			}
			return
		}
		var e *ir.Error
		if errors.As(err, &e) {
			c := *e
			c.Kernel = b.name
			b.fc.errs.add(&c)
		} else {
			b.fc.errs.add(&ir.Error{Pos: b.k.Pos, Kernel: b.name, Msg: err.Error()})
		}
		b.nerrs++
	}
	each(err)
	return false
}

// blockArg is the binding of a helper's argument that names a block
// loop's value — a shared array, a per-thread value or the block — which
// the helper's parameter then shares (go/types has matched the types), or
// nil for any other argument.
func (b *builder) blockArg(arg ast.Expr) *binding {
	id, ok := ast.Unparen(arg).(*ast.Ident)
	if !ok {
		return nil
	}
	bd := b.lookup(b.info.Uses[id])
	switch {
	case bd == nil:
		return nil
	case bd.param != nil && bd.param.IsShared(), bd.pt != nil, bd.blk != nil:
		return bd
	}
	return nil
}
