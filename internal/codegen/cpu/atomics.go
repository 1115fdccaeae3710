package cpu

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Atomics use sync/atomic on the array element itself, so kernels that
// share memory only through atomics are race-free for the race detector
// and for the memory model. Each lane performs its own operation, in lane
// order, and gets the element's old value. Integer add, sub, and, or and
// exchange map to one sync/atomic call; the rest (xor, min, max, cas, and
// every float operation on the element's bits) are compare-and-swap loops.

// atomicFn applies one atomic operation to *p and returns the old value;
// cmp is used by CAS only.
type atomicFn[T scalar] func(p unsafe.Pointer, v, cmp T) T

// atomic compiles e; unused says its old value is discarded (an
// expression statement), which may make it a reduction (reduce.go).
func (c *compiler) atomic(e *ir.Atomic, unused bool) value {
	if e.Array == nil {
		c.failf("atomic on a missing array")
	}
	switch e.Type() { // the element's, or the record leaf's
	case ir.I32:
		return atomicT(c, e, atomicInt32(e.Op), unused)
	case ir.I64:
		return atomicT(c, e, atomicInt64(e.Op), unused)
	case ir.U32:
		return atomicT(c, e, atomicUint32(e.Op), unused)
	case ir.U64:
		return atomicT(c, e, atomicUint64(e.Op), unused)
	case ir.F32:
		return atomicT(c, e, atomicF32(e.Op), unused)
	case ir.F64:
		return atomicT(c, e, atomicF64(e.Op), unused)
	}
	c.failf("atomic %v on array %s of %v: atomics need 32- or 64-bit integer or float elements", e.Op, e.Array.Name, e.Type())
	return nil
}

func atomicT[T number](c *compiler, e *ir.Atomic, fn atomicFn[T], unused bool) value {
	if fn == nil {
		c.failf("atomic %v does not apply to array %s of %v", e.Op, e.Array.Name, e.Type())
	}
	private := c.isPrivate(e.Array)
	if private {
		// A block's shared array is the frame's: one goroutine runs the
		// block, so its threads' atomics need no atomic instructions.
		fn = privateFn[T](e.Op)
	}
	red := unused && c.reducible(e)
	if red {
		// The values combine before the atomic writes memory, so loads
		// may read the arrays in place.
		c.noAlias = false
	}
	val := as[T](c, c.expr(e.Value))
	if (e.Op == ir.AtomicCAS) != (e.Compare != nil) {
		c.failf("atomic %v: a compare operand is required for cas and only for cas", e.Op)
	}
	cmp := uni(func(*frame) T { var z T; return z })
	if e.Compare != nil {
		cmp = as[T](c, c.expr(e.Compare))
	}
	var z T
	a := c.leafAccess(e.Array, e.Index, e.Leaf, int64(unsafe.Sizeof(z)))
	pi, vv, cv, r := a.pi, vec(c, val), vec(c, cmp), c.tmp()
	if red && a.uniform() {
		return reduction(c, e, a, vv, fn, r)
	}
	if private && unused && e.Op == ir.AtomicAdd {
		if add := privateAdd(a, val, r); add != nil {
			return add
		}
	}
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		v, w := vv(f), cv(f)
		if f.err != nil {
			return d
		}
		arr := &f.a.Arrays[pi]
		off, ok := a.offsets(f, arr)
		if !ok {
			return d
		}
		for _, k := range f.m.idx {
			d[k] = fn(a.ptr(arr, off[k]), v[k], w[k])
		}
		return d
	})
}

func atomicInt32(op ir.AtomicOp) atomicFn[int32] {
	switch op {
	case ir.AtomicAdd:
		return func(p unsafe.Pointer, v, _ int32) int32 { return atomic.AddInt32((*int32)(p), v) - v }
	case ir.AtomicSub:
		return func(p unsafe.Pointer, v, _ int32) int32 { return atomic.AddInt32((*int32)(p), -v) + v }
	case ir.AtomicAnd:
		return func(p unsafe.Pointer, v, _ int32) int32 { return atomic.AndInt32((*int32)(p), v) }
	case ir.AtomicOr:
		return func(p unsafe.Pointer, v, _ int32) int32 { return atomic.OrInt32((*int32)(p), v) }
	case ir.AtomicExchange:
		return func(p unsafe.Pointer, v, _ int32) int32 { return atomic.SwapInt32((*int32)(p), v) }
	}
	return casLoop(op, func(p unsafe.Pointer) *atomic.Int32 { return (*atomic.Int32)(p) })
}

