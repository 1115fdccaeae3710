package ptx

import "github.com/quadrants-go/qd/internal/ir"

func (f *fnWriter) stmts(ss []ir.Stmt) {
	for _, s := range ss {
		f.stmt(s)
	}
}

func (f *fnWriter) stmt(s ir.Stmt) {
	if s == nil {
		f.fail("missing statement")
	}
	f.pos = s.Position()
	switch s := s.(type) {
	case *ir.Decl:
		r := f.declare(s.Var)
		if s.Init == nil {
			f.mov(s.Var.Type, r, f.constant(s.Var.Type, 0))
		} else {
			f.checkType(s.Var, s.Init.Type())
			f.mov(s.Var.Type, r, f.expr(s.Init))
		}
		f.wrote(s.Var)
	case *ir.Assign:
		f.checkType(s.Var, s.Value.Type())
		v := f.expr(s.Value)
		f.mov(s.Var.Type, f.varReg(s.Var), v)
		f.wrote(s.Var)
	case *ir.Store:
		// Go evaluates the index operands before the value.
		addr := f.address(s.Array, s.Index)
		if s.Value == nil || s.Value.Type() != s.Array.Elem {
			f.fail("store to %s of a value that is not %v", s.Array.Name, s.Array.Elem)
		}
		f.store(s.Array.Elem, "["+addr+"]", f.expr(s.Value))
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
		f.bra(f.loopOf(s.Loop, "break").brk)
	case *ir.Continue:
		if s.Loop == nil && len(f.loops) == 0 && f.parNext != "" {
			f.bra(f.parNext) // continue of the parallel loop: next iteration
			return
		}
		f.bra(f.loopOf(s.Loop, "continue").cont)
	case *ir.ParallelFor:
		f.fail("parallel loop inside a task: only top-level loops run in parallel (lowering should have made it a task)")
	case *ir.StreamParallel:
		f.fail("stream-parallel group inside a task (lowering should have split it)")
	default:
		f.fail("unknown statement %T", s)
	}
}

func (f *fnWriter) checkType(v *ir.Var, t ir.Type) {
	if v.Type != t {
		f.fail("%v value assigned to %s of type %v", t, v.Name, v.Type)
	}
}

// loopOf finds the labels of loop l, or of the innermost loop when l is nil.
func (f *fnWriter) loopOf(l *ir.For, what string) loopLabels {
	if len(f.loops) == 0 {
		f.fail("%s outside a serial loop", what)
	}
	if l == nil {
		return f.loops[len(f.loops)-1]
	}
	for i := len(f.loops) - 1; i >= 0; i-- {
		if f.loops[i].loop == l {
			return f.loops[i]
		}
	}
	f.fail("%s to a loop that does not enclose it", what)
	return loopLabels{}
}

func (f *fnWriter) ifStmt(s *ir.If) {
	if s.Cond == nil || s.Cond.Type() != ir.Bool {
		f.fail("if condition is not a bool")
	}
	c := f.expr(s.Cond)
	end := f.label()
	if len(s.Else) == 0 {
		f.braIf(c, true, end)
		f.stmts(s.Then)
		f.place(end)
		return
	}
	els := f.label()
	f.braIf(c, true, els)
	f.stmts(s.Then)
	f.bra(end)
	f.place(els)
	f.stmts(s.Else)
	f.place(end)
}

// forStmt writes a serial loop:
//
//	init
//	head: if !cond goto brk
//	      body
//	cont: post
//	      goto head
//	brk:
func (f *fnWriter) forStmt(s *ir.For) {
	f.stmts(s.Init)
	f.pos = s.Pos
	head, cont, brk := f.label(), f.label(), f.label()
	f.place(head)
	if s.Cond != nil {
		if s.Cond.Type() != ir.Bool {
			f.fail("loop condition is not a bool")
		}
		c := f.expr(s.Cond)
		f.braIf(c, true, brk)
	}
	f.loops = append(f.loops, loopLabels{loop: s, cont: cont, brk: brk})
	f.stmts(s.Body)
	f.loops = f.loops[:len(f.loops)-1]
	f.place(cont)
	f.stmts(s.Post)
	f.bra(head)
	f.place(brk)
}

