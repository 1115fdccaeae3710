package frontend

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// stmtList translates a list of statements. tail says that control leaves
// the function (or qd.Serial's function literal) right after the list: a
// return there needs no jump, and in a helper or a literal "if c { ...;
// return }; rest" becomes "if c { ...; return } else { rest }", so that its
// returns stay at the tail.
func (b *builder) stmtList(list []ast.Stmt, tail bool) {
	for i := 0; i < len(list); i++ {
		s := list[i]
		last := i == len(list)-1
		if tail && !last && (!b.fr.isKernel || b.fr.inLit > 0) {
			if ifs, ok := s.(*ast.IfStmt); ok && ifTerminates(ifs) {
				b.ifStmt(ifs, list[i+1:], true)
				return
			}
		}
		if b.isLoopConfig(s) {
			b.loopConfig(s.(*ast.ExprStmt).X.(*ast.CallExpr), last)
			continue
		}
		b.stmt(s, tail && last)
		if b.blockDimPos.IsValid() {
			b.errorf(b.blockDimPos, "qd.LoopConfig must be immediately followed by a parallel loop (for i := range n, or over qd.NDRange) at the top level of the kernel")
			b.blockDimPos = token.NoPos
		}
	}
}

// terminates reports whether s always ends in a return.
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminates(s.List[len(s.List)-1])
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Body) && terminates(s.Else)
	case *ast.LabeledStmt:
		return terminates(s.Stmt)
	}
	return false
}

// ifTerminates reports whether one branch of s always returns, so that the
// statements after s can move into the other branch.
func ifTerminates(s *ast.IfStmt) bool {
	return terminates(s.Body) || s.Else != nil && terminates(s.Else)
}

// elseList returns the statements of the else branch of s.
func elseList(s *ast.IfStmt) []ast.Stmt {
	switch e := s.Else.(type) {
	case *ast.BlockStmt:
		return e.List
	case *ast.IfStmt:
		return []ast.Stmt{e}
	}
	return nil
}

// splitIfRest returns the branches of s with rest, the statements after it,
// moved into the branch that does not always return.
func splitIfRest(s *ast.IfStmt, rest []ast.Stmt) (then, els []ast.Stmt) {
	then, els = s.Body.List, elseList(s)
	switch {
	case len(rest) == 0:
	case terminates(s.Body) && s.Else != nil && terminates(s.Else):
		// rest is unreachable.
	case terminates(s.Body):
		els = append(append([]ast.Stmt(nil), els...), rest...)
	default:
		then = append(append([]ast.Stmt(nil), then...), rest...)
	}
	return then, els
}

// earlyReturn reports whether translating list with the given tail flag
// emits a return that is not at the tail, and so needs the helper's one-trip
// wrapper loop. It mirrors stmtList.
func earlyReturn(list []ast.Stmt, tail bool) bool {
	for i, s := range list {
		last := i == len(list)-1
		if tail && !last {
			if ifs, ok := s.(*ast.IfStmt); ok && ifTerminates(ifs) {
				then, els := splitIfRest(ifs, list[i+1:])
				return earlyReturn(then, true) || earlyReturn(els, true)
			}
		}
		if stmtEarlyReturn(s, tail && last) {
			return true
		}
	}
	return false
}

func stmtEarlyReturn(s ast.Stmt, tail bool) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return !tail
	case *ast.BlockStmt:
		return earlyReturn(s.List, tail)
	case *ast.LabeledStmt:
		return stmtEarlyReturn(s.Stmt, tail)
	case *ast.IfStmt:
		return earlyReturn(s.Body.List, tail) || earlyReturn(elseList(s), tail)
	case *ast.SwitchStmt:
		for _, c := range s.Body.List {
			if cc, ok := c.(*ast.CaseClause); ok && earlyReturn(cc.Body, tail) {
				return true
			}
		}
		return false
	}
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.ReturnStmt:
			found = true
		case *ast.FuncLit:
			return false
		}
		return !found
	})
	return found
}

