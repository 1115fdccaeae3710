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

// A fused pass computes lane k's index as (x[k] >> sh) & m in the
// index's own type: from the index vector itself (sh 0, m all ones), or,
// for an index that is a bit field of a vector, bins[w>>8&255] or
// bins[key>>shift&15], from that vector, with no passes for the shift
// and the mask (bitField).

// fusedLoad is the pass over the active lanes of a load varying in
// dimension vd only, into d. It reports false after recording an index
// error.
func fusedLoad[T scalar, I integer | small](f *frame, a *access, arr *Array, vd int, xs []I, sh uint, m I, d []T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	if f.m.all {
		xs = xs[:len(d)]
		for k, x := range xs {
			i := x >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			d[k] = *(*T)(unsafe.Add(p, int64(i)*stride))
		}
		return true
	}
	for _, k := range f.m.idx {
		i := xs[k] >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
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
func fusedStore[T scalar, I integer | small](f *frame, a *access, arr *Array, vd int, xs []I, sh uint, m I, v []T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	if f.m.all {
		xs = xs[:len(v)]
		for k, x := range xs {
			i := x >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) = v[k]
		}
		return true
	}
	for _, k := range f.m.idx {
		i := xs[k] >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
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
func fusedAdd[T number, I integer | small](f *frame, a *access, arr *Array, vd int, xs []I, sh uint, m I, v []T, u T) bool {
	p, n, stride, ok := a.around(f, arr, vd)
	if !ok {
		return false
	}
	switch {
	case f.m.all && v == nil && stride == int64(unsafe.Sizeof(u)):
		// A histogram's bins: the stride a constant, a shift.
		for _, x := range xs[:f.n] {
			i := x >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*int64(unsafe.Sizeof(u)))) += u
		}
	case f.m.all && v == nil:
		for _, x := range xs[:f.n] {
			i := x >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) += u
		}
	case f.m.all:
		xs = xs[:len(v)]
		for k, x := range xs {
			i := x >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
			if uint64(int64(i)) >= uint64(n) {
				return a.fusedErr(f, int64(i), n, vd)
			}
			*(*T)(unsafe.Add(p, int64(i)*stride)) += v[k]
		}
	default:
		for _, k := range f.m.idx {
			i := xs[k] >> (sh & (uint(unsafe.Sizeof(m))*8 - 1)) & m
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

// bitField is an index (x >> sh) & m of a vector x, with sh a constant
// or a uniform count below the width and m a constant: raw is the index
// as compiled, x its vector operand, sh nil for no shift.
type bitField struct {
	x  value
	sh func(*frame) uint64
	m  uint64 // as the index type's bits
}

// bitFieldOf recognises an index of the form (x >> sh) & m, x >> sh or
// x & m with x varying, nil otherwise. x compiles again, beside the whole
// index: so that the general path keeps the index's vector, x may hold
// no atomic or call, whose second compilation could differ.
func (c *compiler) bitFieldOf(e ir.Expr) *bitField {
	t := e.Type()
	if t != ir.I32 && t != ir.U32 && t != ir.I64 {
		return nil
	}
	bf := &bitField{m: ^uint64(0)}
	matched := false
	if b, ok := e.(*ir.Binary); ok && b.Op == ir.And {
		x, k := b.X, b.Y
		if _, ok := x.(*ir.Const); ok {
			x, k = k, x
		}
		if kc, ok := k.(*ir.Const); ok && (t.IsUnsigned() || int64(kc.Bits) >= 0 && (t != ir.I32 || int32(kc.Bits) >= 0)) {
			bf.m, e, matched = kc.Bits, x, true
		}
	}
	if b, ok := e.(*ir.Binary); ok && b.Op == ir.Shr {
		width := uint64(t.Size() * 8)
		switch k := b.Y.(type) {
		case *ir.Const:
			if cnt := k.Bits; (k.T.IsUnsigned() || int64(cnt) >= 0) && cnt < width {
				bf.sh, e, matched = func(*frame) uint64 { return cnt }, b.X, true
			}
		default:
			if b.Y.Type().IsUnsigned() && c.uni != nil && c.uni.expr(b.Y) && pureIndex(b.Y) {
				if cnt := c.shiftCount(c.expr(b.Y)); cnt.u != nil {
					bf.sh, e, matched = cnt.u, b.X, true
				}
			}
		}
	}
	if !matched || !pureIndex(e) || e.Type() != t {
		return nil
	}
	x := c.expr(e)
	if x.typ() != t {
		return nil
	}
	switch x := x.(type) {
	case *ev[int32]:
		if x.v == nil {
			return nil
		}
	case *ev[uint32]:
		if x.v == nil {
			return nil
		}
	case *ev[int64]:
		if x.v == nil {
			return nil
		}
	}
	bf.x = x
	return bf
}

// pureIndex reports whether e holds no atomic and no call.
func pureIndex(e ir.Expr) bool {
	ok := true
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n.(type) {
		case *ir.Atomic, *ir.Call:
			ok = false
		}
		return ok
	})
	return ok
}

// laneIndexOf gives the vector and field of the index in dimension vd
// of a, as a fused pass of index type I reads them: the bit field's
// operand when its count is below the width in this batch, else the
// index itself.
func laneIndexOf[I integer](a *access, vd int, iv func(*frame) []I) func(f *frame) ([]I, uint, I) {
	bf := a.idx[vd].field
	all := ^I(0)
	if bf == nil {
		return func(f *frame) ([]I, uint, I) { return iv(f), 0, all }
	}
	xv, m := bf.x.(*ev[I]).v, I(bf.m)
	width := uint64(unsafe.Sizeof(m) * 8)
	sh := bf.sh
	if sh == nil {
		return func(f *frame) ([]I, uint, I) { return xv(f), 0, m }
	}
	return func(f *frame) ([]I, uint, I) {
		if s := sh(f); s < width {
			return xv(f), uint(s), m
		}
		return iv(f), 0, all
	}
}

// The fused passes of an access varying in dimension vd only, reading
// the index vector in its own type where it is a 32-bit or 64-bit
// integer (the index of a bin computed in uint32, a loop's int), else
// widened to int64 as the general path does. Each reports false after
// recording an error.

func gatherOne[T scalar](a *access, vd int) func(f *frame, arr *Array, d []T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return gatherBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[uint32]:
		return gatherBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[int64]:
		return gatherBy[T](a, vd, laneIndexOf(a, vd, x.v))
	}
	a.idx[vd].field = nil
	return gatherBy[T](a, vd, laneIndexOf(a, vd, a.idx[vd].v))
}

