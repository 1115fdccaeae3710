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

// reduction compiles s as a reduction, ok=false when it is not one.
func (c *compiler) reduction(e *ir.Atomic) (func(*frame), bool) {
	switch e.Op {
	case ir.AtomicAdd, ir.AtomicMin, ir.AtomicMax:
	default:
		return nil, false
	}
	if e.Array == nil || e.Compare != nil || exprHasAtomic(e.Value) {
		return nil, false
	}
	for _, x := range e.Index {
		if exprHasAtomic(x) {
			return nil, false
		}
	}
	switch e.Array.Elem {
	case ir.I32:
		return reduceT(c, e, atomicInt32(e.Op))
	case ir.I64:
		return reduceT(c, e, atomicInt64(e.Op))
	case ir.U32:
		return reduceT(c, e, atomicUint32(e.Op))
	case ir.U64:
		return reduceT(c, e, atomicUint64(e.Op))
	case ir.F32:
		return reduceT(c, e, atomicF32(e.Op))
	case ir.F64:
		return reduceT(c, e, atomicF64(e.Op))
	}
	return nil, false
}

func reduceT[T number](c *compiler, e *ir.Atomic, fn atomicFn[T]) (func(*frame), bool) {
	// The values are combined before the atomic writes memory, so loads
	// may read the arrays in place.
	c.noAlias = false
	mark := c.cur
	val := as[T](c, c.expr(e.Value))
	var z T
	a := c.access(e.Array, e.Index, int64(unsafe.Sizeof(z)))
	if !a.uniform() {
		c.cur = mark
		return nil, false
	}
	combine := combiner[T](e.Op)
	pi, vv := a.pi, vec(c, val)
	return func(f *frame) {
		v := vv(f)
		if f.err != nil || f.m.empty() {
			return
		}
		arr := &f.a.Arrays[pi]
		off, ok := a.prefix(f, arr, a.dims)
		if !ok {
			return
		}
		fn(unsafe.Add(arr.Data, off*a.size), combine(v, f.m), z)
	}, true
}

// combiner folds the active lanes of v in lane order.
func combiner[T number](op ir.AtomicOp) func(v []T, m mask) T {
	switch op {
	case ir.AtomicMin:
		return func(v []T, m mask) T {
			acc := v[m.idx[0]]
			for _, k := range m.idx[1:] {
				acc = min(acc, v[k])
			}
			return acc
		}
	case ir.AtomicMax:
		return func(v []T, m mask) T {
			acc := v[m.idx[0]]
			for _, k := range m.idx[1:] {
				acc = max(acc, v[k])
			}
			return acc
		}
	}
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
