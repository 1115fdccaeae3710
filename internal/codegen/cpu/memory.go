package cpu

import (
	"math"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// index is one compiled array index, widened to int64. A U64 index of 2^63
// or more becomes negative, which is out of range like the real value.
type index struct {
	u    func(*frame) int64         // uniform
	v    func(*frame) []int64       // varying
	lin  func(*frame) (int64, bool) // with v: lane k holds (index type)(lin+k), when lin holds
	maxv int64                      // largest value of the index type, for lin
	u64  bool                       // print negative values as uint64
	raw  value                      // the index as compiled, in its own type (gather.go)
	// field is the index as a bit field of a vector, or nil (gather.go).
	field *bitField
}

func (c *compiler) indexExpr(e ir.Expr) index {
	switch x := c.expr(e).(type) {
	case *ev[int32]:
		return toIndex(c, x, math.MaxInt32, false)
	case *ev[int64]:
		return toIndex(c, x, math.MaxInt64, false)
	case *ev[uint32]:
		return toIndex(c, x, math.MaxUint32, false)
	case *ev[uint64]:
		return toIndex(c, x, math.MaxInt64, true)
	case *ev[int8]:
		return toIndex(c, x, math.MaxInt8, false)
	case *ev[int16]:
		return toIndex(c, x, math.MaxInt16, false)
	case *ev[uint8]:
		return toIndex(c, x, math.MaxUint8, false)
	case *ev[uint16]:
		return toIndex(c, x, math.MaxUint16, false)
	default:
		c.failf("index has type %v, want an integer type", x.typ())
	}
	return index{}
}

func toIndex[T integer | small](c *compiler, x *ev[T], maxv int64, u64 bool) index {
	ix := index{maxv: maxv, u64: u64, raw: x}
	if x.u != nil {
		xu := x.u
		if u, ok := any(xu).(func(*frame) int64); ok {
			ix.u = u // already an int64: no conversion closure
			return ix
		}
		ix.u = func(f *frame) int64 { return int64(xu(f)) }
		return ix
	}
	ix.lin = x.lin
	xv := x.v
	var z T
	if unsafe.Sizeof(z) == 8 {
		// Same bits: reinterpret instead of converting.
		ix.v = func(f *frame) []int64 {
			s := xv(f)
			return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
		}
		return ix
	}
	r := c.tmp()
	ix.v = func(f *frame) []int64 {
		d, s := reg[int64](f, r), xv(f)
		s = s[:len(d)]
		for i := range d {
			d[i] = int64(s[i])
		}
		return d
	}
	return ix
}

// access is a compiled a[i][j][k]: the array, its indices and what it takes
// to report an index out of range.
type access struct {
	pi, dims int
	idx      []index
	name     string
	pos      ir.Pos
	kname    string
	size     int64
	off      int // temporary register for per-lane offsets
	// flat: a flat batch (short rows) indexes the array with the parallel
	// indices themselves, a[i][j]: when the array's inner lengths are the
	// loop's inner extents, lane k's element is the one after lane k-1's,
	// across rows too.
	flat bool
	// leaf is the byte offset of the accessed leaf within a record
	// element (size is then the record's); 0 for an array of scalars.
	leaf int64
}

// ptr is the address of the accessed value (the leaf, in a record) of
// element off.
func (a *access) ptr(arr *Array, off int64) unsafe.Pointer {
	return unsafe.Add(arr.Data, off*a.size+a.leaf)
}

func (c *compiler) access(p *ir.Param, index []ir.Expr, size int64) *access {
	pi := c.arraySlot(p)
	if len(index) != p.Dims {
		c.failf("%d indices for %d-dimensional array %s", len(index), p.Dims, p.Name)
	}
	a := &access{pi: pi, dims: p.Dims, name: p.Name, pos: c.pos, kname: c.kname, size: size}
	for _, e := range index {
		ix := c.indexExpr(e)
		if x, ok := ix.raw.(*ev[int64]); ix.u == nil && ix.lin == nil && (!ok || x.qa == nil) {
			ix.field = c.bitFieldOf(e)
		}
		a.idx = append(a.idx, ix)
	}
	a.off = c.tmp()
	a.flat = c.mode == modeFlat && c.byIndexVars(index)
	return a
}

// byIndexVars reports whether index is exactly the parallel loop's index
// variables, in order, none of them assigned to.
func (c *compiler) byIndexVars(index []ir.Expr) bool {
	if c.task.Loop == nil || len(index) != len(c.task.Loop.Vars) {
		return false
	}
	for d, e := range index {
		r, ok := e.(*ir.VarRef)
		if !ok || r.Var != c.task.Loop.Vars[d] || c.assigned[r.Var] {
			return false
		}
	}
	return true
}

func (a *access) rangeErr(i int64, n int64, d int) error {
	if a.idx[d].u64 && i < 0 {
		return ir.Errorf(a.pos, a.kname, "index %d out of range [0:%d) in dimension %d of %s", uint64(i), n, d, a.name)
	}
	return ir.Errorf(a.pos, a.kname, "index %d out of range [0:%d) in dimension %d of %s", i, n, d, a.name)
}

func (a *access) uniform() bool {
	for _, ix := range a.idx {
		if ix.u == nil {
			return false
		}
	}
	return true
}

// contiguous reports whether every index but the last is uniform and the
// last one is contiguous over the lanes, or the access is flat.
func (a *access) contiguous() bool {
	if a.flat {
		return true
	}
	for d, ix := range a.idx {
		if d < a.dims-1 && ix.u == nil || d == a.dims-1 && ix.lin == nil {
			return false
		}
	}
	return true
}

// prefix checks the uniform indices before dimension upto and returns their
// row-major offset, in elements, scaled to dimension upto.
func (a *access) prefix(f *frame, arr *Array, upto int) (int64, bool) {
	off := int64(0)
	for d := range upto {
		n := int64(arr.Shape[d])
		i := a.idx[d].u(f)
		if uint64(i) >= uint64(n) {
			f.fail(a.rangeErr(i, n, d))
			return 0, false
		}
		off = off*n + i
	}
	if upto < a.dims {
		off *= int64(arr.Shape[upto])
	}
	return off, true
}

// span checks a contiguous access for the active lanes and returns the
// element offset of lane 0 and the first and last active lanes. ok is false
// when the fast path does not apply (lanes would wrap, or some active lane
// is out of range: the general path then reports it).
func (a *access) span(f *frame, arr *Array) (base int64, first, last int, ok bool) {
	if a.flat {
		return a.flatSpan(f, arr)
	}
	row, ok := a.prefix(f, arr, a.dims-1)
	if !ok {
		return 0, 0, 0, false
	}
	ix := &a.idx[a.dims-1]
	m := f.m.idx
	first, last = int(m[0]), int(m[len(m)-1])
	b, lin := ix.lin(f)
	if !lin {
		return 0, 0, 0, false
	}
	e0, e1 := b+int64(first), b+int64(last)
	if e0 < 0 || e1 < e0 || e1 >= int64(arr.Shape[a.dims-1]) || e1 > ix.maxv {
		return 0, 0, 0, false
	}
	return row + b, first, last, true
}

// flatSpan is span for a flat access: the element of lane 0 is its
// row-major position in the iteration space, and every active lane's
// element is in range when the array's inner lengths equal the inner
// extents and the last active lane's row is below the array's first length.
func (a *access) flatSpan(f *frame, arr *Array) (base int64, first, last int, ok bool) {
	inner := int64(1)
	for d := 1; d < a.dims; d++ {
		if int64(arr.Shape[d]) != f.ext[d] {
			return 0, 0, 0, false
		}
		inner *= f.ext[d]
	}
	for d := range a.dims {
		base = base*f.ext[d] + f.ix[d]
	}
	m := f.m.idx
	first, last = int(m[0]), int(m[len(m)-1])
	if base+int64(last) >= int64(arr.Shape[0])*inner {
		return 0, 0, 0, false
	}
	return base, first, last, true
}

// offsets computes the element offset of every active lane into register
// a.off, checking every index. It reports false after recording an error.
func (a *access) offsets(f *frame, arr *Array) ([]int64, bool) {
	out := reg[int64](f, a.off)
	m := f.m.idx
	for d := range a.dims {
		n := int64(arr.Shape[d])
		ix := &a.idx[d]
		if ix.u != nil {
			i := ix.u(f)
			if uint64(i) >= uint64(n) {
				f.fail(a.rangeErr(i, n, d))
				return out, false
			}
			if d == 0 {
				for _, k := range m {
					out[k] = i
				}
			} else {
				for _, k := range m {
					out[k] = out[k]*n + i
				}
			}
			continue
		}
		v := ix.v(f)
		for _, k := range m {
			i := v[k]
			if uint64(i) >= uint64(n) {
				f.fail(a.rangeErr(i, n, d))
				return out, false
			}
			if d == 0 {
				out[k] = i
			} else {
				out[k] = out[k]*n + i
			}
		}
	}
	return out, true
}

func elem[T scalar](arr *Array, off, size int64) *T {
	return (*T)(unsafe.Add(arr.Data, off*size))
}

func (c *compiler) load(e *ir.Load) value {
	if e.Array == nil {
		c.failf("load from a missing array")
	}
	if e.Array.Rec != nil {
		return c.loadLeaf(e) // values.go
	}
	switch e.Array.Elem {
	case ir.Bool:
		return loadT[bool](c, e)
	case ir.I32:
		return loadT[int32](c, e)
	case ir.I64:
		return loadT[int64](c, e)
	case ir.U32:
		return loadT[uint32](c, e)
	case ir.U64:
		return loadT[uint64](c, e)
	case ir.F32:
		return loadT[float32](c, e)
	case ir.F64:
		return loadT[float64](c, e)
	case ir.I8:
		return loadT[int8](c, e)
	case ir.I16:
		return loadT[int16](c, e)
	case ir.U8:
		return loadT[uint8](c, e)
	case ir.U16:
		return loadT[uint16](c, e)
	}
	c.failf("array %s has invalid element type %v", e.Array.Name, e.Array.Elem)
	return nil
}

func loadT[T scalar](c *compiler, e *ir.Load) value {
	var z T
	a := c.access(e.Array, e.Index, int64(unsafe.Sizeof(z)))
	pi := a.pi
	if a.uniform() && a.dims == 1 {
		// x[i], as in a serial task's loop: one check, one load.
		iu := a.idx[0].u
		return uni(func(f *frame) T {
			arr := &f.a.Arrays[pi]
			i, n := iu(f), int64(arr.Shape[0])
			if uint64(i) >= uint64(n) {
				f.fail(a.rangeErr(i, n, 0))
				return z
			}
			return *elem[T](arr, i, a.size)
		})
	}
	if a.uniform() {
		return uni(func(f *frame) T {
			arr := &f.a.Arrays[pi]
			off, ok := a.prefix(f, arr, a.dims)
			if !ok {
				return z
			}
			return *elem[T](arr, off, a.size)
		})
	}
	r, g := c.tmp(), gatherer[T](a)
	gather := func(f *frame, arr *Array) []T {
		d := reg[T](f, r)
		g(f, arr, d)
		return d
	}
	if !a.contiguous() {
		// Straight into a destination (an assignment's register) when
		// every lane is active: no copy from a register of the load's own.
		qa := c.quasiAccess(a)
		into := func(f *frame, d []T) bool {
			arr := &f.a.Arrays[pi]
			if qa != nil && quasiLoad(qa, f, arr, d) {
				return true
			}
			if f.err != nil {
				return false
			}
			g(f, arr, d)
			return f.err == nil
		}
		return &ev[T]{into: into, v: func(f *frame) []T {
			d := reg[T](f, r)
			into(f, d)
			return d
		}}
	}
	// Contiguous: a bounds check of the end lanes and a copy, or, when every
	// lane is active and nothing in the statement writes memory before the
	// value is used, the array itself.
	zeroCopy := !c.noAlias
	return vary(func(f *frame) []T {
		arr := &f.a.Arrays[pi]
		base, first, last, ok := a.span(f, arr)
		if !ok {
			if f.err != nil {
				return reg[T](f, r)
			}
			return gather(f, arr)
		}
		if f.m.all && zeroCopy {
			return unsafe.Slice(elem[T](arr, base, a.size), f.n)
		}
		d := reg[T](f, r)
		// From the first active lane's element: lane 0's may lie outside
		// the array.
		src := unsafe.Slice(elem[T](arr, base+int64(first), a.size), last-first+1)
		if len(f.m.idx) == last-first+1 {
			copy(d[first:last+1], src)
			return d
		}
		// Holes in the mask: read only the active lanes' elements, since
		// another goroutine may legally be writing the others.
		for _, k := range f.m.idx {
			d[k] = src[int(k)-first]
		}
		return d
	})
}

func (c *compiler) store(s *ir.Store) func(*frame) {
	if s.Array == nil {
		c.failf("store to a missing array")
	}
	if s.Array.Rec != nil {
		return c.storeLeaf(s) // values.go
	}
	switch s.Array.Elem {
	case ir.Bool:
		return storeT[bool](c, s)
	case ir.I32:
		return storeT[int32](c, s)
	case ir.I64:
		return storeT[int64](c, s)
	case ir.U32:
		return storeT[uint32](c, s)
	case ir.U64:
		return storeT[uint64](c, s)
	case ir.F32:
		return storeT[float32](c, s)
	case ir.F64:
		return storeT[float64](c, s)
	case ir.I8:
		return storeT[int8](c, s)
	case ir.I16:
		return storeT[int16](c, s)
	case ir.U8:
		return storeT[uint8](c, s)
	case ir.U16:
		return storeT[uint16](c, s)
	}
	c.failf("array %s has invalid element type %v", s.Array.Name, s.Array.Elem)
	return nil
}

func storeT[T scalar](c *compiler, s *ir.Store) func(*frame) {
	val := c.expr(s.Value)
	if val.typ() != s.Array.Elem {
		c.failf("store of %v to array %s of %v", val.typ(), s.Array.Name, s.Array.Elem)
	}
	x := as[T](c, val)
	var z T
	a := c.access(s.Array, s.Index, int64(unsafe.Sizeof(z)))
	pi := a.pi
	if a.uniform() {
		// Every active lane writes the same element; the last one wins, as
		// in a sequential run of the lanes.
		if x.u != nil {
			xu := x.u
			return func(f *frame) {
				v := xu(f)
				arr := &f.a.Arrays[pi]
				if off, ok := a.prefix(f, arr, a.dims); ok {
					*elem[T](arr, off, a.size) = v
				}
			}
		}
		xv := x.v
		return func(f *frame) {
			v := xv(f)
			arr := &f.a.Arrays[pi]
			if off, ok := a.prefix(f, arr, a.dims); ok {
				*elem[T](arr, off, a.size) = v[f.m.idx[len(f.m.idx)-1]]
			}
		}
	}
	xv, scatter := vec(c, x), scatterer[T](a)
	if !a.contiguous() {
		if q := quasiStores(c, a, scatter); q != nil {
			scatter = q
		}
		return func(f *frame) {
			v := xv(f)
			if f.err == nil {
				scatter(f, &f.a.Arrays[pi], v)
			}
		}
	}
	into := x.into
	return func(f *frame) {
		arr := &f.a.Arrays[pi]
		if into != nil && f.m.all {
			// Every lane is active and the span is in range: compute the
			// value straight into the array.
			if base, _, _, ok := a.span(f, arr); ok {
				into(f, unsafe.Slice(elem[T](arr, base, a.size), f.n))
				return
			}
			if f.err != nil {
				return
			}
		}
		v := xv(f)
		if f.err != nil {
			return
		}
		base, first, last, ok := a.span(f, arr)
		if !ok {
			if f.err == nil {
				scatter(f, arr, v)
			}
			return
		}
		if len(f.m.idx) == last-first+1 {
			// Every lane of the span is active: one copy.
			copy(unsafe.Slice(elem[T](arr, base+int64(first), a.size), last-first+1), v[first:last+1])
			return
		}
		for _, k := range f.m.idx {
			*elem[T](arr, base+int64(k), a.size) = v[k]
		}
	}
}