func gatherBy[T scalar, I integer](a *access, vd int, li func(*frame) ([]I, uint, I)) func(f *frame, arr *Array, d []T) bool {
	return func(f *frame, arr *Array, d []T) bool {
		xs, sh, m := li(f)
		return f.err == nil && fusedLoad(f, a, arr, vd, xs, sh, m, d)
	}
}

func scatterOne[T scalar](a *access, vd int) func(f *frame, arr *Array, v []T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return scatterBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[uint32]:
		return scatterBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[int64]:
		return scatterBy[T](a, vd, laneIndexOf(a, vd, x.v))
	}
	a.idx[vd].field = nil
	return scatterBy[T](a, vd, laneIndexOf(a, vd, a.idx[vd].v))
}

func scatterBy[T scalar, I integer](a *access, vd int, li func(*frame) ([]I, uint, I)) func(f *frame, arr *Array, v []T) bool {
	return func(f *frame, arr *Array, v []T) bool {
		xs, sh, m := li(f)
		return f.err == nil && fusedStore(f, a, arr, vd, xs, sh, m, v)
	}
}

func addOne[T number](a *access, vd int) func(f *frame, arr *Array, v []T, u T) bool {
	switch x := a.idx[vd].raw.(type) {
	case *ev[int32]:
		return addBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[uint32]:
		return addBy[T](a, vd, laneIndexOf(a, vd, x.v))
	case *ev[int64]:
		return addBy[T](a, vd, laneIndexOf(a, vd, x.v))
	}
	a.idx[vd].field = nil
	return addBy[T](a, vd, laneIndexOf(a, vd, a.idx[vd].v))
}

func addBy[T number, I integer](a *access, vd int, li func(*frame) ([]I, uint, I)) func(f *frame, arr *Array, v []T, u T) bool {
	return func(f *frame, arr *Array, v []T, u T) bool {
		xs, sh, m := li(f)
		return f.err == nil && fusedAdd(f, a, arr, vd, xs, sh, m, v, u)
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
