package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

func (f *fn) stmts(ss []ir.Stmt) {
	for _, s := range ss {
		f.stmt(s)
	}
}

func (f *fn) stmt(s ir.Stmt) {
	if s == nil {
		f.fail("missing statement")
	}
	f.pos = s.Position()
	switch s := s.(type) {
	case *ir.Decl:
		value := literal(s.Var.Type, 0)
		if s.Init != nil {
			f.sameType(s.Var, s.Init.Type())
			value = f.expr(s.Init)
		}
		f.set(s.Var, value, true)
	case *ir.Assign:
		f.sameType(s.Var, s.Value.Type())
		f.set(s.Var, f.expr(s.Value), false)
	case *ir.Store:
		// Go evaluates the index operands before the value.
		elem := f.element(s.Array, s.Index)
		if s.Value == nil || s.Value.Type() != s.Array.Elem {
			f.fail("store to %s of a value that is not %v", s.Array.Name, s.Array.Elem)
		}
		v := f.expr(s.Value)
		if s.Array.Elem == ir.Bool {
			v += " ? 1 : 0"
		}
		f.line("%s = %s;", elem, v)
	case *ir.ExprStmt:
		if a, ok := s.X.(*ir.Atomic); ok {
			f.atomic(a, false)
		} else {
			f.expr(s.X)
		}
	case *ir.If:
		f.ifStmt(s)
	case *ir.For:
		f.forStmt(s)
	case *ir.Break:
		f.line("goto %s;", f.target(s.Loop, "break").brk)
	case *ir.Continue:
		if s.Loop == nil && len(f.loops) == 0 && f.parNext != "" {
			f.line("goto %s;", f.parNext) // the parallel loop's next iteration
			return
		}
		f.line("goto %s;", f.target(s.Loop, "continue").cont)
	case *ir.ParallelFor:
		f.fail("parallel loop inside a task: only top-level loops run in parallel (lowering should have made it a task)")
	case *ir.StreamParallel:
		f.fail("stream-parallel group inside a task (lowering should have split it)")
	default:
		f.fail("unknown statement %T", s)
	}
}

func (f *fn) sameType(v *ir.Var, t ir.Type) {
	if v.Type != t {
		f.fail("%v value assigned to %s of type %v", t, v.Name, v.Type)
	}
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
	if s.Cond == nil || s.Cond.Type() != ir.Bool {
		f.fail("if condition is not a bool")
	}
	f.line("if (%s) {", f.expr(s.Cond))
	f.block(s.Then)
	if len(s.Else) > 0 {
		f.line("} else {")
		f.block(s.Else)
	}
	f.line("}")
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
// device scope, as PTX's atom. Signed integers use the unsigned primitives
// (the same bits) except for min and max; float add is the hardware's (or
// the compiler's compare-and-swap loop), float min and max are the
// prelude's compare-and-swap loops with Go's min and max. Exchange and
// compare-and-swap work on the bits, so a float NaN can match itself. Bool
// arrays (bytes) have no atomics.
func (f *fn) atomic(e *ir.Atomic, want bool) string {
	t := e.Array.Elem
	if t == ir.Bool || !t.Valid() {
		f.fail("atomic %v on an array of %v: atomics take int32, int64, uint32, uint64, float32 or float64 elements", e.Op, t)
	}
	if e.Value == nil || e.Value.Type() != t {
		f.fail("atomic %v on %s with a value that is not %v", e.Op, e.Array.Name, t)
	}
	ptr := "&" + f.element(e.Array, e.Index)
	v := f.expr(e.Value)
	ct, bits := cType(t), "u"+fmt.Sprint(t.Bits())
	ubits := cTypes[bits]
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
			f.line("qd_red_%s_%s(%s);", op, ty, list)
			return ""
		}
		return f.tmp(t, out, fmt.Sprintf("qd_atomic_%s_%s(%s)", op, ty, list))
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
