package lower

import "github.com/quadrants-go/qd/internal/ir"

// The rules of a block loop's body (ir.Blocks), which keep a block's
// result the same whether its threads run at once (GPUs) or its thread
// loops one after another (the CPU, native Go):
//
//   - Statements outside thread loops (the block level) are the same for
//     every thread: they declare and assign uniform locals, read memory,
//     branch and loop on uniform conditions, and call the block
//     collectives. They write no memory (a store there would run once per
//     thread on a GPU) and read no per-thread local.
//   - A thread loop's body is per thread: it may assign per-thread locals
//     and its own, but not the block's uniform locals, which every thread
//     shares.
//   - Parallel loops, block loops and stream-parallel blocks do not nest
//     inside a block loop.

// blockCheck walks one block loop's body.
type blockCheck struct {
	l         *lowerer
	perThread map[*ir.Var]bool
	uniform   map[*ir.Var]ir.Pos // block-level locals that are not per-thread
}

func (l *lowerer) checkBlocks(s *ir.Blocks) {
	c := &blockCheck{l: l, perThread: map[*ir.Var]bool{}, uniform: map[*ir.Var]ir.Pos{}}
	for _, v := range s.PerThread {
		c.perThread[v] = true
	}
	declared := map[*ir.Var]bool{}
	c.walkLevel(s.Body, declared)
	for _, v := range s.PerThread {
		if !declared[v] {
			l.errorf(s.Pos, "per-thread variable %q must be declared at the level of the block loop, outside its thread loops", v.Name)
		}
	}
}

// walkLevel checks statements at the block level.
func (c *blockCheck) walkLevel(list []ir.Stmt, declared map[*ir.Var]bool) {
	for _, s := range list {
		switch s := s.(type) {
		case *ir.Decl:
			declared[s.Var] = true
			if !c.perThread[s.Var] {
				c.uniform[s.Var] = s.Pos
			}
			c.levelExpr(s.Pos, s.Init)
		case *ir.Assign:
			if c.perThread[s.Var] {
				c.l.errorf(s.Pos, "per-thread variable %q is assigned outside a thread loop; each thread has its own: assign it inside `for t := range b.Threads()`", s.Var.Name)
			}
			c.levelExpr(s.Pos, s.Value)
		case *ir.Store:
			c.l.errorf(s.Pos, "a store at the level of a qd.Blocks loop, outside its thread loops, would run once per thread on a GPU (loops there run alike in every thread); store inside a thread loop (`for t := range b.Threads() { if t == 0 { ... } }` for one thread)")
		case *ir.ExprStmt:
			c.levelExpr(s.Pos, s.X)
		case *ir.If:
			c.levelExpr(s.Pos, s.Cond)
			c.walkLevel(s.Then, declared)
			c.walkLevel(s.Else, declared)
		case *ir.For:
			c.walkLevel(s.Init, declared)
			c.levelExpr(s.Pos, s.Cond)
			c.walkLevel(s.Post, declared)
			c.walkLevel(s.Body, declared)
		case *ir.Threads:
			c.threadBody(s.Body)
		case *ir.BlockReduce:
			if !c.perThread[s.X] {
				c.l.errorf(s.Pos, "a block reduction combines one value per thread, but %q is not a per-thread variable (qd.NewPerThread)", s.X.Name)
			}
			if c.perThread[s.Result] {
				c.l.errorf(s.Pos, "a block reduction's result is the same for every thread; %q is a per-thread variable", s.Result.Name)
			}
		case *ir.BlockScan:
			if !c.perThread[s.X] || !c.perThread[s.Result] {
				c.l.errorf(s.Pos, "a block scan takes and gives one value per thread: %q and %q must be per-thread variables (qd.NewPerThread)", s.X.Name, s.Result.Name)
			}
		case *ir.ParallelFor:
			c.l.errorf(s.Pos, "parallel loop inside a qd.Blocks loop: a block's threads are its thread loops (`for t := range b.Threads()`); write this loop as one, or as a serial loop inside one")
		case *ir.Blocks:
			c.l.errorf(s.Pos, "qd.Blocks loops do not nest; use one block loop and thread loops inside it")
		case *ir.StreamParallel:
			c.l.errorf(s.Pos, "qd.StreamParallel inside a qd.Blocks loop: a stream-parallel block must be a top-level statement of the kernel")
		}
	}
}

// levelExpr checks an expression evaluated at the block level: no atomic
// (it would run once per thread) and no per-thread local (each thread has
// its own).
func (c *blockCheck) levelExpr(pos ir.Pos, e ir.Expr) {
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Atomic:
			c.l.errorf(pos, "an atomic operation at the level of a qd.Blocks loop, outside its thread loops, would run once per thread on a GPU; do it inside a thread loop")
			return false
		case *ir.VarRef:
			if c.perThread[n.Var] {
				c.l.errorf(pos, "per-thread variable %q is read outside a thread loop; each thread has its own: read it inside `for t := range b.Threads()`, or combine the threads' values with qd.BlockSum, qd.BlockMin or qd.BlockMax", n.Var.Name)
				return false
			}
		}
		return true
	})
}

// threadBody checks the body of a thread loop.
func (c *blockCheck) threadBody(list []ir.Stmt) {
	ir.Inspect(list, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Assign:
			if pos, ok := c.uniform[n.Var]; ok {
				c.l.errorf(n.Pos, "thread loop assigns %q (declared at %s), which is the block's, shared by its threads: they would race. Declare it per thread (qd.NewPerThread), assign it between thread loops, or keep it in a shared array", n.Var.Name, posText(pos))
			}
		case *ir.ParallelFor:
			c.l.errorf(n.Pos, "parallel loop inside a thread loop: each thread runs a thread loop's body once; write the inner loop as a serial for loop")
			return false
		case *ir.Blocks:
			c.l.errorf(n.Pos, "qd.Blocks loops do not nest; use one block loop and thread loops inside it")
			return false
		case *ir.StreamParallel:
			c.l.errorf(n.Pos, "qd.StreamParallel inside a thread loop: a stream-parallel block must be a top-level statement of the kernel")
			return false
		case *ir.BlockReduce, *ir.BlockScan:
			return false // Verify reports it
		}
		return true
	})
}
