package qd

import (
	"errors"
	"fmt"
	"sync"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Memory in stream order: arrays allocated and freed in the order of a
// stream, asynchronous copies between Ndarrays and HostArrays, device
// copies, fills and Rows views. Every operation here returns once its
// work is enqueued; it is ordered on the stream it is given, and tracked
// like a launch: a later host read or Close of an array waits for exactly
// the streams whose work used it (SPEC §4).

// NewNdarrayOn makes a zero-filled array of the given shape (1 to 3
// dimensions, each ≥ 0) in the order of s: its memory comes from the
// device's memory pool, usable by the work enqueued on s from now on (other
// streams must be ordered after s to use it). Its Close frees the memory
// in stream order, after every stream that used it, without blocking the
// host; freed memory is kept for reuse on the same stream, so allocating
// and freeing in a loop costs no driver call. On the CPU it is NewNdarray.
//
// The array reads as zeros until written. On a GPU the zero fill is
// enqueued by the array's first use, on that use's stream, and left out
// when that use writes every element (CopyFromHostOn, CopyFromOn or FillOn
// of the whole array) or the array is closed unused: a fill costs the host
// more than the allocation. In a graph capture the array is memory of the
// graph, zeroed on s by every replay (Stream.Capture).
func NewNdarrayOn[T Elem](s *Stream, shape ...int) (*Ndarray[T], error) {
	if err := s.use(); err != nil {
		return nil, err
	}
	p := s.c.p
	defer p.exit()
	c, err := newCore[T](p, "NewNdarrayOn", shape)
	if err != nil {
		return nil, err
	}
	if !s.c.hold() {
		return nil, closedErr("stream")
	}
	defer s.c.inflight.leave()
	cp := s.c.capturing()
	bytes := max(c.n*c.elem.Size(), 1)
	buf, err := p.dev.AllocOn(s.c.b, bytes)
	if err != nil {
		return nil, failed(cp, cp.refuseErr("NewNdarrayOn", fmt.Errorf("qd: NewNdarrayOn%v: %w", shape, err)))
	}
	c.buf, c.st = buf, &storage{owner: p, buf: buf, home: s.c, cap: cp}
	// Memory born zeroed (the CPU's) needs no fill, unless a graph
	// replays the allocation.
	if _, host := buf.(backend.HostPointer); (!host || cp != nil) && c.n > 0 {
		z, ok := buf.(backend.Zeroer)
		if !ok {
			buf.FreeOn(s.c.b)
			return nil, failed(cp, fmt.Errorf("qd: NewNdarrayOn: the %s backend cannot zero memory on a stream: %w", p.arch, ErrUnsupported))
		}
		if cp == nil {
			// The fill waits for the first use (zerofill.go).
			c.st.zero.state.Store(zeroPending)
		} else if err := z.Zero(s.c.b); err != nil {
			// In a capture the fill is part of the graph, at once.
			buf.FreeOn(s.c.b)
			return nil, failed(cp, fmt.Errorf("qd: NewNdarrayOn%v: zeroing the array: %w", shape, err))
		}
	}
	c.st.noteUse(s.c)
	if cp != nil {
		cp.own(c, shape)
		s.c.did()
	}
	return newArray[T](c), nil
}

// hold keeps the stream from being destroyed while work is enqueued on it
// (its Close waits for inflight); it fails if the stream is closed. Pair
// with inflight.leave. It counts first, then checks, as Close marks first,
// then waits: one of the two sees the other.
func (c *streamCore) hold() bool {
	c.inflight.enter()
	if c.closed.Load() {
		c.inflight.leave()
		return false
	}
	return true
}

// freeInOrder frees pooled memory on its allocation stream after every
// stream that used it, without blocking the host. When that stream is
// closed, or captures a graph the memory does not belong to, the default
// stream frees it instead, and if that one is closed or capturing too,
// the host waits for the uses and frees it. Memory a capture allocated is
// freed in the capture, on its allocation stream.
func (p *Program) freeInOrder(st *storage) error {
	on := st.home
	if on != nil && st.cap == nil && on.capturing() != nil {
		on = nil
	}
	if on == nil || !on.hold() {
		on = p.def.c
		if on.capturing() != nil || !on.hold() {
			err := st.waitUses()
			st.zero.release(p)
			return errors.Join(err, st.buf.Close())
		}
	}
	defer on.inflight.leave()
	cp := on.capturing()
	if err := st.orderAfterUses(on); err != nil {
		return failed(cp, err)
	}
	err := failed(cp, st.buf.FreeOn(on.b))
	st.zero.release(p)
	on.did()
	return err
}

// Rows is a view of rows [lo, hi) of the first dimension: an Ndarray
// sharing this one's memory and use tracking. A view is a kernel argument
// and a copy endpoint like any array, so a pipeline can work on chunks of
// one array without extra buffers. Closing the parent waits for the work on
// its views (and frees the memory); a view of a closed parent is closed;
// closing a view frees nothing.
func (a *Ndarray[T]) Rows(lo, hi int) (*Ndarray[T], error) {
	if err := a.use(); err != nil {
		return nil, err
	}
	defer a.c.p.exit()
	c := a.c
	off, shape, n, err := rowsOf(c.shape, c.dims, lo, hi, "Ndarray")
	if err != nil {
		return nil, err
	}
	size := c.elem.Size()
	buf, err := c.buf.View(off*size, n*size)
	if err != nil {
		return nil, fmt.Errorf("qd: Ndarray.Rows(%d, %d): %w", lo, hi, err)
	}
	v := &ndCore{p: c.p, st: c.st, buf: buf, elem: c.elem, shape: shape, dims: c.dims, n: n, view: true}
	return &Ndarray[T]{c: v, parent: a.root()}, nil
}

// root is the array that owns a's memory: a itself, or the parent of a
// view.
func (a *Ndarray[T]) root() *Ndarray[T] {
	if a.parent != nil {
		return a.parent
	}
	return a
}

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

func (c *hostCore) noteUse(s *streamCore) { c.st.noteUse(s) }

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
	if !s.hold() {
		return closedErr("stream")
	}
	defer s.inflight.leave()
	cp := s.capturing()
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
		return fmt.Errorf("%w: %s: the array was made by NewNdarrayOn inside the capture on %s: only that capture's streams may use it", ErrCapturing, what, o.origin.describe())
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
	case h.c.n != a.c.n:
		return fmt.Errorf("%w: %s: a HostArray of %d elements for an Ndarray of %d", ErrInvalidArgument, what, h.c.n, a.c.n)
	}
	return nil
}

