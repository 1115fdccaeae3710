package cpu

import (
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Reductions (SPEC §3). qd.AtomicAdd, Min or Max whose old value is unused
// and whose address is the same for every lane of a batch (it does not vary
// with the innermost parallel index) is a reduction: the active lanes'
// values combine in lane order, and the batch's total goes to memory with
// one atomic, instead of one atomic per lane on one contended element.
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
// never read.
func reduction[T number](a *access, vv func(*frame) []T, op ir.AtomicOp, fn atomicFn[T], r int) value {
	combine := combiner[T](op)
	return vary(func(f *frame) []T {
		v := vv(f)
		if f.err != nil || f.m.empty() {
			return reg[T](f, r)
		}
		arr := &f.a.Arrays[a.pi]
		if off, ok := a.prefix(f, arr, a.dims); ok {
			var z T
			fn(unsafe.Add(arr.Data, off*a.size), combine(v, f.m), z)
		}
		return reg[T](f, r)
	})
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
