package spirv

import "github.com/quadrants-go/qd/internal/ir"

// Statements become SPIR-V's structured control flow: every if is a
// selection construct (OpSelectionMerge), every loop a loop construct
// (OpLoopMerge) with a continue block holding its Post statements. A break
// or continue of the innermost loop branches to its merge or continue
// block. One to an outer loop, which SPIR-V does not allow, stores the
// target in an escape local and breaks out of each loop in between; after
// each of those loops' merge a check continues or breaks the next loop
// out until the target is reached. Statements after a break, continue or
// return in the same list are dead in Go too and are not written, and a
// block no path reaches (the merge of an if whose branches both leave) is
// marked OpUnreachable, as SPIR-V 1.6 requires of such blocks.

// loopCtx is an enclosing loop.
type loopCtx struct {
	stmt        *ir.For // nil for the grid-stride loop of a parallel task
	cont, merge ID
	broken      bool // something branches to merge
	continued   bool // something branches to cont
	escapes     bool // a labelled break or continue leaves through it
}

// Escape codes: 0 is none; loop j's break is 2j+1, its continue 2j+2.
func breakCode(j int) uint64 { return uint64(2*j + 1) }
func contCode(j int) uint64  { return uint64(2*j + 2) }

func (g *gen) stmts(ss []ir.Stmt) {
	for _, s := range ss {
		if g.f.Terminated {
			return // dead code after a break, continue or return
		}
		if s == nil {
			g.fail("missing statement")
		}
		g.pos = s.Position()
		g.stmt(s)
	}
}

func (g *gen) stmt(s ir.Stmt) {
	switch s := s.(type) {
	case *ir.Decl:
		var value ID
		if s.Init != nil {
			value = g.valueFor(s.Var, s.Init)
		} else {
			value = g.zero(s.Var.Type)
		}
		g.set(s.Var, value, true)
	case *ir.Assign:
		g.set(s.Var, g.valueFor(s.Var, s.Value), false)
	case *ir.Store:
		// Go evaluates the index operands before the value.
		ptr, ok := g.element(s.Array, s.Index, s.Leaf)
		t := s.Array.LeafType(s.Leaf)
		if s.Value == nil || s.Value.Type() != t {
			g.fail("store to %s of a value that is not %v", s.Array.Name, t)
		}
		v := g.expr(s.Value)
		g.guarded(ok, func() { g.storeAt(ptr, t, v) })
	case *ir.For:
		g.forStmt(s)
	case *ir.If:
		g.ifStmt(s)
	case *ir.ExprStmt:
		if a, ok := s.X.(*ir.Atomic); ok {
			if red := g.reduced[a]; red != nil {
				g.accumulate(red) // combined (reduce.go)
				return
			}
			g.atomic(a, false)
			return
		}
		g.expr(s.X)
	case *ir.Break:
		g.jump(s.Loop, false)
	case *ir.Continue:
		g.jump(s.Loop, true)
	case *ir.Threads:
		g.threadsLoop(s)
	case *ir.BlockReduce:
		g.blockReduce(s)
	case *ir.BlockScan:
		g.blockScan(s)
	default:
		g.fail("statement %T cannot appear inside a task", s)
	}
}

func (g *gen) valueFor(v *ir.Var, e ir.Expr) ID {
	if e == nil || e.Type() != v.Type {
		g.fail("local %s of type %v set to a value of another type", v.Name, v.Type)
	}
	return g.expr(e)
}

// ifThen writes `if cond { then }`.
func (g *gen) ifThen(cond ID, then func()) {
	f := g.f
	merge, thenL := g.m.ID(), g.m.ID()
	f.Void(OpSelectionMerge, merge, SelectionControlNone)
	f.BranchIf(cond, thenL, merge)
	f.Label(thenL)
	then()
	if !f.Terminated {
		f.Branch(merge)
	}
	f.Label(merge)
}

// ifElse writes `if cond { then } else { els }`.
func (g *gen) ifElse(cond ID, then, els func()) {
	f := g.f
	merge, thenL, elseL := g.m.ID(), g.m.ID(), g.m.ID()
	f.Void(OpSelectionMerge, merge, SelectionControlNone)
	f.BranchIf(cond, thenL, elseL)
	reached := false
	for _, b := range []struct {
		label ID
		write func()
	}{{thenL, then}, {elseL, els}} {
		f.Label(b.label)
		b.write()
		if !f.Terminated {
			f.Branch(merge)
			reached = true
		}
	}
	f.Label(merge)
	if !reached {
		f.Void(OpUnreachable)
		f.Terminated = true
	}
}

func (g *gen) ifStmt(s *ir.If) {
	if s.Cond == nil || s.Cond.Type() != ir.Bool {
		g.fail("if condition is not a bool")
	}
	c := g.expr(s.Cond)
	if len(s.Else) == 0 {
		g.ifThen(c, func() { g.stmts(s.Then) })
		return
	}
	g.ifElse(c, func() { g.stmts(s.Then) }, func() { g.stmts(s.Else) })
}

