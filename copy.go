package qd

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/builtin"
	"github.com/quadrants-go/qd/internal/lower"
)

// Memory in stream order: arrays allocated and freed in the order of a
// stream, asynchronous copies between Ndarrays and HostArrays, device
// copies, fills and Rows views. Every operation here returns once its
// work is enqueued; it is ordered on the stream it is given, and tracked
// like a launch: a later host read or Close of an array waits for exactly
// the streams whose work used it (docs/semantics.md).

// pinned is an array a stream operation uses: pinned while the operation
// is enqueued, noted as used by its stream after.
type pinned interface {
	pin() bool
	unpin()
	noteUse(s *streamCore)
	track() *tracker // its memory's use tracking
	owner() *capture // the capture that allocated it, if any
}

// operand is an array a stream operation uses, and the user's handle to
// it (which a graph capturing the operation keeps).
type operand struct {
	core   pinned
	handle any
}

// enqueueOn runs enqueue on s with the arrays pinned, then notes that s
// used them. The caller holds the Program's lifetime lock and has checked
// the arrays.
// zs are the arrays whose zero fill the operation must come after.
func (p *Program) enqueueOn(s *Stream, what string, arrays []operand, enqueue func(backend.Stream) error, zs ...zeroUse) error {
	if err := s.check(p); err != nil {
		return fmt.Errorf("qd: %s: %w", what, err)
	}
	return enqueueHeld(s.c, what, arrays, enqueue, zs...)
}

// enqueueHeld is enqueueOn once s is checked: s may belong to another
// Program than the caller's (copyBetween).
func enqueueHeld(s *streamCore, what string, arrays []operand, enqueue func(backend.Stream) error, zs ...zeroUse) error {
	return enqueueGated(s, what, false, arrays, enqueue, zs...)
}

// enqueueGated is enqueueHeld, holding s's gate from reading its capture
// state to the enqueue (gate.go). across says the operation involves
// another Program, which a capture cannot hold.
func enqueueGated(s *streamCore, what string, across bool, arrays []operand, enqueue func(backend.Stream) error, zs ...zeroUse) error {
	cp, ok := s.enter()
	if !ok {
		return closedErr("stream")
	}
	defer s.exit()
	if across && cp != nil {
		return cp.refuse(what, "it involves another Program, and graphs do not span Programs yet")
	}
	for i, a := range arrays {
		if err := capturedOperand(a.core, cp, what); err != nil {
			for _, b := range arrays[:i] {
				b.core.unpin()
			}
			return err
		}
	}
	err := zeroFirst(s, zs)
	if err == nil {
		err = enqueue(s.b)
		zeroAfter(zs, err)
	}
	err = failed(cp, err)
	for _, a := range arrays {
		a.core.noteUse(s)
		if cp != nil {
			cp.uses(a.core, a.handle, "an array of "+what)
		}
		a.core.unpin()
	}
	s.did()
	return err
}

// capturedOperand pins a, an array an operation on a stream of capture
// cp (nil: a stream outside every capture) uses: an array allocated in a
// capture is usable only there.
func capturedOperand(a pinned, cp *capture, what string) error {
	if !a.pin() {
		return fmt.Errorf("qd: %s: %w", what, closedErr("array"))
	}
	if o := a.owner(); o != nil && o != cp {
		a.unpin()
		return fmt.Errorf("qd: %w: %s: the array was made by NewNdarrayOn inside the capture on %s: only that capture's streams may use it", ErrCapturing, what, o.origin.describe())
	}
	return nil
}

// hostOf checks h as the host side of a copy of a's length on a's Program.
func hostOf[T Elem](a *Ndarray[T], h *HostArray[T], what string) error {
	switch {
	case h == nil || h.c == nil:
		return fmt.Errorf("%w: %s: nil HostArray", ErrInvalidArgument, what)
	case h.c.p != a.c.p:
		return fmt.Errorf("%w: %s: the HostArray", ErrForeign, what)
	case h.c.isClosed():
		return fmt.Errorf("qd: %s: %w", what, closedErr("HostArray"))
	case !sameShape(h.c.shape[:h.c.dims], a.c.shape[:a.c.dims]):
		return fmt.Errorf("%w: %s: a HostArray of shape %v for an Ndarray of shape %v: copies need equal shapes, leading dimensions of 1 aside (Reshape one of them)", ErrInvalidArgument, what, h.Shape(), a.Shape())
	}
	return nil
}

