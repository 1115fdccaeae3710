package ptx

import "github.com/quadrants-go/qd/internal/ir"

func (f *fnWriter) stmts(ss []ir.Stmt) {
	for i := 0; i < len(ss); i++ {
		if n := f.vectorRed(ss[i:]); n > 0 { // vecred.go
			i += n - 1
			continue
		}
		if n := f.stagedStores(ss[i:]); n > 0 { // blocks.go
			i += n - 1
			continue
		}
		f.stmt(ss[i])
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
		addr, ok := f.memAddr(s.Array, s.Index, s.Leaf)
		t := s.Array.LeafType(s.Leaf)
		if s.Value == nil || s.Value.Type() != t {
			f.fail("store to %s of a value that is not %v", s.Array.Name, t)
		}
		v := f.expr(s.Value)
		f.guarded(ok, func() { f.in(s.Array, func() { f.store(t, "["+addr+"]", v) }) })
	case *ir.ExprStmt:
		if acc := f.red[s]; acc != nil {
			f.reduceStmt(acc)
		} else if a, ok := s.X.(*ir.Atomic); ok {
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
	case *ir.Blocks:
		f.fail("block loop inside a task (lowering should have made it a task)")
	case *ir.Threads:
		f.threadsLoop(s)
	case *ir.BlockReduce:
		f.blockReduce(s)
	case *ir.BlockScan:
		f.blockScan(s)
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
	if v, e, ok := f.countedLoop(s); ok {
		f.unrolledTrips(s, v, e) // serialunroll.go
	}
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
//	loop: if fits { if i32 >= total goto done; vars from the 32-bit index }
//	      else    { if i64 >= total goto done; vars from the 64-bit index }
//	      body
//	next: if fits { i32 += stride; step the 32-bit counters }
//	      else    { i64 += stride; step the 64-bit counters }
//	      goto loop
//	done: the reductions' block epilogue, if any
//
// A 1-D loop's variable is the flat index. A 2- or 3-D loop keeps one
// counter per dimension, split from the thread's start once (divisions),
// and advances them by the stride split the same way, with carries: no
// division per iteration (see stepCounters).
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
	// total and the early exit, taken alike by every thread of the grid.
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
	g := gridIndex{
		fits: fits, i32: i32, stride32: stride32, i64: i64, stride64: stride64,
		total: total, loopVars: l.Vars,
	}
	if n > 1 {
		ext32 := make([]string, n)
		for d := 1; d < n; d++ {
			ext32[d] = f.reg(ir.U32)
			f.emit("cvt.u32.u64 %s, %s", ext32[d], ext[d])
		}
		// Both widths are split; only the one fits selects is used, and a
		// 32-bit split of values that do not fit is harmless garbage.
		g.c32 = counters{ext: ext32, at: f.digits(ir.U32, i32, ext32), step: f.digits(ir.U32, stride32, ext32)}
		g.c64 = counters{ext: ext, at: f.digits(ir.I64, i64, ext), step: f.digits(ir.I64, stride64, ext)}
	}
	g.vars = make([]string, n)
	for d, v := range l.Vars {
		g.vars[d] = f.declare(v)
	}
	done := exit
	reducing := f.startReductions()
	if reducing {
		done = f.label()
	}

	loop, wide, body, next, wideNext := f.label(), f.label(), f.label(), f.label(), f.label()
	g.remainder, g.done = loop, done
	if v := f.vectorize(l); v != nil {
		f.vectorLoop(l, g, v)
	}
	unrolled := f.unrollable(l)
	if unrolled {
		f.unrolledLoop(l, g)
	}
	aff := f.planAffine(l)
	if !unrolled && f.rowChunkable(l) {
		flat := f.label()
		f.rowChunkLoop(l, ext, g.vars, aff, flat, done) // rowchunk.go
		f.place(flat)
	}
	stop := f.reg(ir.Bool)
	f.place(loop)
	f.braIf(fits, true, wide)
	f.emit("setp.ge.u32 %s, %s, %s", stop, i32, total32)
	f.braIf(stop, false, done)
	f.setVars(g, ir.U32, i32, g.c32.at, g.vars)
	f.bra(body)
	f.place(wide)
	f.emit("setp.ge.s64 %s, %s, %s", stop, i64, total)
	f.braIf(stop, false, done)
	f.setVars(g, ir.I64, i64, g.c64.at, g.vars)
	f.place(body)
	if aff != nil {
		f.affineBases(aff, g.vars)
	}

	f.parNext, f.aff = next, aff
	f.stmts(l.Body)
	f.parNext, f.aff = "", nil

	f.place(next)
	f.braIf(fits, true, wideNext)
	f.emit("add.u32 %s, %s, %s", i32, i32, stride32)
	f.stepCounters(ir.U32, g.c32, g.c32.at, g.c32.at)
	f.bra(loop)
	f.place(wideNext)
	f.emit("add.s64 %s, %s, %s", i64, i64, stride64)
	f.stepCounters(ir.I64, g.c64, g.c64.at, g.c64.at)
	f.bra(loop)
	if reducing {
		f.place(done)
		f.finishReductions()
	}
}

// counters are the per-dimension indices of a 2- or 3-D loop in one width:
// at holds the thread's current point, step the grid stride split into the
// same digits, ext the extents (ext[0] unused).
type counters struct {
	ext, at, step []string
}

// digits splits the flat index idx (of type it: U32 or I64, known to be
// non-negative) into row-major digits over the extents, innermost last.
func (f *fnWriter) digits(it ir.Type, idx string, ext []string) []string {
	ty := opType(it)
	if it == ir.I64 {
		ty = "u64" // non-negative: unsigned division is cheaper
	}
	out := make([]string, len(ext))
	rest := idx
	for d := len(ext) - 1; d >= 0; d-- {
		if d == 0 {
			out[0] = f.reg(it)
			f.mov(it, out[0], rest)
			break
		}
		q, r := f.reg(it), f.reg(it)
		f.emit("div.%s %s, %s, %s", ty, q, rest, ext[d])
		f.emit("mul.lo.%s %s, %s, %s", ty, r, q, ext[d])
		f.emit("sub.%s %s, %s, %s", ty, r, rest, r)
		out[d], rest = r, q
	}
	return out
}

// stepCounters sets dst to src advanced by c.step, digit by digit with
// carries (dst may be src). Every src digit d ≥ 1 is below its extent and so
// is the stride's, so their sum plus a carry is below twice the extent and
// one subtraction brings it back into range. In the 32-bit form every value
// stays below 2^32: extents and the stride are below 2^31.
func (f *fnWriter) stepCounters(it ir.Type, c counters, src, dst []string) {
	if len(c.at) == 0 {
		return
	}
	ty := opType(it)
	carry := ""
	for d := len(src) - 1; d >= 0; d-- {
		f.emit("add.%s %s, %s, %s", ty, dst[d], src[d], c.step[d])
		if carry != "" {
			one := f.reg(it)
			f.emit("selp.%s %s, 1, 0, %s", ty, one, carry)
			f.emit("add.%s %s, %s, %s", ty, dst[d], dst[d], one)
		}
		if d == 0 {
			break
		}
		over := f.reg(ir.Bool)
		f.emit("setp.ge.%s %s, %s, %s", ty, over, dst[d], c.ext[d])
		f.emit("@%s sub.%s %s, %s, %s", over, ty, dst[d], dst[d], c.ext[d])
		carry = over
	}
}

// setVars sets the loop variables of one iteration: a 1-D loop's from the
// flat index idx, a multi-dimensional loop's from its counters at.
func (f *fnWriter) setVars(g gridIndex, it ir.Type, idx string, at, vars []string) {
	if len(g.loopVars) == 1 {
		f.setIndexVar(g.loopVars[0].Type, vars[0], it, idx)
		return
	}
	for d, v := range g.loopVars {
		f.setIndexVar(v.Type, vars[d], it, at[d])
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
