package ptx

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower/analysis"
)

// Unrolling of the grid-stride loop.
//
// With one element per thread per trip a thread has only a load or two in
// flight, too few to cover the memory latency of a streaming kernel (saxpy
// reached 0.84 of a device-to-device copy on an H200). A parallel task
// whose body is simple therefore runs a main loop that does unroll
// iterations per trip — i, i+stride, ..., i+(unroll-1)·stride — followed by
// the ordinary one-element loop for what is left (fewer than unroll trips
// per thread).
//
// The unrolled body interleaves the iterations statement by statement: for
// each statement in order, the right-hand sides (and store indices) of all
// unroll iterations are evaluated, then the unroll stores or assignments are
// made. So the loads of a statement are all issued before its stores. This
// reorders memory accesses across iterations only, which is allowed because
// the iterations of a parallel loop are independent: an iteration that reads
// what another writes is a data race, whose result is unspecified (on the
// CPU backend too). Within an iteration the statement order, and so every
// load-after-store and store-after-store order, is kept. Each iteration has
// its own registers for the loop variables and the locals the body declares.
//
// Two is measured, not guessed: on an H200 (2026-11-21) saxpy over 2^28
// float32 reached 0.842 of a device copy's bandwidth without unrolling,
// 0.963 with 2, 0.89 with 4 and 0.879 with 8 (more registers per thread,
// fewer threads resident).
const unroll = 2

// maxUnrollNodes bounds the size (statements plus expression nodes) of a body
// that is unrolled: the code grows by the factor unroll, and the register
// pressure with it. Streaming bodies, which gain from unrolling, are small.
const maxUnrollNodes = 64

// unrollMaxDims is the most dimensions a range may have to be unrolled. The
// emitter handles 1 to 3 (each iteration divides its own flat index into its
// variables), but a multi-dimensional body pays those divisions per
// iteration and needs more registers: the 2-D stencil5 of the benchmark
// suite went from 32 to 40 registers per thread (ptxas 11.8, sm_90), which
// drops the occupancy below the grid the launcher sizes by threads per SM.
// So only 1-D ranges are unrolled; the tests raise it (Options.unrollDims)
// to cover the rest.
const unrollMaxDims = 1

// unrollable reports whether the body of l, the task's loop, is unrolled:
// straight-line (analysis.Unrollable: Decl, Assign to a loop variable or a
// local the body declared before, Store and reduction statements only,
// none setting a per-launch temporary, and expressions with no atomic and
// no transcendental call), of at most maxUnrollNodes, over at most
// unrollMaxDims dimensions, and indices unchecked. Other bodies run the
// one-element loop only.
func (f *fnWriter) unrollable(l *ir.ParallelFor) bool {
	maxDims := unrollMaxDims
	if f.m.opts.unrollDims > 0 {
		maxDims = f.m.opts.unrollDims
	}
	if unroll < 2 || len(l.Vars) > maxDims || f.bounds() || l != f.task.Loop {
		return false
	}
	nodes, ok := analysis.Unrollable(f.m.plan, f.task)
	return ok && nodes <= maxUnrollNodes
}

// gridIndex holds the registers of the grid-stride loop that parallelLoop
// sets up: the flat index and the stride in both widths, the total, the
// counters of a multi-dimensional loop in both widths, and fits, which
// selects the 32-bit form.
type gridIndex struct {
	fits          string
	i32, stride32 string
	i64, stride64 string
	total         string
	c32, c64      counters // 2- and 3-D loops only
	loopVars      []*ir.Var
	vars          []string // registers of the loop variables
	remainder     string   // label of the one-element loop
	done          string   // label after the loop
}