func (g *gen) forStmt(s *ir.For) {
	g.stmts(s.Init)
	if g.f.Terminated {
		return
	}
	g.pos = s.Pos
	var cond func() ID
	if s.Cond != nil {
		if s.Cond.Type() != ir.Bool {
			g.fail("loop condition is not a bool")
		}
		cond = func() ID { return g.expr(s.Cond) }
	}
	g.loop(s, cond, func() { g.stmts(s.Body) }, func() { g.stmts(s.Post) })
}

// loop writes a loop construct: the header, the condition (nil: none),
// the body, the continue block with post, the back edge, and the merge.
func (g *gen) loop(s *ir.For, cond func() ID, body, post func()) {
	f, m := g.f, g.m
	header, condL, bodyL := m.ID(), m.ID(), m.ID()
	l := &loopCtx{stmt: s, cont: m.ID(), merge: m.ID()}
	f.Branch(header)
	f.Label(header)
	f.Void(OpLoopMerge, l.merge, l.cont, LoopControlNone)
	f.Branch(condL)
	f.Label(condL)
	if cond != nil {
		f.BranchIf(cond(), bodyL, l.merge)
		l.broken = true
	} else {
		f.Branch(bodyL)
	}
	f.Label(bodyL)
	g.loops = append(g.loops, l)
	body()
	g.loops = g.loops[:len(g.loops)-1]
	if !f.Terminated {
		f.Branch(l.cont)
		l.continued = true
	}
	f.Label(l.cont)
	if l.continued {
		post()
	}
	if !f.Terminated {
		f.Branch(header)
	}
	f.Label(l.merge)
	if !l.broken {
		f.Void(OpUnreachable) // an endless loop: nothing follows it
		f.Terminated = true
		return
	}
	if l.escapes {
		g.escapeCheck()
	}
}

// jump writes a break (or continue) of loop target, nil meaning the
// innermost serial loop.
func (g *gen) jump(target *ir.For, isContinue bool) {
	what := "break"
	if isContinue {
		what = "continue"
	}
	j := -1
	for i := len(g.loops) - 1; i >= 0; i-- {
		if g.loops[i].stmt != nil && (target == nil || g.loops[i].stmt == target) {
			j = i
			break
		}
	}
	if j < 0 {
		g.fail("%s outside a serial loop, or to a loop that does not enclose it", what)
	}
	inner := g.loops[len(g.loops)-1]
	if j == len(g.loops)-1 {
		if isContinue {
			inner.continued = true
			g.f.Branch(inner.cont)
		} else {
			inner.broken = true
			g.f.Branch(inner.merge)
		}
		return
	}
	// Through the escape local: break out of every loop inside the target.
	code := breakCode(j)
	if isContinue {
		code = contCode(j)
	}
	if g.escape == 0 {
		// Zero from the function's start, before any loop.
		g.escape = g.f.VarInit(g.m.Int(32), g.m.ConstInt(32, 0))
		g.m.Name(g.escape, "escape")
	}
	g.f.Void(OpStore, g.escape, g.m.ConstInt(32, code))
	for k := j + 1; k < len(g.loops); k++ {
		g.loops[k].escapes = true
		g.loops[k].broken = true
	}
	g.f.Branch(inner.merge)
}

// escapeCheck follows the merge of a loop a labelled jump left through:
// the enclosing loop p continues if the jump targets its continue, and
// breaks otherwise (clearing the escape if the jump targets its break;
// leaving it set, to be checked again after p, if it targets a loop
// further out).
func (g *gen) escapeCheck() {
	f, m := g.f, g.m
	p := len(g.loops) - 1
	outer := g.loops[p]
	u32, b := m.Int(32), m.Bool()
	e := f.Op(OpLoad, u32, g.escape)
	g.ifThen(f.Op(OpINotEqual, b, e, m.ConstInt(32, 0)), func() {
		g.ifThen(f.Op(OpIEqual, b, e, m.ConstInt(32, contCode(p))), func() {
			f.Void(OpStore, g.escape, m.ConstInt(32, 0))
			outer.continued = true
			f.Branch(outer.cont)
		})
		g.ifThen(f.Op(OpIEqual, b, e, m.ConstInt(32, breakCode(p))), func() {
			f.Void(OpStore, g.escape, m.ConstInt(32, 0))
		})
		outer.broken = true
		f.Branch(outer.merge)
	})
}

// guarded writes access under ok (0: unchecked): skipped when an index is
// out of range.
func (g *gen) guarded(ok ID, access func()) {
	if ok == 0 {
		access()
		return
	}
	g.ifThen(ok, access)
}
