package cpu

import (
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Gathers and scatters by one varying index. An access whose indices are
// uniform but for one, a[i][v] or s[v][j] with v a vector (a shared
// tile's row or column, a histogram's bin, a table lookup), is checked
// and addressed in one pass over the lanes: the uniform indices are
// checked once and give a base address, and each lane checks its own
// index and reads or writes the element at base plus its index times the
// dimension's stride. The general path (access.offsets) first writes
// every lane's element offset to a register, dimension by dimension,
// and reads them back in a second pass; it stays for accesses with
// several varying indices.
//
// The lane loop reads the index vector in its own type (an int32 or
// uint32 index is not widened into a register first), and, when every
// lane is active, walks the lanes in order rather than through the mask's
// list.

// oneVarying is the dimension of a's only varying index, or -1.
func (a *access) oneVarying() int {
	vd := -1
	for d, ix := range a.idx {
		if ix.u == nil {
			if vd >= 0 {
				return -1
			}
			vd = d
		}
	}
	return vd
}

// around checks the uniform indices of an access varying in dimension vd
// and returns the address of the accessed value (the leaf, in a record)
// of the element whose index in vd is 0, vd's extent and its stride in
// bytes.
func (a *access) around(f *frame, arr *Array, vd int) (p unsafe.Pointer, n, stride int64, ok bool) {
	off, stride := int64(0), a.size
	for d := range a.dims {
		nd := int64(arr.Shape[d])
		i := int64(0)
		if d != vd {
			i = a.idx[d].u(f)
			if uint64(i) >= uint64(nd) {
				f.fail(a.rangeErr(i, nd, d))
				return nil, 0, 0, false
			}
		} else {
			n = nd
		}
		off = off*nd + i
		if d > vd {
			stride *= nd
		}
	}
	return a.ptr(arr, off), n, stride, true
}

// fusedLoad is the pass over the active lanes of a load varying in
// dimension vd only, with index vector idx, into d. It reports false
// after recording an index error.
func fusedLoad[T scalar, I integer | small](f *frame, a *access, arr *Array, vd int, idx []I, d []T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	if f.m.all {
		idx = idx[:len(d)]
		for k, i := range idx {
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			d[k] = *(*T)(unsafe.Add(p, int64(i)*stride))
		}
		return true
	}
	for _, k := range f.m.idx {
		i := idx[k]
		if uint64(int64(i)) >= uint64(n) {
			return a.fusedErr(f, int64(i), n, vd)
		}
		d[k] = *(*T)(unsafe.Add(p, int64(i)*stride))
	}
	return true
}

// fusedStore is fusedLoad's store of v, lane by lane in order (the last
// lane to write an element wins, as in a sequential run of the lanes);
// the lanes before a failing one have stored, as on the general path.
func fusedStore[T scalar, I integer | small](f *frame, a *access, arr *Array, vd int, idx []I, v []T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	if f.m.all {
		idx = idx[:len(v)]
		for k, i := range idx {
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) = v[k]
		}
		return true
	}
	for _, k := range f.m.idx {
		i := idx[k]
		if uint64(int64(i)) >= uint64(n) {
			return a.fusedErr(f, int64(i), n, vd)
		}
		*(*T)(unsafe.Add(p, int64(i)*stride)) = v[k]
	}
	return true
}

// fusedAdd adds v[k] (or u on every lane, when v is nil) to the element
// of each active lane, in lane order, with plain adds: for block-private
// memory (privateAdd).
func fusedAdd[T number, I integer | small](f *frame, a *access, arr *Array, vd int, idx []I, v []T, u T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	switch {
	case f.m.all && v == nil:
		for _, i := range idx[:f.n] {
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) += u
		}
	case f.m.all:
		idx = idx[:len(v)]
		for k, i := range idx {
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) += v[k]
		}
	default:
		for _, k := range f.m.idx {
			i := idx[k]
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			if v != nil {
				u = v[k]
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) += u
		}
	}
	return true
}

func (a *access) fusedErr(f *frame, i, n int64, d int) bool {
	f.fail(a.rangeErr(i, n, d))
	return false
}

// The fused passes of an access varying in dimension vd only, reading
// the index vector in its own type where it is a 32-bit or 64-bit
// integer (the index of a bin computed in uint32, a loop's int), else
// widened to int64 as the general path does. Each reports false after
// recording an error.

