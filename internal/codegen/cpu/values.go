package cpu

import (
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Values beyond the 32- and 64-bit scalars: the leaves of record
// elements and bit casts (the 8- and 16-bit integers are values of their
// own Go types throughout: lanes.go's small).
//
// A record element is Rec.Size bytes and a leaf lies at its offset in
// it, so the leaves of consecutive lanes are Rec.Size bytes apart, not
// contiguous: a load or store of a leaf never takes the copy or in-place
// paths of a scalar array (memory.go), which stay as they were. Where the
// lanes' elements are consecutive (a contiguous index, checked once for
// the batch by span) it steps through them; otherwise each lane's index
// is checked (offsets). Atomics and reductions on leaves are the scalar
// ones at the leaf's address (access.ptr).

// leafAccess is access for leaf of p's elements: of the record's size
// and the leaf's offset, or of size (the scalar's) for an array of
// scalars.
func (c *compiler) leafAccess(p *ir.Param, index []ir.Expr, leaf int, size int64) *access {
	if p != nil && p.Rec != nil {
		size = int64(p.Rec.Size)
	}
	a := c.access(p, index, size)
	if p.Rec != nil {
		a.leaf = int64(p.LeafOffset(leaf))
	}
	return a
}

func (c *compiler) loadLeaf(e *ir.Load) value {
	switch t := e.Type(); t {
	case ir.Bool:
		return loadLeafT[bool](c, e)
	case ir.I32:
		return loadLeafT[int32](c, e)
	case ir.I64:
		return loadLeafT[int64](c, e)
	case ir.U32:
		return loadLeafT[uint32](c, e)
	case ir.U64:
		return loadLeafT[uint64](c, e)
	case ir.F32:
		return loadLeafT[float32](c, e)
	case ir.F64:
		return loadLeafT[float64](c, e)
	case ir.I8:
		return loadLeafT[int8](c, e)
	case ir.I16:
		return loadLeafT[int16](c, e)
	case ir.U8:
		return loadLeafT[uint8](c, e)
	case ir.U16:
		return loadLeafT[uint16](c, e)
	}
	c.failf("load of leaf %d of %s, which has no such leaf", e.Leaf, e.Array.Name)
	return nil
}

func loadLeafT[T scalar](c *compiler, e *ir.Load) value {
	a := c.leafAccess(e.Array, e.Index, e.Leaf, 0)
	pi := a.pi
	var z T
	if a.uniform() {
		return uni(func(f *frame) T {
			arr := &f.a.Arrays[pi]
			off, ok := a.prefix(f, arr, a.dims)
			if !ok {
				return z
			}
			return *(*T)(a.ptr(arr, off))
		})
	}
	r, strided, gather := c.tmp(), a.contiguous(), gatherer[T](a)
	return vary(func(f *frame) []T {
		d := reg[T](f, r)
		arr := &f.a.Arrays[pi]
		if strided {
			if base, _, _, ok := a.span(f, arr); ok {
				for _, k := range f.m.idx {
					d[k] = *(*T)(a.ptr(arr, base+int64(k)))
				}
				return d
			}
			if f.err != nil {
				return d
			}
		}
		gather(f, arr, d)
		return d
	})
}

func (c *compiler) storeLeaf(s *ir.Store) func(*frame) {
	switch t := s.Array.LeafType(s.Leaf); t {
	case ir.Bool:
		return storeLeafT[bool](c, s)
	case ir.I32:
		return storeLeafT[int32](c, s)
	case ir.I64:
		return storeLeafT[int64](c, s)
	case ir.U32:
		return storeLeafT[uint32](c, s)
	case ir.U64:
		return storeLeafT[uint64](c, s)
	case ir.F32:
		return storeLeafT[float32](c, s)
	case ir.F64:
		return storeLeafT[float64](c, s)
	case ir.I8:
		return storeLeafT[int8](c, s)
	case ir.I16:
		return storeLeafT[int16](c, s)
	case ir.U8:
		return storeLeafT[uint8](c, s)
	case ir.U16:
		return storeLeafT[uint16](c, s)
	}
	c.failf("store to leaf %d of %s, which has no such leaf", s.Leaf, s.Array.Name)
	return nil
}

func storeLeafT[T scalar](c *compiler, s *ir.Store) func(*frame) {
	val := c.expr(s.Value)
	if t := s.Array.LeafType(s.Leaf); val.typ() != t {
		c.failf("store of %v to leaf %d of %s, of %v", val.typ(), s.Leaf, s.Array.Name, t)
	}
	x := as[T](c, val)
	a := c.leafAccess(s.Array, s.Index, s.Leaf, 0)
	pi := a.pi
	if a.uniform() {
		// Every active lane writes the same element; the last one wins, as
		// in a sequential run of the lanes.
		xv := vec(c, x)
		return func(f *frame) {
			v := xv(f)
			arr := &f.a.Arrays[pi]
			if f.err != nil {
				return
			}
			if off, ok := a.prefix(f, arr, a.dims); ok {
				*(*T)(a.ptr(arr, off)) = v[f.m.idx[len(f.m.idx)-1]]
			}
		}
	}
	xv, strided, scatter := vec(c, x), a.contiguous(), scatterer[T](a)
	return func(f *frame) {
		v := xv(f)
		if f.err != nil {
			return
		}
		arr := &f.a.Arrays[pi]
		if strided {
			if base, _, _, ok := a.span(f, arr); ok {
				for _, k := range f.m.idx {
					*(*T)(a.ptr(arr, base+int64(k))) = v[k]
				}
				return
			}
			if f.err != nil {
				return
			}
		}
		scatter(f, arr, v)
	}
}

// bitcast compiles x's bits read as another type of the same size
// (gosem.Bitcast): the lanes are read in place, no pass.
func (c *compiler) bitcast(e *ir.Bitcast) value {
	x := c.expr(e.X)
	switch x := x.(type) {
	case *ev[int32]:
		return bitsFrom(c, x, e.To)
	case *ev[int64]:
		return bitsFrom(c, x, e.To)
	case *ev[uint32]:
		return bitsFrom(c, x, e.To)
	case *ev[uint64]:
		return bitsFrom(c, x, e.To)
	case *ev[float32]:
		return bitsFrom(c, x, e.To)
	case *ev[float64]:
		return bitsFrom(c, x, e.To)
	}
	c.failf("bit cast of %v to %v", x.typ(), e.To)
	return nil
}

func bitsFrom[T number](c *compiler, x *ev[T], to ir.Type) value {
	var z T
	if to.Size() != int(unsafe.Sizeof(z)) || to.IsSmall() {
		c.failf("bit cast of %v to %v: the sizes differ", irType[T](), to)
	}
	switch to {
	case ir.I32:
		return bitsOp[T, int32](x)
	case ir.I64:
		return bitsOp[T, int64](x)
	case ir.U32:
		return bitsOp[T, uint32](x)
	case ir.U64:
		return bitsOp[T, uint64](x)
	case ir.F32:
		return bitsOp[T, float32](x)
	case ir.F64:
		return bitsOp[T, float64](x)
	}
	c.failf("bit cast to %v", to)
	return nil
}

// bitsOp is x's bits as U, of T's size.
func bitsOp[T, U number](x *ev[T]) *ev[U] {
	if x.k != nil {
		return known(*(*U)(unsafe.Pointer(x.k)))
	}
	if x.u != nil {
		xu := x.u
		return uni(func(f *frame) U {
			v := xu(f)
			return *(*U)(unsafe.Pointer(&v))
		})
	}
	// The view lives as long as x's register, which holds until the
	// statement ends, as any operand's does (convertOp's same-size case).
	xv := x.v
	return vary(func(f *frame) []U {
		a := xv(f)
		return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
	})
}