// CopyFromHostOn enqueues on s a copy of h into the array (the same number
// of elements, in row-major order) and returns. h must not be written until
// the copy is done: HostArray.Data waits for it.
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
		return a.c.buf.CopyFromHost(bs, h.c.ptr, a.c.n*a.c.elem.Size())
	}, zeroUse{a.c.st, !a.c.view})
}

// CopyToHostOn enqueues on s a copy of the array into h (the same number of
// elements) and returns. HostArray.Data waits for the copy before it
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
		return a.c.buf.CopyToHost(bs, h.c.ptr, a.c.n*a.c.elem.Size())
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
// waits for it. A source of another backend's Program is ErrForeign.
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
	case src.c.n != a.c.n:
		return fmt.Errorf("%w: %s: a source of %d elements for an Ndarray of %d", ErrInvalidArgument, what, src.c.n, a.c.n)
	case src.c.p != a.c.p:
		return copyBetween(s, what, a.c, src.c)
	}
	return a.c.p.enqueueOn(s, what, []operand{{a.c, a}, {src.c, src}}, func(bs backend.Stream) error {
		if a.c.n == 0 {
			return nil
		}
		return a.c.buf.CopyFrom(bs, src.c.buf, a.c.n*a.c.elem.Size())
	}, zeroUse{st: src.c.st}, zeroUse{a.c.st, !a.c.view})
}

// FillOn enqueues on s a fill of every element with v and returns. It is a
// kernel launch (a built-in one per element type and rank), ordered and
// tracked as launches are.
func (a *Ndarray[T]) FillOn(s *Stream, v T) error {
	if err := a.use(); err != nil {
		return err
	}
	k, err := a.c.p.fillKernel(a.c.elem, a.c.dims)
	a.c.p.exit()
	if err != nil {
		return err
	}
	h := Kernel{c: k} // a handle of the Program's own, never closed
	if err := h.launch(nil, s, []any{a, v}); err != nil {
		return fmt.Errorf("qd: FillOn: %w", err)
	}
	return nil
}

// fillKernels are a Program's built-in fill kernels.
type fillKernels struct {
	mu sync.Mutex
	k  map[[2]int]*kernelCore // by element type and rank
}

// fillKernel is the fill kernel for arrays of t with dims dimensions,
// compiled on first use. The caller holds the lifetime lock.
func (p *Program) fillKernel(t ir.Type, dims int) (*kernelCore, error) {
	p.fills.mu.Lock()
	defer p.fills.mu.Unlock()
	key := [2]int{int(t), dims}
	if k := p.fills.k[key]; k != nil {
		return k, nil
	}
	b := ir.NewBuilder("qdFill")
	x, v := b.Array("x", t, dims), b.Scalar("v", t)
	ext := make([]ir.Expr, dims)
	for d := range ext {
		ext[d] = ir.LenOf(x, d)
	}
	b.ParallelN(ext, func(vars []*ir.Var) {
		idx := make([]ir.Expr, dims)
		for d, iv := range vars {
			idx[d] = ir.Ref(iv)
		}
		b.Store(x, ir.P(v), idx...)
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		return nil, err
	}
	k, err := p.newKernel(plan)
	if err != nil {
		return nil, err
	}
	k.fills = true
	if p.fills.k == nil {
		p.fills.k = map[[2]int]*kernelCore{}
	}
	p.fills.k[key] = k
	return k, nil
}
