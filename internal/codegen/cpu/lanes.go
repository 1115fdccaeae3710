package cpu

import (
	"math"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Batch is the largest number of lanes a parallel task runs through one
// closure call. Large enough to amortise an indirect call over many
// elements, small enough that a kernel's lane registers (Batch*8 bytes
// each) stay in L1/L2. Measured on saxpy and a stencil: 256 costs about 10%
// more than 512, and 1024 gains about 5% over 512 at twice the footprint.
const Batch = 512

// Type sets of the generic lane operations. The 8- and 16-bit integers
// are values of their own Go types; the IR has no arithmetic on them, so
// only loads, stores, locals, selects and conversions instantiate for
// them (small).
type (
	scalar interface {
		~bool | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64 | small
	}
	number interface {
		~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
	}
	// convertible are the types a conversion goes between.
	convertible interface{ number | small }
	integer     interface {
		~int32 | ~int64 | ~uint32 | ~uint64
	}
	small interface {
		~int8 | ~int16 | ~uint8 | ~uint16
	}
	float interface{ ~float32 | ~float64 }
)

// mask is the set of active lanes of a batch: a sorted list of lane numbers.
// all says the list is 0..n-1, so code that can do better than walking the
// list (copies, stores) takes a fast path.
type mask struct {
	idx []int32
	all bool
}

func (m mask) empty() bool { return len(m.idx) == 0 }

// frame is the per-call scratch of a running task: lane registers, mask
// storage, the batch position and the first error. Frames are pooled.
type frame struct {
	a   *Args
	n   int   // lanes in this batch
	m   mask  // active lanes
	err error // first runtime error

	regs []uint64         // lane registers, Batch words each, viewed as []T
	sc   []uint64         // scalar slots of uniform locals, one word each
	red  []unsafe.Pointer // per reduction site, the element its held-back total goes to
	off  int              // lane of the registers that is this batch's lane 0 (see sub)
	mk   []int32          // mask slots, Batch entries each
	iota []int32          // 0..Batch-1, the list of an all-lanes mask

	// ix is the index of lane 0 in every dimension of the iteration space
	// ext and dims describe.
	ix   [3]int64
	ext  [3]int64
	dims int

	// blk is a block task's state: its shared memory, the block running
	// (blocks.go); nil in other tasks.
	blk *blockFrame
}

// frameSize is what a frame holds: lane registers, mask slots, scalar
// slots and reduction sites.
type frameSize struct{ regs, masks, scal, red int }

func (s frameSize) max(o frameSize) frameSize {
	return frameSize{max(s.regs, o.regs), max(s.masks, o.masks), max(s.scal, o.scal), max(s.red, o.red)}
}

func newFrame(size frameSize) *frame {
	f := &frame{
		regs: make([]uint64, max(size.regs, 1)*Batch),
		sc:   make([]uint64, size.scal),
		red:  make([]unsafe.Pointer, size.red),
		mk:   make([]int32, max(size.masks, 1)*Batch),
		iota: make([]int32, Batch),
	}
	for i := range f.iota {
		f.iota[i] = int32(i)
	}
	return f
}

// allMask activates every lane of the batch.
func (f *frame) allMask() mask { return mask{idx: f.iota[:f.n], all: true} }

// fail records the first runtime error of the call.
func (f *frame) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// reg views lane register r as n values of T (uint8 for the bits of a
// bool). Registers are uint64 aligned,
// so every element type fits.
func reg[T scalar | ~uint8](f *frame, r int) []T {
	var z T
	p := unsafe.Add(unsafe.Pointer(&f.regs[r*Batch]), uintptr(f.off)*unsafe.Sizeof(z))
	return unsafe.Slice((*T)(p), f.n)
}

// scal is scalar slot s viewed as a T.
func scal[T scalar](f *frame, s int) *T {
	// No bounds check: slots are numbered by the compiler that sized sc.
	return (*T)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.sc)), s*8))
}

// sub runs fn on lanes [lo, hi) of a row batch as a batch of its own, every
// lane active: registers are viewed from lane lo, and the innermost index,
// which counts up along a row batch, starts at lane lo's.
func (f *frame) sub(lo, hi int, fn func(*frame)) {
	n, off, m, last := f.n, f.off, f.m, f.dims-1
	f.off, f.n = off+lo, hi-lo
	f.ix[last] += int64(lo)
	f.m = f.allMask()
	fn(f)
	f.ix[last] -= int64(lo)
	f.n, f.off, f.m = n, off, m
}

// slot is mask slot s.
func (f *frame) slot(s int) []int32 { return f.mk[s*Batch : s*Batch+Batch] }