// unrolledLoop writes the main loop of an unrollable parallel task, which
// falls through to (or leaves for) g.remainder, the one-element loop, once
// fewer than unroll iterations are left to this thread:
//
//	      lim := max(total - (unroll-1)·stride, 0)
//	head: if fits { if i32 >= lim goto remainder; point_k := point_0 stepped k times }
//	      else    { if i64 >= lim goto remainder; ... }
//	      body, unroll iterations interleaved statement by statement
//	      if fits { i32 = idx_(unroll-1) + stride; counters stepped from point_(unroll-1) }
//	      else    { ... }
//	      goto head
//
// In the 32-bit form no index overflows: i32 < lim means every idx_k is
// below total < 2^31, and the next i32 is below total + stride < 2^32.
func (f *fnWriter) unrolledLoop(l *ir.ParallelFor, g gridIndex) {
	n := len(g.loopVars)
	private := map[*ir.Var][]string{}
	for d, v := range g.loopVars {
		regs := make([]string, unroll)
		regs[0] = g.vars[d]
		for k := 1; k < unroll; k++ {
			regs[k] = f.reg(v.Type)
		}
		private[v] = regs
	}
	varsOf := func(k int) []string {
		out := make([]string, n)
		for d, v := range g.loopVars {
			out[d] = private[v][k]
		}
		return out
	}
	lim64, lim32 := f.reg(ir.I64), f.reg(ir.U32)
	f.emit("mul.lo.s64 %s, %s, %d", lim64, g.stride64, unroll-1)
	f.emit("sub.s64 %s, %s, %s", lim64, g.total, lim64)
	f.emit("max.s64 %s, %s, 0", lim64, lim64)
	f.emit("cvt.u32.u64 %s, %s", lim32, lim64)

	// points writes, for one width, the flat index and the counters of
	// every unrolled iteration and sets its loop variables.
	points := func(it ir.Type, idx0, stride string, c counters) (idx []string, at [][]string) {
		ty := opType(it)
		idx, at = make([]string, unroll), make([][]string, unroll)
		idx[0], at[0] = idx0, c.at
		for k := range unroll {
			if k > 0 {
				idx[k] = f.reg(it)
				f.emit("add.%s %s, %s, %s", ty, idx[k], idx[k-1], stride)
				if n > 1 {
					at[k] = make([]string, n)
					for d := range at[k] {
						at[k][d] = f.reg(it)
					}
					f.stepCounters(it, c, at[k-1], at[k])
				}
			}
			f.setVars(g, it, idx[k], at[k], varsOf(k))
		}
		return idx, at
	}

	head, wide, body := f.label(), f.label(), f.label()
	done := f.reg(ir.Bool)
	f.place(head)
	f.braIf(g.fits, true, wide)
	f.emit("setp.ge.u32 %s, %s, %s", done, g.i32, lim32)
	f.braIf(done, false, g.remainder)
	idx32, at32 := points(ir.U32, g.i32, g.stride32, g.c32)
	f.bra(body)
	f.place(wide)
	f.emit("setp.ge.s64 %s, %s, %s", done, g.i64, lim64)
	f.braIf(done, false, g.remainder)
	idx64, at64 := points(ir.I64, g.i64, g.stride64, g.c64)
	f.place(body)

	f.unrolledStmts(l.Body, private, unroll)

	wideNext := f.label()
	f.braIf(g.fits, true, wideNext)
	f.emit("add.u32 %s, %s, %s", g.i32, idx32[unroll-1], g.stride32)
	f.stepCounters(ir.U32, g.c32, at32[unroll-1], g.c32.at)
	f.bra(head)
	f.place(wideNext)
	f.emit("add.s64 %s, %s, %s", g.i64, idx64[unroll-1], g.stride64)
	f.stepCounters(ir.I64, g.c64, at64[unroll-1], g.c64.at)
	f.bra(head)
}

// unrolledStmts writes the statements of an unrollable body for unroll
// iterations, interleaved statement by statement. private maps each loop
// variable to its registers, one per iteration; the locals the body declares
// are added as their declarations are reached. On return f.vars holds the
// registers of iteration 0, which the one-element loop reuses.
func (f *fnWriter) unrolledStmts(ss []ir.Stmt, private map[*ir.Var][]string, copies int) {
	use := func(k int) {
		for v, regs := range private {
			f.vars[v] = regs[k]
		}
		f.vecCopy = k
	}
	vals := make([]string, copies)
	for _, s := range ss {
		f.pos = s.Position()
		switch s := s.(type) {
		case *ir.Decl:
			if !s.Var.Type.Valid() {
				f.fail("local %s has invalid type %v", s.Var.Name, s.Var.Type)
			}
			for k := range copies {
				use(k)
				if s.Init == nil {
					vals[k] = f.constant(s.Var.Type, 0)
				} else {
					f.checkType(s.Var, s.Init.Type())
					vals[k] = f.expr(s.Init)
				}
			}
			regs, ok := private[s.Var]
			if !ok {
				use(0)
				regs = make([]string, copies)
				regs[0] = f.declare(s.Var)
				for k := 1; k < copies; k++ {
					regs[k] = f.reg(s.Var.Type)
				}
				private[s.Var] = regs
			}
			for k := range copies {
				f.mov(s.Var.Type, regs[k], vals[k])
			}
		case *ir.Assign:
			f.checkType(s.Var, s.Value.Type())
			regs, ok := private[s.Var]
			if !ok {
				f.fail("local %s is assigned before its declaration in this task", s.Var.Name)
			}
			for k := range copies {
				use(k)
				vals[k] = f.expr(s.Value)
			}
			for k := range copies {
				f.mov(s.Var.Type, regs[k], vals[k])
			}
		case *ir.Store:
			t := s.Array.LeafType(s.Leaf)
			if s.Value == nil || s.Value.Type() != t {
				f.fail("store to %s of a value that is not %v", s.Array.Name, t)
			}
			// A vector store addresses its run itself (vectorStore).
			vector := f.vec != nil && f.vec.arrays[s.Array]
			addrs := make([]string, copies)
			for k := range copies {
				use(k)
				if !vector {
					// Go evaluates the index operands before the value.
					addrs[k] = plus(f.address(s.Array, s.Index), leafOffset(s.Array, s.Leaf))
				}
				vals[k] = f.expr(s.Value)
			}
			if vector {
				f.vectorStore(s.Array, vals[:copies])
				break
			}
			for k := range copies {
				f.store(t, "["+addrs[k]+"]", vals[k])
			}
		case *ir.ExprStmt:
			a := f.red[s]
			if a == nil {
				f.fail("statement %T in an unrolled body", s)
			}
			for k := range copies {
				use(k)
				vals[k] = f.expr(a.r.Atomic.Value)
			}
			for k := range copies {
				f.accumulate(a, vals[k])
			}
		default:
			f.fail("statement %T in an unrolled body", s)
		}
	}
	use(0)
}
