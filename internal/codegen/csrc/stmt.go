package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

// stmts writes a block's statements, each with its position for errors.
func (f *fn) stmts(ss []ir.Stmt) {
	for _, s := range ss {
		if s == nil {
			f.fail("missing statement")
		}
		f.pos = s.Position()
		f.stmt(s)
	}
}

func (f *fn) stmt(s ir.Stmt) {
	switch s := s.(type) {
	case *ir.Decl:
		value := literal(s.Var.Type, 0)
		if s.Init != nil {
			value = f.valueFor(s.Var, s.Init)
		}
		f.set(s.Var, value, true)
	case *ir.Assign:
		f.set(s.Var, f.valueFor(s.Var, s.Value), false)
	case *ir.Store:
		// Go evaluates the index operands before the value.
		elem, ok := f.checked(s.Array, s.Index, s.Leaf)
		t := s.Array.LeafType(s.Leaf)
		if s.Value == nil || s.Value.Type() != t {
			f.fail("store to %s of a value that is not %v", s.Array.Name, t)
		}
		v := f.expr(s.Value)
		if t == ir.Bool {
			v += " ? 1 : 0"
		}
		f.guarded(ok, func() { f.line("%s = %s;", elem, v) })
	case *ir.For:
		f.forStmt(s)
	case *ir.If:
		f.ifStmt(s)
	case *ir.ExprStmt:
		// An atomic whose old value is unused takes the reduction form,
		// or is combined with the block's (reduce.go).
		a, ok := s.X.(*ir.Atomic)
		switch {
		case !ok:
			f.expr(s.X)
		case f.reduced[a] != nil:
			f.accumulate(f.reduced[a])
		default:
			f.atomic(a, false)
		}
	case *ir.Break:
		f.line("goto %s;", f.target(s.Loop, "break").brk)
	case *ir.Continue:
		// A continue of the parallel loop itself is not valid IR (the
		// verifier rejects it), so every continue has a serial loop.
		f.line("goto %s;", f.target(s.Loop, "continue").cont)
	case *ir.Threads:
		f.threadLoop(s)
	case *ir.BlockReduce:
		f.blockReduce(s)
	case *ir.BlockScan:
		f.blockScan(s)
	default:
		// ParallelFor, Blocks and StreamParallel included: lowering
		// leaves them only at the top level, as tasks.
		f.fail("statement %T cannot appear inside a task", s)
	}
}

// valueFor evaluates e, which is being stored in local v and must have
// its type.
func (f *fn) valueFor(v *ir.Var, e ir.Expr) string {
	if e == nil || e.Type() != v.Type {
		f.fail("local %s of type %v set to a value of another type", v.Name, v.Type)
	}
	return f.expr(e)
}

// target finds the loop a break or continue goes to: l, or the innermost
// serial loop when l is nil.
func (f *fn) target(l *ir.For, what string) loop {
	for i := len(f.loops) - 1; i >= 0; i-- {
		if l == nil || f.loops[i].stmt == l {
			return f.loops[i]
		}
	}
	if len(f.loops) == 0 {
		f.fail("%s outside a serial loop", what)
	}
	f.fail("%s to a loop that does not enclose it", what)
	return loop{}
}

func (f *fn) ifStmt(s *ir.If) {
	if soleIf(s.Else) != nil {
		f.ifChain(s)
		return
	}
	f.line("if (%s) {", f.cond(s))
	f.block(s.Then)
	if len(s.Else) > 0 {
		f.line("} else {")
		f.block(s.Else)
	}
	f.line("}")
}

// ifChain writes an if whose else is another if, and so on (what a switch
// becomes), on one level: each branch ends by jumping past the chain, and
// the next condition's statements follow at the same depth.
//
//	if (c1) {
//		A
//		goto end;
//	}
//	(statements computing c2)
//	if (c2) {
//		B
//		goto end;
//	}
//	D
//	end:;
//
// This runs exactly what if (c1) {A} else { if (c2) {B} else {D} } runs,
// with the same control flow graph. Nested, a chain of n cases was
// indented and braced n deep: quadratic in size (10,000 cases made 250 MB
// of C), and past 256 cases clang refuses it ("bracket nesting level
// exceeded"). "else if" cannot keep it flat, since each condition takes
// statements of its own before the if.
func (f *fn) ifChain(s *ir.If) {
	end := f.newLabel()
	for s != nil {
		f.pos = s.Pos
		f.line("if (%s) {", f.cond(s))
		f.block(s.Then)
		f.line("\tgoto %s;", end)
		f.line("}")
		next := soleIf(s.Else)
		if next == nil {
			f.stmts(s.Else)
		}
		s = next
	}
	f.label(end)
}

// soleIf returns the if that is all of else, or nil.
func soleIf(els []ir.Stmt) *ir.If {
	if len(els) != 1 {
		return nil
	}
	s, _ := els[0].(*ir.If)
	return s
}

// cond evaluates s's condition.
func (f *fn) cond(s *ir.If) string {
	if s.Cond == nil || s.Cond.Type() != ir.Bool {
		f.fail("if condition is not a bool")
	}
	return f.expr(s.Cond)
}

func (f *fn) block(ss []ir.Stmt) {
	f.indent++
	f.stmts(ss)
	f.indent--
}