// parallelLoop writes the grid-stride loop of a parallel task over the
// row-major flattening of its 1 to 3 extents.
//
// The extents are evaluated once, converted to int64 (an extent ≤ 0, or a
// uint64 one ≥ 2^63, runs nothing) and multiplied into the total. Each
// thread starts at ctaid.x*ntid.x+tid.x and steps by nctaid.x*ntid.x, which
// is correct for any grid size. The index arithmetic is 32-bit when both the
// total and the stride are below 2^31 (the usual case: then no 32-bit index
// or sum can overflow), 64-bit otherwise; the choice is made once per launch
// from those values, and the loop keeps a single header so that its
// control flow stays reducible for ptxas:
//
//	      if total <= 0 goto exit; fits := total < 2^31 && stride < 2^31
//	loop: if fits { if i32 >= total goto exit; vars from i32 (32-bit div/rem) }
//	      else    { if i64 >= total goto exit; vars from i64 (64-bit div/rem) }
//	      body
//	next: if fits { i32 += stride } else { i64 += stride }
//	      goto loop
//
// When the body is simple (unrollable), an unrolled main loop doing unroll
// iterations per trip comes first, and the loop above does the rest (see
// unrolledLoop).
func (f *fnWriter) parallelLoop(l *ir.ParallelFor, exit string) {
	n := len(l.Extents)
	if n < 1 || n > 3 || len(l.Vars) != n {
		f.fail("parallel loop with %d extents and %d variables (want 1 to 3 of each)", n, len(l.Vars))
	}
	f.pos = l.Pos
	ext := make([]string, n)
	for d, e := range l.Extents {
		if e == nil || !e.Type().IsInteger() {
			f.fail("parallel loop extent %d is not an integer", d)
		}
		if l.Vars[d].Type != e.Type() {
			f.fail("parallel loop variable %s has type %v, its extent %v", l.Vars[d].Name, l.Vars[d].Type, e.Type())
		}
		ext[d] = f.index64(e)
	}
	// total and the early exit.
	total := ext[0]
	empty := f.reg(ir.Bool)
	f.emit("setp.le.s64 %s, %s, 0", empty, ext[0])
	for d := 1; d < n; d++ {
		le, t := f.reg(ir.Bool), f.reg(ir.I64)
		f.emit("setp.le.s64 %s, %s, 0", le, ext[d])
		f.emit("or.pred %s, %s, %s", empty, empty, le)
		f.emit("mul.lo.s64 %s, %s, %s", t, total, ext[d])
		total = t
	}
	f.braIf(empty, false, exit)

	tid, ntid, ctaid, nctaid := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ntid.x", ntid)
	f.emit("mov.u32 %s, %%ctaid.x", ctaid)
	f.emit("mov.u32 %s, %%nctaid.x", nctaid)
	i64, stride64, tid64 := f.reg(ir.I64), f.reg(ir.I64), f.reg(ir.I64)
	f.emit("cvt.u64.u32 %s, %s", tid64, tid)
	f.emit("mad.wide.u32 %s, %s, %s, %s", i64, ctaid, ntid, tid64)
	f.emit("mul.wide.u32 %s, %s, %s", stride64, nctaid, ntid)
	fits, small := f.reg(ir.Bool), f.reg(ir.Bool)
	f.emit("setp.lt.s64 %s, %s, 2147483648", fits, total)
	f.emit("setp.lt.u64 %s, %s, 2147483648", small, stride64)
	f.emit("and.pred %s, %s, %s", fits, fits, small)
	i32, stride32, total32 := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("cvt.u32.u64 %s, %s", i32, i64)
	f.emit("cvt.u32.u64 %s, %s", stride32, stride64)
	f.emit("cvt.u32.u64 %s, %s", total32, total)
	ext32 := make([]string, n)
	for d := 1; d < n; d++ {
		ext32[d] = f.reg(ir.U32)
		f.emit("cvt.u32.u64 %s, %s", ext32[d], ext[d])
	}
	vars := make([]string, n)
	for d, v := range l.Vars {
		vars[d] = f.declare(v)
	}

	loop, wide, body, next, wideNext := f.label(), f.label(), f.label(), f.label(), f.label()
	if f.unrollable(l) {
		f.unrolledLoop(l, gridIndex{
			fits: fits, i32: i32, stride32: stride32, i64: i64, stride64: stride64,
			total: total, ext: ext, ext32: ext32, loopVars: l.Vars, vars: vars, remainder: loop,
		})
	}
	done := f.reg(ir.Bool)
	f.place(loop)
	f.braIf(fits, true, wide)
	f.emit("setp.ge.u32 %s, %s, %s", done, i32, total32)
	f.braIf(done, false, exit)
	f.unflatten(l.Vars, vars, ir.U32, i32, ext32)
	f.bra(body)
	f.place(wide)
	f.emit("setp.ge.s64 %s, %s, %s", done, i64, total)
	f.braIf(done, false, exit)
	f.unflatten(l.Vars, vars, ir.I64, i64, ext)
	f.place(body)

	f.parNext = next
	f.stmts(l.Body)
	f.parNext = ""

	f.place(next)
	f.braIf(fits, true, wideNext)
	f.emit("add.u32 %s, %s, %s", i32, i32, stride32)
	f.bra(loop)
	f.place(wideNext)
	f.emit("add.s64 %s, %s, %s", i64, i64, stride64)
	f.bra(loop)
}

// unflatten splits the flat index idx (of type it: U32 or I64, known to be
// non-negative) into the loop variables, innermost dimension last.
func (f *fnWriter) unflatten(vars []*ir.Var, regs []string, it ir.Type, idx string, ext []string) {
	ty := opType(it)
	if it == ir.I64 {
		ty = "u64" // non-negative: unsigned division is cheaper
	}
	rest := idx
	for d := len(vars) - 1; d >= 0; d-- {
		val := rest
		if d > 0 {
			q, r := f.reg(it), f.reg(it)
			f.emit("div.%s %s, %s, %s", ty, q, rest, ext[d])
			f.emit("mul.lo.%s %s, %s, %s", ty, r, q, ext[d])
			f.emit("sub.%s %s, %s, %s", ty, r, rest, r)
			val, rest = r, q
		}
		f.setIndexVar(vars[d].Type, regs[d], it, val)
	}
}

// setIndexVar sets a loop variable of type vt from an index of type it.
func (f *fnWriter) setIndexVar(vt ir.Type, dst string, it ir.Type, val string) {
	switch {
	case vt.Size() == it.Size():
		f.mov(vt, dst, val)
	case vt.Size() == 8:
		f.emit("cvt.u64.u32 %s, %s", dst, val) // non-negative
	default:
		f.emit("cvt.u32.u64 %s, %s", dst, val)
	}
}
