package qd

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
)

// HostArray is a row-major array of 1 to 4 dimensions in host memory the
// device copies from and to asynchronously: page-locked on a GPU (so that
// [Ndarray.CopyFromHostOn] and CopyToHostOn return at once and the copy
// overlaps other work), plain memory on the CPU backend. Every method is
// safe for concurrent use.
type HostArray[T Elem] struct {
	c *hostCore
	// parent keeps a Rows view's array reachable: losing the parent's
	// handle would otherwise let its cleanup free memory the view uses.
	parent *HostArray[T]
}

// hostCore is the part of a HostArray the Program's registry and the leak
// cleanup hold; a Rows view is a hostCore over its parent's memory.
type hostCore struct {
	p      *Program
	st     *hostStorage
	ptr    unsafe.Pointer // first element of this array (a view's offset applied)
	lay    *elemLayout
	shape  [4]int
	dims   int
	n      int
	view   bool
	closed atomic.Bool
}

// hostStorage is page-locked memory and the use tracking of every array on
// it.
type hostStorage struct {
	tracker
	hb     backend.HostBuffer
	closed atomic.Bool
}

// NewHostArray makes a zero-filled host array of the given shape (1 to 4
// dimensions, each ≥ 0): page-locked memory on a GPU. Page-locked memory
// is a scarce system resource: make few, large ones and reuse them.
func NewHostArray[T Elem](p *Program, shape ...int) (*HostArray[T], error) {
	if p == nil {
		return nil, fmt.Errorf("%w: NewHostArray: nil Program", ErrInvalidArgument)
	}
	nc, err := newCore[T](p, "NewHostArray", shape)
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	hb, err := p.dev.AllocHost(max(nc.n*nc.lay.size, 1))
	if err != nil {
		return nil, fmt.Errorf("qd: NewHostArray%v: %w", shape, err)
	}
	c := &hostCore{p: p, st: &hostStorage{hb: hb}, ptr: hb.Pointer(), lay: nc.lay, shape: nc.shape, dims: nc.dims, n: nc.n}
	p.mu.Lock()
	p.hosts[c] = struct{}{}
	p.mu.Unlock()
	h := &HostArray[T]{c: c}
	runtime.AddCleanup(h, func(c *hostCore) { go c.p.closeLeaked(c) }, c)
	return h, nil
}

// Shape is the array's shape, one entry per dimension.
func (h *HostArray[T]) Shape() []int {
	if h == nil || h.c == nil {
		return nil
	}
	return append([]int(nil), h.c.shape[:h.c.dims]...)
}

// Len is the number of elements.
func (h *HostArray[T]) Len() int {
	if h == nil || h.c == nil {
		return 0
	}
	return h.c.n
}

func (c *hostCore) isClosed() bool { return c.closed.Load() || c.st.closed.Load() }

// use checks the array and takes its Program's lifetime lock.
func (h *HostArray[T]) use() error {
	if h == nil || h.c == nil {
		return fmt.Errorf("%w: nil HostArray", ErrInvalidArgument)
	}
	return h.c.p.useObject(h.c, "HostArray")
}

// Data waits for the copies enqueued so far that use the array (both
// ways: a pending copy to the device still reads it), then returns its
// elements in row-major order: the array's own memory, not a copy (for a
// copy of an Ndarray's elements, see [Ndarray.ToSlice]). Writing through
// the slice fills the array for the next [Ndarray.CopyFromHostOn].
//
// The slice stays valid until Close, but it is only safe to read or write
// while no copy using the array is enqueued: after enqueueing another copy,
// call Data again (it waits) before touching the elements, or wait for
// the copy's stream yourself. The memory is freed by Close; do not keep
// the slice past it.
func (h *HostArray[T]) Data() ([]T, error) {
	if err := h.use(); err != nil {
		return nil, err
	}
	defer h.c.p.exit()
	if err := h.c.st.waitUsesFor("HostArray.Data"); err != nil {
		return nil, err
	}
	if h.c.n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(h.c.ptr), h.c.n), nil
}

// Rows is a view of rows [lo, hi) of the first dimension: a HostArray
// sharing this one's memory and use tracking. Closing the parent waits for
// copies that use its views; a view of a closed parent is closed; closing
// a view frees nothing.
func (h *HostArray[T]) Rows(lo, hi int) (*HostArray[T], error) {
	if err := h.use(); err != nil {
		return nil, err
	}
	defer h.c.p.exit()
	c := h.c
	off, shape, n, err := rowsOf(c.shape, c.dims, lo, hi, "HostArray")
	if err != nil {
		return nil, err
	}
	v := &hostCore{p: c.p, st: c.st, ptr: unsafe.Add(c.ptr, off*c.lay.size), lay: c.lay, shape: shape, dims: c.dims, n: n, view: true}
	parent := h
	if h.parent != nil {
		parent = h.parent
	}
	return &HostArray[T]{c: v, parent: parent}, nil
}

// Reshape is a view of the array with another shape of the same number of
// elements, sharing its memory and use tracking (see Ndarray.Reshape).
func (h *HostArray[T]) Reshape(shape ...int) (*HostArray[T], error) {
	if err := h.use(); err != nil {
		return nil, err
	}
	defer h.c.p.exit()
	c := h.c
	sh, dims, err := reshaped(c.n, shape, "HostArray")
	if err != nil {
		return nil, err
	}
	v := &hostCore{p: c.p, st: c.st, ptr: c.ptr, lay: c.lay, shape: sh, dims: dims, n: c.n, view: true}
	parent := h
	if h.parent != nil {
		parent = h.parent
	}
	return &HostArray[T]{c: v, parent: parent}, nil
}

// rowsOf is the element offset, shape and length of rows [lo, hi) of an
// array of the given shape.
func rowsOf(shape [4]int, dims, lo, hi int, what string) (off int, out [4]int, n int, err error) {
	if lo < 0 || hi < lo || hi > shape[0] {
		return 0, out, 0, fmt.Errorf("%w: %s.Rows(%d, %d) of an array of %d rows", ErrInvalidArgument, what, lo, hi, shape[0])
	}
	row := shape[1] * shape[2] * shape[3]
	out = shape
	out[0] = hi - lo
	return lo * row, out, (hi - lo) * row, nil
}

// Close frees the memory once the copies enqueued so far that use it (on
// any stream, through any view) are done. Closing a view frees nothing.
// Close is idempotent; other methods of a closed array return [ErrClosed].
func (h *HostArray[T]) Close() error {
	if h == nil || h.c == nil {
		return nil
	}
	return h.c.p.closeObject(h.c)
}

func (c *hostCore) close() error {
	if !c.closed.CompareAndSwap(false, true) || c.view {
		return nil
	}
	st := c.st
	st.closed.Store(true)
	c.p.mu.Lock()
	delete(c.p.hosts, c)
	c.p.mu.Unlock()
	st.pins.wait()
	err := st.waitUses()
	return errors.Join(err, st.hb.Close())
}

// release is [Program.Close]'s path: all work is already done.
func (c *hostCore) release() error {
	if !c.closed.CompareAndSwap(false, true) || c.view {
		return nil
	}
	c.st.closed.Store(true)
	return c.st.hb.Close()
}

func (c *hostCore) pin() bool {
	c.st.pins.enter()
	if c.isClosed() {
		c.st.pins.leave()
		return false
	}
	return true
}

func (c *hostCore) unpin() { c.st.pins.leave() }

func (c *hostCore) track() *tracker { return &c.st.tracker }

func (c *hostCore) owner() *capture { return nil }

func (c *hostCore) noteUse(s *streamCore) { c.st.noteUse(s) }