// stmt translates one statement.
func (b *builder) stmt(s ast.Stmt, tail bool) {
	b.nstmts++
	if b.nstmts > maxStmts {
		if b.nstmts == maxStmts+1 {
			b.errorf(s.Pos(), "kernel is too large once helpers are inlined (more than %d statements)", maxStmts)
		}
		return
	}
	savedPos := b.pos
	b.pos = b.at(s.Pos())
	defer func() { b.pos = savedPos }()
	switch s := s.(type) {
	case *ast.ExprStmt:
		b.exprStmt(s)
	case *ast.AssignStmt:
		b.assignStmt(s)
	case *ast.IncDecStmt:
		op := token.ADD_ASSIGN
		if s.Tok == token.DEC {
			op = token.SUB_ASSIGN
		}
		b.opAssign(s.X, op, nil, s.Pos())
	case *ast.DeclStmt:
		b.declStmt(s)
	case *ast.IfStmt:
		b.ifStmt(s, nil, tail)
	case *ast.ForStmt:
		b.forStmt(s, nil)
	case *ast.RangeStmt:
		b.rangeStmt(s, nil)
	case *ast.SwitchStmt:
		b.switchStmt(s, nil, tail)
	case *ast.LabeledStmt:
		label, _ := b.info.Defs[s.Label].(*types.Label)
		switch t := s.Stmt.(type) {
		case *ast.ForStmt:
			b.forStmt(t, label)
		case *ast.RangeStmt:
			b.rangeStmt(t, label)
		case *ast.SwitchStmt:
			b.switchStmt(t, label, tail)
		default:
			// Only goto can target such a label, and goto is reported.
			b.stmt(s.Stmt, tail)
		}
	case *ast.BranchStmt:
		b.branchStmt(s)
	case *ast.ReturnStmt:
		b.returnStmt(s, tail)
	case *ast.BlockStmt:
		b.stmtList(s.List, tail)
	case *ast.EmptyStmt:
	case *ast.GoStmt:
		b.errorf(s.Pos(), "go statements are not supported in kernels; parallelism comes from top-level range loops and qd.StreamParallel")
	case *ast.DeferStmt:
		b.errorf(s.Pos(), "defer is not supported in kernels")
	case *ast.SelectStmt:
		b.errorf(s.Pos(), "select is not supported in kernels (channels are not supported)")
	case *ast.SendStmt:
		b.errorf(s.Pos(), "channel sends are not supported in kernels")
	case *ast.TypeSwitchStmt:
		b.errorf(s.Pos(), "type switches are not supported in kernels (interfaces are not supported); use an expression switch")
	default:
		b.errorf(s.Pos(), "this statement is not supported in kernels")
	}
}

// exprStmt translates a call used as a statement.
func (b *builder) exprStmt(s *ast.ExprStmt) {
	call, ok := ast.Unparen(s.X).(*ast.CallExpr)
	if !ok {
		if u, ok := ast.Unparen(s.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			b.errorf(s.Pos(), "channel receives are not supported in kernels")
			return
		}
		b.errorf(s.Pos(), "this expression statement is not supported in kernels")
		return
	}
	switch b.apiOf(call.Fun).kind {
	case apiStreamParallel:
		b.streamParallel(call)
		return
	case apiSerial:
		b.serialBlock(call)
		return
	case apiLoopConfig:
		b.errorf(call.Pos(), "qd.LoopConfig must be a statement at the top level of the kernel (or of a qd.StreamParallel block), immediately before a parallel loop")
		return
	}
	for _, v := range b.callVals(call) {
		b.discardVal(v)
	}
}

// discard drops a value computed only for its effects: an atomic's old value.
func (b *builder) discard(v ir.Expr) {
	if a, ok := v.(*ir.Atomic); ok {
		b.emit(&ir.ExprStmt{Pos: b.pos, X: a})
		return
	}
	if hasAtomic(v) {
		b.spill(v)
	}
}

// streamParallel translates qd.StreamParallel(func() { ... }).
func (b *builder) streamParallel(call *ast.CallExpr) {
	switch {
	case !b.fr.isKernel:
		if b.fc.kernels[b.fr.fn] {
			b.errorf(call.Pos(), "qd.StreamParallel can only be used in the //qd:kernel function being compiled, not in %s, which it calls as a helper", b.fr.name)
		} else {
			b.errorf(call.Pos(), "qd.StreamParallel can only be used in a //qd:kernel function, not in helper %s", b.fr.name)
		}
		return
	case b.inSP:
		b.errorf(call.Pos(), "qd.StreamParallel blocks cannot be nested; make the inner block a separate top-level qd.StreamParallel block")
		return
	case b.inPar:
		b.errorf(call.Pos(), "qd.StreamParallel cannot be used inside a parallel loop; it must be a top-level statement of the kernel")
		return
	case b.serialIn == inSerial:
		b.errorf(call.Pos(), "qd.StreamParallel cannot be used inside qd.Serial; it must be a top-level statement of the kernel")
		return
	case !b.top:
		b.errorf(call.Pos(), "qd.StreamParallel must be a top-level statement of the kernel, not inside if, for or switch")
		return
	}
	if len(call.Args) != 1 {
		return // a type error already
	}
	lit, ok := ast.Unparen(call.Args[0]).(*ast.FuncLit)
	if !ok {
		b.errorf(call.Args[0].Pos(), "the argument of qd.StreamParallel must be a function literal: qd.StreamParallel(func() { ... })")
		return
	}
	node := &ir.StreamParallel{Pos: b.pos}
	b.emit(node)
	b.inSP = true
	b.into(&node.Body, func() { b.stmtList(lit.Body.List, true) })
	b.inSP = false
}