// sameShape reports whether two arrays of shapes a and b may be copied
// into each other: equal shapes once leading dimensions of 1 are left out
// (a Rows view of one row, shape [1 n], and a 1-D array of n elements), so
// that elements keep their places; a 4×4 and a 2×8 array do not.
func sameShape(a, b []int) bool {
	for len(a) > 1 && a[0] == 1 {
		a = a[1:]
	}
	for len(b) > 1 && b[0] == 1 {
		b = b[1:]
	}
	return slices.Equal(a, b)
}

// CopyFromHostOn enqueues on s a copy of h into the array (the same number
// of elements, in row-major order) and returns. h must not be written until
// the copy is done: [HostArray.Data] waits for it.
func (a *Ndarray[T]) CopyFromHostOn(s *Stream, h *HostArray[T]) error {
	const what = "CopyFromHostOn"
	if err := a.use(); err != nil {
		return err
	}
	defer a.c.p.exit()
	if err := hostOf(a, h, what); err != nil {
		return err
	}
	return a.c.p.enqueueOn(s, what, []operand{{a.c, a}, {h.c, h}}, func(bs backend.Stream) error {
		if a.c.n == 0 {
			return nil
		}
		return a.c.buf.CopyFromHost(bs, h.c.ptr, a.c.n*a.c.lay.size)
	}, zeroUse{a.c.st, !a.c.view})
}

// CopyToHostOn enqueues on s a copy of the array into h (the same number of
// elements) and returns. [HostArray.Data] waits for the copy before it
// returns the data.
func (a *Ndarray[T]) CopyToHostOn(s *Stream, h *HostArray[T]) error {
	const what = "CopyToHostOn"
	if err := a.use(); err != nil {
		return err
	}
	defer a.c.p.exit()
	if err := hostOf(a, h, what); err != nil {
		return err
	}
	return a.c.p.enqueueOn(s, what, []operand{{a.c, a}, {h.c, h}}, func(bs backend.Stream) error {
		if a.c.n == 0 {
			return nil
		}
		return a.c.buf.CopyToHost(bs, h.c.ptr, a.c.n*a.c.lay.size)
	}, zeroUse{st: a.c.st})
}

// CopyFromOn enqueues on s a device-to-device copy of src into the array
// (the same number of elements) and returns.
//
// src may belong to another Program of the same backend: a peer copy
// between two GPUs (direct over NVLink or PCIe where the devices reach
// each other's memory, which the first copy between them enables, staged
// through host memory by the driver otherwise), or a copy between two
// Programs of one device. s may then belong to either Program; the
// caller orders it after the work that writes src and before the work
// that reads the array, as for any stream (WaitEvent, WaitStream). Both
// arrays' use tracking sees the copy: a host read or Close of either
// waits for it. A source of another backend's Program is [ErrForeign].
func (a *Ndarray[T]) CopyFromOn(s *Stream, src *Ndarray[T]) error {
	const what = "CopyFromOn"
	if err := a.use(); err != nil {
		return err
	}
	defer a.c.p.exit()
	switch {
	case src == nil || src.c == nil:
		return fmt.Errorf("%w: %s: nil source", ErrInvalidArgument, what)
	case src.c.isClosed():
		return fmt.Errorf("qd: %s: %w", what, closedErr("source Ndarray"))
	case !sameShape(src.c.shape[:src.c.dims], a.c.shape[:a.c.dims]):
		return fmt.Errorf("%w: %s: a source of shape %v for an Ndarray of shape %v: copies need equal shapes, leading dimensions of 1 aside (Reshape one of them)", ErrInvalidArgument, what, src.Shape(), a.Shape())
	case src.c.p != a.c.p:
		return copyBetween(s, what, a.c, src.c)
	}
	return a.c.p.enqueueOn(s, what, []operand{{a.c, a}, {src.c, src}}, func(bs backend.Stream) error {
		if a.c.n == 0 {
			return nil
		}
		return a.c.buf.CopyFrom(bs, src.c.buf, a.c.n*a.c.lay.size)
	}, zeroUse{st: src.c.st}, zeroUse{a.c.st, !a.c.view})
}