// narrow keeps the lanes of m whose cond equals want, writing the list to
// dst (which may be m's own storage: entries move only backwards).
func narrow(dst []int32, m mask, cond []bool, want bool) mask {
	c := 0
	if m.all {
		cond = cond[:len(m.idx)]
		dst = dst[:len(cond)]
		for k, b := range cond {
			dst[c] = int32(k)
			if b == want {
				c++
			}
		}
		if c == len(cond) {
			return m
		}
		return mask{idx: dst[:c]}
	}
	for _, k := range m.idx {
		dst[c] = k
		if cond[k] == want {
			c++
		}
	}
	return mask{idx: dst[:c]}
}

// dropExited keeps the lanes of m that are not leaving a loop.
func dropExited(dst []int32, m mask, exit []int32) mask {
	c := 0
	for _, k := range m.idx {
		dst[c] = k
		if exit[k] == 0 {
			c++
		}
	}
	if c == len(m.idx) {
		return m
	}
	return mask{idx: dst[:c]}
}

// assignVec writes s to the active lanes of d.
func assignVec[T scalar](d, s []T, m mask) {
	if m.all {
		copy(d, s)
		return
	}
	for _, k := range m.idx {
		d[k] = s[k]
	}
}

// assignUni writes v to the active lanes of d.
func assignUni[T scalar](d []T, v T, m mask) {
	if m.all {
		fill(d, v)
		return
	}
	for _, k := range m.idx {
		d[k] = v
	}
}

// fill writes v to every lane of d: zero bits (a per-thread value's or
// an array's start, var v [4]float32) with the runtime's memclr, which
// is several times faster than a loop of stores.
func fill[T scalar](d []T, v T) {
	if zeroBits(v) {
		clear(d)
		return
	}
	// Other values as SSE2 stores of four lanes (simd_gen.go), where
	// there are some: a broadcast into a register, a row of threads' one
	// element (quasimem.go).
	switch p := unsafe.Pointer(unsafe.SliceData(d)); unsafe.Sizeof(v) {
	case 4:
		if simdFill32 != nil {
			simdFill32(unsafe.Slice((*uint32)(p), len(d)), *(*uint32)(unsafe.Pointer(&v)))
			return
		}
	case 8:
		if simdFill64 != nil {
			simdFill64(unsafe.Slice((*uint64)(p), len(d)), *(*uint64)(unsafe.Pointer(&v)))
			return
		}
	}
	for i := range d {
		d[i] = v
	}
}

// zeroBits reports whether v's bits are all zero (not -0.0).
func zeroBits[T scalar](v T) bool {
	switch unsafe.Sizeof(v) {
	case 1:
		return *(*uint8)(unsafe.Pointer(&v)) == 0
	case 2:
		return *(*uint16)(unsafe.Pointer(&v)) == 0
	case 4:
		return *(*uint32)(unsafe.Pointer(&v)) == 0
	}
	return *(*uint64)(unsafe.Pointer(&v)) == 0
}

// fromBits decodes an ir.Const-style bit pattern.
func fromBits[T scalar](b uint64) T {
	var z T
	switch p := any(&z).(type) {
	case *bool:
		*p = b != 0
	case *int32:
		*p = int32(b)
	case *int64:
		*p = int64(b)
	case *uint32:
		*p = uint32(b)
	case *uint64:
		*p = b
	case *float32:
		*p = math.Float32frombits(uint32(b))
	case *float64:
		*p = math.Float64frombits(b)
	case *int8:
		*p = int8(b)
	case *int16:
		*p = int16(b)
	case *uint8:
		*p = uint8(b)
	case *uint16:
		*p = uint16(b)
	}
	return z
}

// toBits encodes v as an ir.Const-style bit pattern.
func toBits[T scalar](v T) uint64 {
	switch p := any(&v).(type) {
	case *bool:
		if *p {
			return 1
		}
		return 0
	case *int32:
		return uint64(int64(*p))
	case *int64:
		return uint64(*p)
	case *uint32:
		return uint64(*p)
	case *uint64:
		return *p
	case *float32:
		return uint64(math.Float32bits(*p))
	case *float64:
		return math.Float64bits(*p)
	case *int8:
		return uint64(int64(*p))
	case *int16:
		return uint64(int64(*p))
	case *uint8:
		return uint64(*p)
	case *uint16:
		return uint64(*p)
	}
	return 0
}

// irType is the IR type of T.
func irType[T scalar]() ir.Type {
	var z T
	switch any(&z).(type) {
	case *bool:
		return ir.Bool
	case *int32:
		return ir.I32
	case *int64:
		return ir.I64
	case *uint32:
		return ir.U32
	case *uint64:
		return ir.U64
	case *float32:
		return ir.F32
	case *float64:
		return ir.F64
	case *int8:
		return ir.I8
	case *int16:
		return ir.I16
	case *uint8:
		return ir.U8
	case *uint16:
		return ir.U16
	}
	return ir.Invalid
}
