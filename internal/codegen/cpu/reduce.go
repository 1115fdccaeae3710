package cpu

import "github.com/quadrants-go/qd/internal/ir"

// Reductions (docs/semantics.md#reductions). qd.AtomicAdd, Min or Max whose old value is unused
// and whose address is the same for every lane of a batch (it does not vary
// with the innermost parallel index) is a reduction: the active lanes'
// values combine in lane order, and the batch's total goes to memory with
// one atomic, or the run's where nothing in the body could tell (holdable),
// instead of one atomic per lane on one contended element.
// Integer results are exact in any order; float sums round differently
// from a sequential loop, as on every backend (the differential tests
// allow for it); float min and max are exact.

// reducible reports whether e, its old value unused, is a reduction: add,
// min or max, at an address the uniformity analysis finds uniform, with no
// atomic inside.
func (c *compiler) reducible(e *ir.Atomic) bool {
	switch e.Op {
	case ir.AtomicAdd, ir.AtomicMin, ir.AtomicMax:
	default:
		return false
	}
	if c.mode == modeSerial || c.uni == nil || e.Compare != nil || exprHasAtomic(e.Value) {
		return false
	}
	for _, x := range e.Index {
		if exprHasAtomic(x) || !c.uni.expr(x) {
			return false
		}
	}
	return true
}

// reduction is the compiled reduction op into the uniform access a of the
// values vv, with fn the element's atomic; its value (register r) is
// never read. Where the body allows it (holdable), the total of a batch
// is held back in the frame while the next batches reduce into the same
// element, and goes to memory when the element changes or the run ends
// (code.flush): one atomic per run and element, not per batch, so that
// two cores do not pass the element's cache line back and forth (docs/semantics.md#reductions:
// one atomic per worker on the CPU). Elsewhere each batch's total goes to
// memory at its statement.
func reduction[T number](c *compiler, e *ir.Atomic, a *access, vv func(*frame) []T, fn atomicFn[T], r int) value {
	combine := combiner[T](e.Op)
	var z T
	if !c.holdable(e) {
		return vary(func(f *frame) []T {
			v := vv(f)
			if f.err != nil || f.m.empty() {
				return reg[T](f, r)
			}
			arr := &f.a.Arrays[a.pi]
			if off, ok := a.prefix(f, arr, a.dims); ok {
				fn(a.ptr(arr, off), combine(v, f.m), z)
			}
			return reg[T](f, r)
		})
	}
	two := pair[T](e.Op)
	acc, site := c.nscal, c.nred
	c.nscal++
	c.nred++
	c.flush = append(c.flush, func(f *frame) {
		if p := f.red[site]; p != nil {
			fn(p, *scal[T](f, acc), z)
			f.red[site] = nil
		}
	})
	return vary(func(f *frame) []T {
		v := vv(f)
		if f.err != nil || f.m.empty() {
			return reg[T](f, r)
		}
		arr := &f.a.Arrays[a.pi]
		off, ok := a.prefix(f, arr, a.dims)
		if !ok {
			return reg[T](f, r)
		}
		p, total := a.ptr(arr, off), combine(v, f.m)
		switch held := f.red[site]; {
		case held == p:
			*scal[T](f, acc) = two(*scal[T](f, acc), total)
		case held != nil:
			fn(held, *scal[T](f, acc), z)
			fallthrough
		default:
			f.red[site], *scal[T](f, acc) = p, total
		}
		return reg[T](f, r)
	})
}

// pair is op on two values.
func pair[T number](op ir.AtomicOp) func(a, b T) T {
	switch op {
	case ir.AtomicMin:
		return func(a, b T) T { return min(a, b) }
	case ir.AtomicMax:
		return func(a, b T) T { return max(a, b) }
	}
	return func(a, b T) T { return a + b }
}

// combiner folds the active lanes of v in lane order with op.
func combiner[T number](op ir.AtomicOp) func(v []T, m mask) T {
	if op == ir.AtomicAdd {
		return func(v []T, m mask) T {
			if m.all {
				acc := v[0]
				for _, x := range v[1:len(m.idx)] {
					acc += x
				}
				return acc
			}
			acc := v[m.idx[0]]
			for _, k := range m.idx[1:] {
				acc += v[k]
			}
			return acc
		}
	}
	pick := func(a, b T) T { return min(a, b) }
	if op == ir.AtomicMax {
		pick = func(a, b T) T { return max(a, b) }
	}
	return func(v []T, m mask) T {
		acc := v[m.idx[0]]
		for _, k := range m.idx[1:] {
			acc = pick(acc, v[k])
		}
		return acc
	}
}

// holdable reports whether reduction e may hold its total back to the end
// of a run: only where nothing in the body could tell. A body with a loop
// could wait for another row's reduction (raise a flag with one, then spin
// until the other's is up, as the behaviour suite's rendezvous does), and
// would never see a total held back; a load, store or other kind of atomic
// on e's array could see a total late or reorder against it. A loop-free
// body whose only uses of the array are reductions of e's kind cannot:
// the run ends, and its total arrives, whatever the other rows do.
func (c *compiler) holdable(e *ir.Atomic) bool {
	if c.holds == nil {
		c.holds = map[*ir.Param]bool{}
	}
	if ok, seen := c.holds[e.Array]; seen {
		return ok
	}
	if e.Array.IsShared() {
		// A block's shared memory is zeroed for the next block: a total
		// held back past the block would land in another block's.
		c.holds[e.Array] = false
		return false
	}
	// Atomics of one kind whose old values are unused commute: those may
	// share the array.
	ok, unused := true, map[*ir.Atomic]bool{}
	ir.Inspect(c.body, func(n ir.Node) bool {
		if !ok {
			return false // the answer is known: skip the rest
		}
		switch n := n.(type) {
		case *ir.For:
			ok = false
		case *ir.ExprStmt:
			if x, isAtomic := n.X.(*ir.Atomic); isAtomic {
				unused[x] = true
			}
		case *ir.Load:
			ok = n.Array != e.Array
		case *ir.Store:
			ok = n.Array != e.Array
		case *ir.Atomic:
			ok = n.Array != e.Array || n.Op == e.Op && unused[n]
		}
		return ok
	})
	c.holds[e.Array] = ok
	return ok
}
