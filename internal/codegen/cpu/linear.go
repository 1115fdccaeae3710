package cpu

import "github.com/quadrants-go/qd/internal/ir"

// Contiguous locals. In a row batch the innermost parallel index (a
// thread loop's index, in a block task) is contiguous, lane k holding
// base+k, and so is a uniform offset from it (ev.lin): loads and stores
// by it are a bounds check of the end lanes and a copy, and comparisons
// of it lane sets. A local that names such an index, i := b*bs + t or
// k := j + 1, declared with it and never assigned again, keeps that: its
// declaration notes the offset of its lane 0 from the contiguous index in
// a scalar slot, and reading it gives lin from there. The offset, not
// lane 0's value, is kept because an if on a lane set runs a branch as a
// batch of its own from a later lane (frame.sub), which moves the index
// and lane 0 together. A read sees the lanes the declaration wrote, as
// any read of a local in its scope does: the declaration ran on every
// lane active there.

// declare compiles a declaration with a value.
func (c *compiler) declare(s *ir.Decl) func(*frame) {
	x := c.expr(s.Init)
	fn := c.assignValue(s.Var, x)
	if c.mode != modeRow || c.uni == nil || c.uni.assigned[s.Var] {
		return fn
	}
	if _, reg := c.vars[s.Var]; !reg {
		return fn // a uniform local or a temporary
	}
	var lin func(*frame) int64
	switch x := x.(type) {
	case *ev[int32]:
		lin = x.lin
	case *ev[int64]:
		lin = x.lin
	case *ev[uint32]:
		lin = x.lin
	case *ev[uint64]:
		lin = x.lin
	}
	if lin == nil {
		return fn
	}
	slot, last := c.nscal, c.lastDim()
	c.nscal++
	c.lins[s.Var] = slot
	return func(f *frame) {
		off := lin(f) - f.ix[last]
		if fn(f); f.err == nil {
			*scal[int64](f, slot) = off
		}
	}
}

// linearRef is a read of contiguous local v, nil if v is not one.
func (c *compiler) linearRef(v *ir.Var) value {
	slot, ok := c.lins[v]
	if !ok {
		return nil
	}
	r, last := c.regOf(c.shadow, v), c.lastDim()
	switch v.Type {
	case ir.I32:
		return linearT[int32](r, slot, last)
	case ir.I64:
		return linearT[int64](r, slot, last)
	case ir.U32:
		return linearT[uint32](r, slot, last)
	case ir.U64:
		return linearT[uint64](r, slot, last)
	}
	return nil
}

func linearT[T integer](r, slot, last int) value {
	return &ev[T]{
		v:   func(f *frame) []T { return reg[T](f, r) },
		lin: func(f *frame) int64 { return *scal[int64](f, slot) + f.ix[last] },
	}
}

// lastDim is the dimension of the contiguous index of a row batch.
func (c *compiler) lastDim() int {
	if c.task.Loop != nil {
		return len(c.task.Loop.Vars) - 1
	}
	return 0 // a thread loop's index: the one dimension of a block
}