// forStmt writes a serial loop; break and continue are gotos to its labels
// (C's own would not reach an outer loop, and continue must run Post):
//
//	init
//	for (;;) {
//		if (!cond) goto brk;
//		body
//	cont:	post
//	}
//	brk:
func (f *fn) forStmt(s *ir.For) {
	f.stmts(s.Init)
	f.pos = s.Pos
	l := loop{stmt: s, cont: f.newLabel(), brk: f.newLabel()}
	f.line("for (;;) {")
	f.indent++
	if s.Cond != nil {
		if s.Cond.Type() != ir.Bool {
			f.fail("loop condition is not a bool")
		}
		f.line("if (!%s)", f.expr(s.Cond))
		f.line("\tgoto %s;", l.brk)
	}
	f.loops = append(f.loops, l)
	f.stmts(s.Body)
	f.loops = f.loops[:len(f.loops)-1]
	f.label(l.cont)
	f.stmts(s.Post)
	f.indent--
	f.line("}")
	f.label(l.brk)
}

// atomic writes an atomic read-modify-write of an array element and
// returns the old value (want), or writes the reduction form where there is
// one (the old value unused). The prelude's primitives are relaxed, at
// device scope, as PTX's atom; a block's shared arrays have their own
// (blockprims.go). Signed integers use the unsigned primitives
// (the same bits) except for min and max; float add is the hardware's (or
// the compiler's compare-and-swap loop), float min and max are the
// prelude's compare-and-swap loops with Go's min and max. Exchange and
// compare-and-swap work on the bits, so a float NaN can match itself. Bool
// arrays (bytes) have no atomics.
func (f *fn) atomic(e *ir.Atomic, want bool) string {
	t := e.Type()
	switch {
	case !t.IsNumeric() || t.IsSmall():
		f.fail("atomic %v on %s, an array of %v: atomics need numeric elements", e.Op, e.Array.Name, t)
	case e.Value == nil || e.Value.Type() != t:
		f.fail("atomic %v on %s, an array of %v, needs a %v value", e.Op, e.Array.Name, t, t)
	}
	elem, ok := f.checked(e.Array, e.Index, e.Leaf)
	return f.guardedAtomic(e, "&"+elem, ok, f.expr(e.Value), want)
}

// atomicOf writes the atomic of e with the value v, computed already (a
// reduction's combined value).
func (f *fn) atomicOf(e *ir.Atomic, v string, want bool) string {
	elem, ok := f.checked(e.Array, e.Index, e.Leaf)
	return f.guardedAtomic(e, "&"+elem, ok, v, want)
}

// guardedAtomic is atomicAt under ok (when not ""): skipped, with a zero
// result, when an index is out of range.
func (f *fn) guardedAtomic(e *ir.Atomic, ptr, ok, v string, want bool) string {
	if ok == "" {
		return f.atomicAt(e, ptr, v, want)
	}
	r := ""
	if want {
		r = f.tmp(e.Type(), "%s", literal(e.Type(), 0))
	}
	f.guarded(ok, func() {
		if x := f.atomicAt(e, ptr, v, want); want {
			f.line("%s = %s;", r, x)
		}
	})
	return r
}

// atomicAt writes the atomic of e on the element ptr points at.
func (f *fn) atomicAt(e *ir.Atomic, ptr, v string, want bool) string {
	t := e.Type()
	ct, bits := cType(t), "u"+fmt.Sprint(t.Bits())
	ubits := cTypes[bits]
	atomic, red := "qd_atomic", "qd_red"
	if e.Array.IsShared() {
		atomic, red = "qd_satomic", "qd_sred" // blockprims.go
		f.useBlockVendor()
	}
	// call applies primitive op of type ty to the element, with the value
	// and result converted between t and ty by the given C expressions.
	call := func(op, ty, in, out string, args ...string) string {
		p := ptr
		if ty != t.String() {
			p = fmt.Sprintf("(%s *)%s", cTypes[ty], ptr)
		}
		list := p
		for _, a := range args {
			list += ", " + fmt.Sprintf(in, a)
		}
		if !want && op != "exch" && op != "cas" && !(t.IsFloat() && (op == "min" || op == "max")) {
			f.line("%s_%s_%s(%s);", red, op, ty, list)
			return ""
		}
		return f.tmp(t, out, fmt.Sprintf("%s_%s_%s(%s)", atomic, op, ty, list))
	}
	plain := "(" + ct + ")%s"
	switch e.Op {
	case ir.AtomicAdd, ir.AtomicSub:
		if e.Op == ir.AtomicSub {
			if t.IsFloat() {
				v = f.tmp(t, "-%s", v)
			} else {
				v = f.tmp(t, "(%s)((%s)0 - (%s)%s)", ct, ubits, ubits, v)
			}
		}
		if t.IsFloat() {
			return call("add", t.String(), "%s", "%s", v)
		}
		return call("add", bits, "("+ubits+")%s", plain, v)
	case ir.AtomicMin, ir.AtomicMax:
		return call(e.Op.String(), t.String(), "%s", "%s", v)
	case ir.AtomicAnd, ir.AtomicOr, ir.AtomicXor:
		if !t.IsInteger() {
			f.fail("atomic %v on %v: bitwise atomics take integers", e.Op, t)
		}
		return call(e.Op.String(), bits, "("+ubits+")%s", plain, v)
	case ir.AtomicExchange:
		if t.IsFloat() {
			return call("exch", bits, "qd_bits_"+t.String()+"(%s)", "qd_"+t.String()+"_from(%s)", v)
		}
		return call("exch", bits, "("+ubits+")%s", plain, v)
	case ir.AtomicCAS:
		if e.Compare == nil || e.Compare.Type() != t {
			f.fail("atomic cas on %s without a %v compare value", e.Array.Name, t)
		}
		c := f.expr(e.Compare) // after Value: the IR's operand order
		if t.IsFloat() {
			return call("cas", bits, "qd_bits_"+t.String()+"(%s)", "qd_"+t.String()+"_from(%s)", c, v)
		}
		return call("cas", bits, "("+ubits+")%s", plain, c, v)
	}
	f.fail("unknown atomic operation %v", e.Op)
	return ""
}