func atomicInt64(op ir.AtomicOp) atomicFn[int64] {
	switch op {
	case ir.AtomicAdd:
		return func(p unsafe.Pointer, v, _ int64) int64 { return atomic.AddInt64((*int64)(p), v) - v }
	case ir.AtomicSub:
		return func(p unsafe.Pointer, v, _ int64) int64 { return atomic.AddInt64((*int64)(p), -v) + v }
	case ir.AtomicAnd:
		return func(p unsafe.Pointer, v, _ int64) int64 { return atomic.AndInt64((*int64)(p), v) }
	case ir.AtomicOr:
		return func(p unsafe.Pointer, v, _ int64) int64 { return atomic.OrInt64((*int64)(p), v) }
	case ir.AtomicExchange:
		return func(p unsafe.Pointer, v, _ int64) int64 { return atomic.SwapInt64((*int64)(p), v) }
	}
	return casLoop(op, func(p unsafe.Pointer) *atomic.Int64 { return (*atomic.Int64)(p) })
}

func atomicUint32(op ir.AtomicOp) atomicFn[uint32] {
	switch op {
	case ir.AtomicAdd:
		return func(p unsafe.Pointer, v, _ uint32) uint32 { return atomic.AddUint32((*uint32)(p), v) - v }
	case ir.AtomicSub:
		return func(p unsafe.Pointer, v, _ uint32) uint32 { return atomic.AddUint32((*uint32)(p), -v) + v }
	case ir.AtomicAnd:
		return func(p unsafe.Pointer, v, _ uint32) uint32 { return atomic.AndUint32((*uint32)(p), v) }
	case ir.AtomicOr:
		return func(p unsafe.Pointer, v, _ uint32) uint32 { return atomic.OrUint32((*uint32)(p), v) }
	case ir.AtomicExchange:
		return func(p unsafe.Pointer, v, _ uint32) uint32 { return atomic.SwapUint32((*uint32)(p), v) }
	}
	return casLoop(op, func(p unsafe.Pointer) *atomic.Uint32 { return (*atomic.Uint32)(p) })
}

func atomicUint64(op ir.AtomicOp) atomicFn[uint64] {
	switch op {
	case ir.AtomicAdd:
		return func(p unsafe.Pointer, v, _ uint64) uint64 { return atomic.AddUint64((*uint64)(p), v) - v }
	case ir.AtomicSub:
		return func(p unsafe.Pointer, v, _ uint64) uint64 { return atomic.AddUint64((*uint64)(p), -v) + v }
	case ir.AtomicAnd:
		return func(p unsafe.Pointer, v, _ uint64) uint64 { return atomic.AndUint64((*uint64)(p), v) }
	case ir.AtomicOr:
		return func(p unsafe.Pointer, v, _ uint64) uint64 { return atomic.OrUint64((*uint64)(p), v) }
	case ir.AtomicExchange:
		return func(p unsafe.Pointer, v, _ uint64) uint64 { return atomic.SwapUint64((*uint64)(p), v) }
	}
	return casLoop(op, func(p unsafe.Pointer) *atomic.Uint64 { return (*atomic.Uint64)(p) })
}

// word is the sync/atomic typed integer of an integer element.
type word[T integer] interface {
	Load() T
	CompareAndSwap(old, new T) bool
}

// casLoop implements xor, min, max and cas on an integer element.
func casLoop[T integer, W word[T]](op ir.AtomicOp, at func(unsafe.Pointer) W) atomicFn[T] {
	var next func(old, v, cmp T) (T, bool) // new value, and whether to write
	switch op {
	case ir.AtomicXor:
		next = func(old, v, _ T) (T, bool) { return old ^ v, true }
	case ir.AtomicMin:
		next = func(old, v, _ T) (T, bool) { return v, v < old }
	case ir.AtomicMax:
		next = func(old, v, _ T) (T, bool) { return v, v > old }
	case ir.AtomicCAS:
		next = func(old, v, cmp T) (T, bool) { return v, old == cmp }
	default:
		return nil
	}
	return func(p unsafe.Pointer, v, cmp T) T {
		w := at(p)
		for {
			old := w.Load()
			nv, write := next(old, v, cmp)
			if !write || w.CompareAndSwap(old, nv) {
				return old
			}
		}
	}
}