func gatherOne[T scalar](a *access, vd int) func(f *frame, arr *Array, d []T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return gatherBy[T](a, vd, x.v)
	case *ev[uint32]:
		return gatherBy[T](a, vd, x.v)
	}
	return gatherBy[T](a, vd, a.idx[vd].v)
}

func gatherBy[T scalar, I integer | small](a *access, vd int, iv func(*frame) []I) func(f *frame, arr *Array, d []T) bool {
	return func(f *frame, arr *Array, d []T) bool {
		idx := iv(f)
		return f.err == nil && fusedLoad(f, a, arr, vd, idx, d)
	}
}

func scatterOne[T scalar](a *access, vd int) func(f *frame, arr *Array, v []T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return scatterBy[T](a, vd, x.v)
	case *ev[uint32]:
		return scatterBy[T](a, vd, x.v)
	}
	return scatterBy[T](a, vd, a.idx[vd].v)
}

func scatterBy[T scalar, I integer | small](a *access, vd int, iv func(*frame) []I) func(f *frame, arr *Array, v []T) bool {
	return func(f *frame, arr *Array, v []T) bool {
		idx := iv(f)
		return f.err == nil && fusedStore(f, a, arr, vd, idx, v)
	}
}

func addOne[T number](a *access, vd int) func(f *frame, arr *Array, v []T, u T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return addBy[T](a, vd, x.v)
	case *ev[uint32]:
		return addBy[T](a, vd, x.v)
	}
	return addBy[T](a, vd, a.idx[vd].v)
}

func addBy[T number, I integer | small](a *access, vd int, iv func(*frame) []I) func(f *frame, arr *Array, v []T, u T) bool {
	return func(f *frame, arr *Array, v []T, u T) bool {
		idx := iv(f)
		return f.err == nil && fusedAdd(f, a, arr, vd, idx, v, u)
	}
}

// gatherer is the gather of a load of T by access a, for the lanes the
// contiguous paths do not take: the fused pass when one index varies,
// else offsets and a second pass.
func gatherer[T scalar](a *access) func(f *frame, arr *Array, d []T) {
	if vd := a.oneVarying(); vd >= 0 {
		pass := gatherOne[T](a, vd)
		return func(f *frame, arr *Array, d []T) { pass(f, arr, d) }
	}
	return func(f *frame, arr *Array, d []T) {
		off, ok := a.offsets(f, arr)
		if !ok {
			return
		}
		for _, k := range f.m.idx {
			d[k] = *(*T)(a.ptr(arr, off[k]))
		}
	}
}

// scatterer is gatherer's store.
func scatterer[T scalar](a *access) func(f *frame, arr *Array, v []T) {
	if vd := a.oneVarying(); vd >= 0 {
		pass := scatterOne[T](a, vd)
		return func(f *frame, arr *Array, v []T) { pass(f, arr, v) }
	}
	return func(f *frame, arr *Array, v []T) {
		off, ok := a.offsets(f, arr)
		if !ok {
			return
		}
		for _, k := range f.m.idx {
			*(*T)(a.ptr(arr, off[k])) = v[k]
		}
	}
}

// privateAdd compiles an add whose old value is unused to a shared array
// of a block task: memory that only the goroutine running the block
// touches, so the lanes add in lane order with plain adds, as the
// threads' atomics would in some order (integer sums are the same in any
// order; float adds in thread order are one of the orders a GPU may
// take). nil where the access has more than one varying index or none.
func privateAdd[T number](a *access, val *ev[T], r int) value {
	vd := a.oneVarying()
	if vd < 0 {
		return nil
	}
	pass, pi := addOne[T](a, vd), a.pi
	if val.u != nil {
		vu := val.u
		return vary(func(f *frame) []T {
			if v := vu(f); f.err == nil {
				pass(f, &f.a.Arrays[pi], nil, v)
			}
			return reg[T](f, r)
		})
	}
	vv := val.v
	return vary(func(f *frame) []T {
		if v := vv(f); f.err == nil {
			var z T
			pass(f, &f.a.Arrays[pi], v, z)
		}
		return reg[T](f, r)
	})
}

// isPrivate reports whether p is a shared array of this block task:
// memory of the frame running the block, which no other goroutine sees.
func (c *compiler) isPrivate(p *ir.Param) bool {
	return p != nil && p.IsShared() && c.task.Blocks != nil && c.mode != modeSerial
}