// isLoopConfig reports whether s is a qd.LoopConfig call statement.
func (b *builder) isLoopConfig(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	return ok && b.apiOf(call.Fun).kind == apiLoopConfig
}

// loopConfig records qd.LoopConfig(qd.BlockDim(n)) for the parallel loop
// that must follow.
func (b *builder) loopConfig(call *ast.CallExpr, last bool) {
	if !b.top || !b.fr.isKernel {
		b.errorf(call.Pos(), "qd.LoopConfig must be a statement at the top level of the kernel (or of a qd.StreamParallel block), immediately before a parallel loop")
		return
	}
	if last {
		b.errorf(call.Pos(), "qd.LoopConfig must be immediately followed by a parallel loop (for i := range n, or over qd.NDRange) at the top level of the kernel")
		return
	}
	if call.Ellipsis.IsValid() {
		b.errorf(call.Pos(), "qd.LoopConfig takes qd.BlockDim(n) options written out, not a slice")
		return
	}
	dim := 0
	for _, a := range call.Args {
		opt, ok := ast.Unparen(a).(*ast.CallExpr)
		if !ok || b.apiOf(opt.Fun).kind != apiBlockDim || len(opt.Args) != 1 {
			b.errorf(a.Pos(), "the options of qd.LoopConfig must be qd.BlockDim(n) calls")
			continue
		}
		n, ok := b.intConst(opt.Args[0])
		if !ok || n < 1 || n > 1024 {
			b.errorf(opt.Args[0].Pos(), "qd.BlockDim needs a constant between 1 and 1024")
			continue
		}
		dim = int(n)
	}
	b.blockDim, b.blockDimPos = dim, call.Pos()
}

// ifStmt translates an if statement; rest, when not nil, are the statements
// after it, moved into the branch that does not return (see stmtList).
func (b *builder) ifStmt(s *ast.IfStmt, rest []ast.Stmt, tail bool) {
	if s.Init != nil {
		b.stmt(s.Init, false)
	}
	c := b.cond(s.Cond)
	then, els := s.Body.List, elseList(s)
	thenIn, elseIn := inIf, inIf
	if rest != nil {
		then, els = splitIfRest(s, rest)
		// What follows an early return runs in a branch: a range loop
		// there is refused for the return, which the user wrote, rather
		// than for an if the translation made.
		if terminates(s.Body) {
			elseIn = inEarlyReturn
		} else {
			thenIn = inEarlyReturn
		}
	}
	if k, ok := c.(*ir.Const); ok && k.T == ir.Bool && b.info.Types[s.Cond].Value == nil {
		// A condition that is constant only once translated (T(1+1e-10)
		// == 1 for float32, a test of an unrolled loop's variable): only
		// the branch it takes is translated.
		var taken []ir.Stmt
		branch, in := then, thenIn
		if k.Bits == 0 {
			branch, in = els, elseIn
		}
		b.nested(in, &taken, func() { b.stmtList(branch, tail) })
		*b.block = append(*b.block, taken...)
		return
	}
	node := &ir.If{Pos: b.at(s.Pos()), Cond: c}
	b.emit(node)
	b.nested(thenIn, &node.Then, func() { b.stmtList(then, tail) })
	if len(els) > 0 {
		b.nested(elseIn, &node.Else, func() { b.stmtList(els, tail) })
	}
}

// cond translates a boolean condition.
func (b *builder) cond(e ast.Expr) ir.Expr {
	c := b.expr(e)
	if c.Type() != ir.Bool && c.Type() != ir.Invalid {
		b.errorf(e.Pos(), "condition must be a bool")
	}
	return c
}