// floatNext is the update rule of a float atomic: the new value and
// whether to write it. Min and max follow Go's builtins (NaN wins, -0 < +0);
// CAS compares with ==.
func floatNext[T float](op ir.AtomicOp) func(old, v, cmp T) (T, bool) {
	switch op {
	case ir.AtomicAdd:
		return func(old, v, _ T) (T, bool) { return old + v, true }
	case ir.AtomicSub:
		return func(old, v, _ T) (T, bool) { return old - v, true }
	case ir.AtomicMin:
		return func(old, v, _ T) (T, bool) { return min(old, v), true }
	case ir.AtomicMax:
		return func(old, v, _ T) (T, bool) { return max(old, v), true }
	case ir.AtomicExchange:
		return func(_, v, _ T) (T, bool) { return v, true }
	case ir.AtomicCAS:
		return func(old, v, cmp T) (T, bool) { return v, old == cmp }
	}
	return nil
}

func atomicF32(op ir.AtomicOp) atomicFn[float32] {
	next := floatNext[float32](op)
	if next == nil {
		return nil
	}
	return func(p unsafe.Pointer, v, cmp float32) float32 {
		w := (*atomic.Uint32)(p)
		for {
			ob := w.Load()
			old := math.Float32frombits(ob)
			nv, write := next(old, v, cmp)
			if !write || w.CompareAndSwap(ob, math.Float32bits(nv)) {
				return old
			}
		}
	}
}

func atomicF64(op ir.AtomicOp) atomicFn[float64] {
	next := floatNext[float64](op)
	if next == nil {
		return nil
	}
	return func(p unsafe.Pointer, v, cmp float64) float64 {
		w := (*atomic.Uint64)(p)
		for {
			ob := w.Load()
			old := math.Float64frombits(ob)
			nv, write := next(old, v, cmp)
			if !write || w.CompareAndSwap(ob, math.Float64bits(nv)) {
				return old
			}
		}
	}
}

// privateFn is op on memory that one goroutine alone touches (a block's
// shared arrays): the same rules as the atomics, with plain loads and
// stores.
func privateFn[T number](op ir.AtomicOp) atomicFn[T] {
	var next func(old, v, cmp T) (T, bool)
	switch op {
	case ir.AtomicAdd:
		next = func(old, v, _ T) (T, bool) { return old + v, true }
	case ir.AtomicSub:
		next = func(old, v, _ T) (T, bool) { return old - v, true }
	case ir.AtomicMin:
		next = func(old, v, _ T) (T, bool) { return min(old, v), true }
	case ir.AtomicMax:
		next = func(old, v, _ T) (T, bool) { return max(old, v), true }
	case ir.AtomicExchange:
		next = func(_, v, _ T) (T, bool) { return v, true }
	case ir.AtomicCAS:
		next = func(old, v, cmp T) (T, bool) { return v, old == cmp }
	default:
		next = bitNext[T](op)
	}
	if next == nil {
		return nil
	}
	return func(p unsafe.Pointer, v, cmp T) T {
		q := (*T)(p)
		old := *q
		if nv, write := next(old, v, cmp); write {
			*q = nv
		}
		return old
	}
}

// bitNext is the update rule of and, or and xor on an integer T; nil for
// a float T or another op.
func bitNext[T number](op ir.AtomicOp) func(old, v, cmp T) (T, bool) {
	var z T
	switch any(z).(type) {
	case int32:
		return any(bitRule[int32](op)).(func(old, v, cmp T) (T, bool))
	case int64:
		return any(bitRule[int64](op)).(func(old, v, cmp T) (T, bool))
	case uint32:
		return any(bitRule[uint32](op)).(func(old, v, cmp T) (T, bool))
	case uint64:
		return any(bitRule[uint64](op)).(func(old, v, cmp T) (T, bool))
	}
	return nil
}

func bitRule[T integer](op ir.AtomicOp) func(old, v, cmp T) (T, bool) {
	switch op {
	case ir.AtomicAnd:
		return func(old, v, _ T) (T, bool) { return old & v, true }
	case ir.AtomicOr:
		return func(old, v, _ T) (T, bool) { return old | v, true }
	case ir.AtomicXor:
		return func(old, v, _ T) (T, bool) { return old ^ v, true }
	}
	return nil
}