// FillOn enqueues on s a fill of every element with v and returns. It is
// ordered and tracked as a launch is. Elements of 1, 2 or 4 bytes are
// filled by the device's own memset; others (8 bytes: float64, int64,
// qd.Vec2[float32]) by one of the Program's fill kernels, which writes v's
// bits over the array's memory. That kernel is loaded when the Program
// starts, so that a first FillOn does not wait for a module to load, which
// a GPU driver may do only once the device's running work is done.
func (a *Ndarray[T]) FillOn(s *Stream, v T) error {
	if err := a.use(); err != nil {
		return err
	}
	c := a.c
	bits := elemBits(v)
	if f, ok := c.buf.(backend.Filler); ok && (c.lay.size == 1 || c.lay.size == 2 || c.lay.size == 4) {
		defer c.p.exit()
		return c.p.enqueueOn(s, "FillOn", []operand{{c, a}}, func(bs backend.Stream) error {
			if err := f.Fill(bs, uint32(bits), c.lay.size, c.n); err != nil {
				return fmt.Errorf("qd: FillOn: %w", err)
			}
			return nil
		}, zeroUse{c.st, !c.view})
	}
	c.p.exit()
	k, words, arr, err := c.p.fills.of(c)
	if err != nil {
		return fmt.Errorf("qd: FillOn: %w", err)
	}
	var val any
	switch words.lay.size {
	case 1:
		val = uint8(bits)
	case 2:
		val = uint16(bits)
	case 4:
		val = uint32(bits)
	default:
		val = bits
	}
	h := Kernel{c: k} // a handle of the Program's own, never closed
	if err := h.launch(nil, s, []any{arr, val}); err != nil {
		return fmt.Errorf("qd: FillOn: %w", err)
	}
	return nil
}

// elemBits is the bit pattern of v, as an array element holds it.
func elemBits[T Elem](v T) uint64 {
	var w uint64
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&w)), 8), unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)))
	return w
}

// fillKernels are a Program's built-in fill kernels (internal/builtin), by
// element size. Init loads the one for 8-byte elements; the smaller sizes
// are memsets on every backend qd ships, and their kernels are loaded at
// a first need only where a device's buffers cannot fill themselves.
type fillKernels struct {
	mu sync.Mutex
	k  map[int]*kernelCore
}

// load compiles the fill kernel for 8-byte elements; the Program is
// starting.
func (f *fillKernels) load(p *Program) error {
	f.k = map[int]*kernelCore{}
	_, err := f.kernel(p, 8)
	return err
}

// kernel returns the fill kernel for elements of size bytes, compiling it
// at a first call.
func (f *fillKernels) kernel(p *Program, size int) (*kernelCore, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k := f.k[size]; k != nil {
		return k, nil
	}
	t, ok := builtin.FillType(size)
	if !ok {
		return nil, fmt.Errorf("no fill kernel for %d-byte elements: %w", size, ErrUnsupported)
	}
	plan, err := lower.Lower(builtin.Fill(t))
	if err != nil {
		return nil, err
	}
	k, err := p.newKernel(plan)
	if err != nil {
		return nil, fmt.Errorf("loading qd's fill kernels: %w", err)
	}
	k.fills = true
	f.k[size] = k
	return k, nil
}

// loaded is the number of fill kernels compiled.
func (f *fillKernels) loaded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.k)
}

// of returns the fill kernel for c's elements and an argument for its
// array: c's memory seen as a 1-D array of the kernel's element type,
// sharing c's storage (so its tracking and its zero fill).
func (f *fillKernels) of(c *ndCore) (*kernelCore, *ndCore, any, error) {
	k, err := f.kernel(c.p, c.lay.size)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &ndCore{p: c.p, st: c.st, buf: c.buf, shape: [4]int{c.n, 1, 1, 1}, dims: 1, n: c.n, view: c.view}
	switch c.lay.size {
	case 1:
		w.lay = layoutOf[uint8]()
		return k, w, &Ndarray[uint8]{c: w}, nil
	case 2:
		w.lay = layoutOf[uint16]()
		return k, w, &Ndarray[uint16]{c: w}, nil
	case 4:
		w.lay = layoutOf[uint32]()
		return k, w, &Ndarray[uint32]{c: w}, nil
	}
	w.lay = layoutOf[uint64]()
	return k, w, &Ndarray[uint64]{c: w}, nil
}