// switchStmt translates an expression switch to an if/else chain, inside a
// one-trip loop when a break leaves the switch. A switch with fallthrough
// takes fallthroughSwitch's form instead.
func (b *builder) switchStmt(s *ast.SwitchStmt, label *types.Label, tail bool) {
	if s.Init != nil {
		b.stmt(s.Init, false)
	}
	// match tests one case expression: against the tag, which is read
	// once, or as a condition when there is no tag.
	match := b.cond
	switch {
	case s.Tag != nil && isAggregate(b.typ(s.Tag)):
		tv := b.value(s.Tag)
		if l, _ := b.fc.layoutOf(tv.t); l != nil && !tv.bad() {
			tv = val{t: tv.t, leaves: refs(b.declLeaves("tag", l, tv, b.pos))}
		}
		match = func(e ast.Expr) ir.Expr { return b.valEqual(tv, b.value(e), false, e.Pos()) }
	case s.Tag != nil:
		tag := b.expr(s.Tag)
		if !isSimple(tag) {
			tag = b.spill(tag)
		}
		match = func(e ast.Expr) ir.Expr { return arith(ir.Eq, tag, b.convertTo(tag.Type(), b.expr(e))) }
	}
	var clauses []*ast.CaseClause
	def := -1
	falls := false
	for _, c := range s.Body.List {
		cc, ok := c.(*ast.CaseClause)
		if !ok {
			continue
		}
		if cc.List == nil {
			def = len(clauses)
		}
		falls = falls || fallsThrough(cc)
		clauses = append(clauses, cc)
	}
	wrap := &ir.For{Pos: b.at(s.Pos())}
	t := &target{label: label, brk: wrap}
	b.fr.targets = append(b.fr.targets, t)
	var body []ir.Stmt
	b.nested(inSwitch, &body, func() {
		if falls {
			b.fallthroughSwitch(clauses, def, match, tail)
			return
		}
		b.caseChain(clauses, 0, def, match, func(i int) { b.stmtList(clauses[i].Body, tail) })
	})
	b.fr.targets = b.fr.targets[:len(b.fr.targets)-1]
	if !t.used {
		*b.block = append(*b.block, body...)
		return
	}
	wrap.Body = append(body, &ir.Break{Pos: wrap.Pos, Loop: wrap})
	b.emit(wrap)
}

// caseChain emits the if/else chain that tests the non-default clauses from
// index i on, in order, and ends in the default clause (index def, or -1
// for none); arm(j) emits what runs when clause j is chosen.
func (b *builder) caseChain(clauses []*ast.CaseClause, i, def int, match func(ast.Expr) ir.Expr, arm func(j int)) {
	if i == def {
		i++
	}
	if i == len(clauses) {
		if def >= 0 {
			arm(def)
		}
		return
	}
	c := clauses[i]
	var cond ir.Expr
	for _, e := range c.List {
		one := func() ir.Expr {
			return match(e)
		}
		if cond == nil {
			cond = one()
		} else {
			cond = b.logical(ir.LOr, cond, one)
		}
	}
	node := &ir.If{Pos: b.at(c.Pos()), Cond: cond}
	b.emit(node)
	b.into(&node.Then, func() { arm(i) })
	var els []ir.Stmt
	b.into(&els, func() { b.caseChain(clauses, i+1, def, match, arm) })
	node.Else = els
}

// fallthroughSwitch translates a switch in which some clause falls
// through. The if/else chain only records which clause was chosen, in a
// local; then each clause's statements run, in source order, when the
// chosen clause is that clause or one that falls through to it: clause j
// of a run of clauses s..j, each falling through to the next, runs when
// s ≤ chosen ≤ j. Each clause is translated once. Copying the clauses a
// case falls into, into its arm, made n clauses that each fall through
// n²/2 statements: the statement limit stopped 700 of them.
func (b *builder) fallthroughSwitch(clauses []*ast.CaseClause, def int, match func(ast.Expr) ir.Expr, tail bool) {
	chosen := b.decl("clause", ir.I32c(-1))
	b.caseChain(clauses, 0, def, match, func(j int) {
		b.emit(&ir.Assign{Pos: b.pos, Var: chosen, Value: ir.I32c(int32(j))})
	})
	runStart := 0
	for j, c := range clauses {
		is := func(op ir.BinOp, k int) ir.Expr { return ir.NewBinary(op, ir.Ref(chosen), ir.I32c(int32(k))) }
		cond := is(ir.Eq, j)
		if runStart < j {
			cond = ir.NewBinary(ir.LAnd, is(ir.Ge, runStart), is(ir.Le, j))
		}
		node := &ir.If{Pos: b.at(c.Pos()), Cond: cond}
		b.emit(node)
		body := c.Body
		if fallsThrough(c) {
			body = body[:len(body)-1]
		} else {
			runStart = j + 1
		}
		// Clause j's statements are at the tail when the switch is: the
		// tests of the clauses after it are false once it does not fall
		// through.
		b.into(&node.Then, func() { b.stmtList(body, tail) })
	}
}

// fallsThrough reports whether clause c ends in fallthrough.
func fallsThrough(c *ast.CaseClause) bool {
	if len(c.Body) == 0 {
		return false
	}
	br, ok := c.Body[len(c.Body)-1].(*ast.BranchStmt)
	return ok && br.Tok == token.FALLTHROUGH
}

// findTarget returns the statement a break (loop false) or continue (loop
// true) leaves.
func (b *builder) findTarget(label *ast.Ident, loop bool) *target {
	var obj *types.Label
	if label != nil {
		obj, _ = b.info.Uses[label].(*types.Label)
	}
	ts := b.fr.targets
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if obj != nil {
			if t.label == obj {
				return t
			}
			continue
		}
		if !loop || t.loop {
			return t
		}
	}
	return nil
}

func (b *builder) branchStmt(s *ast.BranchStmt) {
	switch s.Tok {
	case token.GOTO:
		b.errorf(s.Pos(), "goto is not supported in kernels; use labelled break or continue")
	case token.FALLTHROUGH:
		b.errorf(s.Pos(), "fallthrough is only supported as the last statement of a switch case")
	case token.BREAK:
		t := b.findTarget(s.Label, false)
		if t == nil {
			b.errorf(s.Pos(), "break outside a loop or switch")
			return
		}
		if t.parallel {
			b.errorf(s.Pos(), "break cannot leave a parallel loop, whose iterations run concurrently; use continue to skip an iteration, or a serial loop (for i := 0; i < n; i++)")
			return
		}
		t.used, t.usedBrk = true, true
		b.emit(&ir.Break{Pos: b.pos, Loop: t.brk})
	case token.CONTINUE:
		t := b.findTarget(s.Label, true)
		if t == nil {
			b.errorf(s.Pos(), "continue outside a loop")
			return
		}
		if t.contBrk != nil {
			t.used, t.usedCont = true, true
			b.emit(&ir.Break{Pos: b.pos, Loop: t.contBrk})
			return
		}
		b.emit(&ir.Continue{Pos: b.pos, Loop: t.cont})
	}
}

// returnStmt translates a return: in a helper it sets the result locals and,
// unless at the tail, leaves the helper's one-trip wrapper.
func (b *builder) returnStmt(s *ast.ReturnStmt, tail bool) {
	if b.fr.inLit > 0 {
		// It returns from qd.Serial's literal (which has no results).
		if !tail {
			b.errorf(s.Pos(), "return inside qd.Serial is only supported where it ends the function literal (its last statement, or an if whose other branch holds the rest); use if/else to skip work, or break to leave a loop")
		}
		return
	}
	if b.fr.isKernel {
		switch {
		case len(s.Results) > 0:
			b.errorf(s.Pos(), "kernels cannot return values; write results to an array parameter")
		case tail:
		case b.inPar:
			b.errorf(s.Pos(), "return inside a parallel loop is not supported (iterations run concurrently); use continue to skip the rest of an iteration")
		case b.inSP:
			b.errorf(s.Pos(), "return inside a qd.StreamParallel block is only supported as its last statement; use if/else to skip work")
		default:
			b.errorf(s.Pos(), "return is only supported as the last statement of a kernel; use if/else to skip work")
		}
		return
	}
	var vals []val
	if len(s.Results) == 1 && len(b.fr.results) > 1 {
		if call, ok := ast.Unparen(s.Results[0]).(*ast.CallExpr); ok {
			vals = b.callVals(call)
		}
	} else if len(s.Results) > 0 {
		vals = b.valList(s.Results)
	}
	if len(vals) == len(b.fr.results) && len(vals) > 0 {
		b.assignResults(b.fr.results, vals)
	}
	if !tail {
		b.fr.retUsed = true
		b.emit(&ir.Break{Pos: b.pos, Loop: b.fr.retFor})
	}
}
