package qd

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
)

// Elem is the constraint on element types: any Go type built from scalars
// by fixed arrays and structs (see layout.go's rules, checked when an array
// is made): float32, qd.Vec3[float32], a struct of these. int and uint are
// 64-bit.
type Elem = any

// Ndarray is a row-major array of 1 to 4 dimensions in device memory (host
// memory on the CPU backend). Host access (CopyFromHost, CopyToHost,
// ToSlice) is safe against work in flight: it first waits for the work
// enqueued before it, on any stream, that uses the array. Every method is
// safe for concurrent use.
type Ndarray[T Elem] struct {
	c *ndCore
	// parent keeps a Rows view's array reachable: losing the parent's
	// handle would otherwise let its cleanup free memory the view uses.
	parent *Ndarray[T]
}

// ndCore is the part of an Ndarray the Program's registry, kernel launches
// and the leak cleanup hold. A Rows view is an ndCore of its own over its
// parent's storage.
type ndCore struct {
	p      *Program
	st     *storage       // the memory and its use tracking, shared with views
	buf    backend.Buffer // this array's memory: st.buf, or a view of it
	lay    *elemLayout    // the element type's
	shape  [4]int         // unused dimensions are 1
	dims   int
	n      int  // elements
	view   bool // a Rows view: its Close frees nothing
	closed atomic.Bool
}

// storage is an allocation and the use tracking of every array on it.
type storage struct {
	tracker
	owner  *Program // the Program whose device holds the memory
	buf    backend.Buffer
	closed atomic.Bool // the parent array was closed: so is every view
	// home is the stream that allocated pooled memory ([NewNdarrayOn]), nil
	// for [NewNdarray]'s: pooled memory is freed in home's order, after every
	// stream that used it.
	home *streamCore
	zero zeroFill // NewNdarrayOn's fill, enqueued by the first use (zerofill.go)
	// cap is the capture that allocated the memory ([NewNdarrayOn] on a
	// capturing stream): memory of its graph, usable only by the
	// capture's streams and freed in it.
	cap *capture
}

// NewNdarray makes a zero-filled array of the given shape (1 to 4
// dimensions, each ≥ 0).
func NewNdarray[T Elem](p *Program, shape ...int) (*Ndarray[T], error) {
	if p == nil {
		return nil, fmt.Errorf("%w: NewNdarray: nil Program", ErrInvalidArgument)
	}
	c, err := newCore[T](p, "NewNdarray", shape)
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	// An empty array still gets a valid (1-byte) address to pass to kernels.
	buf, err := p.dev.Alloc(max(c.n*c.lay.size, 1))
	if err != nil {
		return nil, fmt.Errorf("qd: NewNdarray%v: %w", shape, err)
	}
	c.buf, c.st = buf, &storage{owner: p, buf: buf}
	if err := c.zero(); err != nil {
		buf.Close()
		return nil, fmt.Errorf("qd: NewNdarray%v: zero fill: %w", shape, err)
	}
	return newArray[T](c), nil
}

// newCore checks shape (1 to 4 dimensions, each ≥ 0, not too large) and
// makes the core of an array of T on p, without memory.
func newCore[T Elem](p *Program, what string, shape []int) (*ndCore, error) {
	if len(shape) < 1 || len(shape) > ir.MaxDims {
		return nil, fmt.Errorf("%w: %s: %d dimensions; want 1 to %d", ErrInvalidArgument, what, len(shape), ir.MaxDims)
	}
	lay := layoutOf[T]()
	if lay.err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidArgument, what, lay.err)
	}
	c := &ndCore{p: p, lay: lay, dims: len(shape), shape: [4]int{1, 1, 1, 1}, n: 1}
	for i, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("%w: %s: dimension %d is %d", ErrInvalidArgument, what, i, d)
		}
		if d > 0 && c.n > math.MaxInt/lay.size/d {
			return nil, fmt.Errorf("%w: %s: shape %v is too large", ErrInvalidArgument, what, shape)
		}
		c.shape[i] = d
		c.n *= d
	}
	return c, nil
}

// newArray registers c, which owns its storage, with its Program and gives
// it a handle whose loss (without Close) releases it.
func newArray[T Elem](c *ndCore) *Ndarray[T] {
	p := c.p
	p.mu.Lock()
	p.arrays[c] = struct{}{}
	p.mu.Unlock()
	a := &Ndarray[T]{c: c}
	runtime.AddCleanup(a, func(c *ndCore) { go c.p.closeLeaked(c) }, c)
	return a
}

// zero fills a new buffer with zeros; CPU memory is born zeroed.
func (c *ndCore) zero() error {
	if _, ok := c.buf.(backend.HostPointer); ok || c.n == 0 {
		return nil
	}
	if z, ok := c.buf.(backend.Zeroer); ok {
		return c.p.hostTransfer(c, "NewNdarray", true, z.Zero)
	}
	zeros := make([]byte, c.n*c.lay.size)
	return c.p.hostTransfer(c, "NewNdarray", true, func(s backend.Stream) error {
		return c.buf.CopyFromHost(s, unsafe.Pointer(&zeros[0]), len(zeros))
	})
}

// Shape is the array's shape, one entry per dimension.
func (a *Ndarray[T]) Shape() []int {
	if a == nil || a.c == nil {
		return nil
	}
	return append([]int(nil), a.c.shape[:a.c.dims]...)
}

// Len is the number of elements.
func (a *Ndarray[T]) Len() int {
	if a == nil || a.c == nil {
		return 0
	}
	return a.c.n
}

// isClosed reports whether the array, or the array it is a view of, was
// closed.
func (c *ndCore) isClosed() bool { return c.closed.Load() || c.st.closed.Load() }

// use checks the array and takes its Program's lifetime lock.
func (a *Ndarray[T]) use() error {
	if a == nil || a.c == nil {
		return fmt.Errorf("%w: nil Ndarray", ErrInvalidArgument)
	}
	return a.c.p.useObject(a.c, "Ndarray")
}

// CopyFromHost copies src, which must have exactly Len elements in
// row-major order, into the array. It waits for enqueued work that uses the
// array first, and returns when the copy is done.
func (a *Ndarray[T]) CopyFromHost(src []T) error {
	if err := a.use(); err != nil {
		return err
	}
	defer a.c.p.exit()
	if len(src) != a.c.n {
		return fmt.Errorf("%w: CopyFromHost: %d elements for an Ndarray of %d", ErrInvalidArgument, len(src), a.c.n)
	}
	if a.c.n == 0 {
		return nil
	}
	return a.c.p.hostTransfer(a.c, "Ndarray.CopyFromHost", !a.c.view, func(s backend.Stream) error {
		return a.c.buf.CopyFromHost(s, unsafe.Pointer(&src[0]), len(src)*a.c.lay.size)
	}, func(p unsafe.Pointer) {
		copy(unsafe.Slice((*T)(p), a.c.n), src)
	})
}

// CopyToHost copies the array into dst, which must have exactly Len
// elements. The copy includes every write enqueued before the call, on any
// stream.
func (a *Ndarray[T]) CopyToHost(dst []T) error {
	if err := a.use(); err != nil {
		return err
	}
	defer a.c.p.exit()
	if len(dst) != a.c.n {
		return fmt.Errorf("%w: CopyToHost: %d elements for an Ndarray of %d", ErrInvalidArgument, len(dst), a.c.n)
	}
	return a.copyOut("Ndarray.CopyToHost", dst)
}

func (a *Ndarray[T]) copyOut(call string, dst []T) error {
	if a.c.n == 0 {
		return nil
	}
	return a.c.p.hostTransfer(a.c, call, false, func(s backend.Stream) error {
		return a.c.buf.CopyToHost(s, unsafe.Pointer(&dst[0]), len(dst)*a.c.lay.size)
	}, func(p unsafe.Pointer) {
		copy(dst, unsafe.Slice((*T)(p), a.c.n))
	})
}

// ToSlice returns a copy of the array's elements in row-major order.
func (a *Ndarray[T]) ToSlice() ([]T, error) {
	if err := a.use(); err != nil {
		return nil, err
	}
	defer a.c.p.exit()
	out := make([]T, a.c.n)
	return out, a.copyOut("Ndarray.ToSlice", out)
}

// Close frees the array once the enqueued work that uses it is done: an
// array from [NewNdarray] after waiting for that work, one from
// [NewNdarrayOn] in stream order without blocking the host. Closing an
// array closes its Rows views too; closing a view frees nothing. Close is
// idempotent; other methods of a closed array return [ErrClosed].
func (a *Ndarray[T]) Close() error {
	if a == nil || a.c == nil {
		return nil
	}
	return a.c.p.closeObject(a.c)
}

func (c *ndCore) close() error {
	if !c.closed.CompareAndSwap(false, true) || c.view {
		return nil
	}
	st := c.st
	st.closed.Store(true)
	c.p.mu.Lock()
	delete(c.p.arrays, c)
	c.p.mu.Unlock()
	// Launches and copies that pinned the memory before it was closed are
	// enqueueing their work: let them finish, so that their uses count.
	st.pins.wait()
	if st.home != nil {
		return c.p.freeInOrder(st)
	}
	err := st.waitUses()
	return errors.Join(err, st.buf.Close())
}

// pin keeps the array's memory for a launch or copy being enqueued; it
// fails if the array is closed. The order (count, then check) pairs with
// Close's (mark closed, then read the count): one of the two sees the
// other.
func (c *ndCore) pin() bool {
	c.st.pins.enter()
	if c.isClosed() {
		c.st.pins.leave()
		return false
	}
	return true
}

func (c *ndCore) unpin() { c.st.pins.leave() }

// noteUse records that work enqueued on s uses the array.
func (c *ndCore) noteUse(s *streamCore) { c.st.noteUse(s) }

func (c *ndCore) track() *tracker { return &c.st.tracker }

func (c *ndCore) owner() *capture { return c.st.cap }

// release is [Program.Close]'s path: the Program's own work is already
// done. Streams of other Programs may have used the memory (copies
// between Programs), or be enqueueing with it: it waits for both.
func (c *ndCore) release() error {
	if !c.closed.CompareAndSwap(false, true) || c.view {
		return nil
	}
	st := c.st
	st.closed.Store(true)
	st.pins.wait()
	err := st.waitUsesBut(c.p, "")
	st.zero.release(c.p)
	return errors.Join(err, st.buf.Close())
}

// hostTransfer runs one host copy of c (the user's call) after the work
// that uses it: on a host-addressable buffer directly (direct), otherwise
// enqueued by enqueue on a pooled stream that is then waited for.
// overwrite says the copy writes every element of c's storage (zerofill.go).
func (p *Program) hostTransfer(c *ndCore, call string, overwrite bool, enqueue func(backend.Stream) error, direct ...func(unsafe.Pointer)) error {
	// Pinned, as a launch pins its arrays: a Close in another goroutine
	// waits for the transfer, or the transfer sees the array closed.
	if !c.pin() {
		return fmt.Errorf("qd: %s: %w", call, closedErr("Ndarray"))
	}
	defer c.unpin()
	if o := c.st.cap; o != nil {
		// Graph memory exists only while the graph runs.
		return fmt.Errorf("qd: %w: %s: the Ndarray was made by NewNdarrayOn inside the capture on %s: it is memory of the graph, which only that capture's streams may use",
			ErrCapturing, call, o.origin.describe())
	}
	if err := c.st.waitUsesFor(call); err != nil {
		return err
	}
	if hp, ok := c.buf.(backend.HostPointer); ok && len(direct) > 0 {
		direct[0](hp.HostPointer())
		return nil
	}
	s, err := p.pool.Get()
	if err != nil {
		return err
	}
	defer p.pool.Put(s)
	if err := c.st.zeroed(s, overwrite); err != nil {
		return err
	}
	if err := enqueue(s.b); err != nil {
		return err
	}
	if overwrite {
		c.st.overwritten()
	}
	// Wait through an event. Pooled streams hold no errors (a launch's
	// errors go to its own stream), so Synchronize would serve as well.
	e, err := p.evpool.Get()
	if err != nil {
		return err
	}
	defer p.evpool.Put(e)
	if err := e.Record(s.b); err != nil {
		return err
	}
	return e.Synchronize()
}

// NewNdarrayOn makes a zero-filled array of the given shape (1 to 4
// dimensions, each ≥ 0) in the order of s: its memory comes from the
// device's memory pool, usable by the work enqueued on s from now on (other
// streams must be ordered after s to use it). Its Close frees the memory
// in stream order, after every stream that used it, without blocking the
// host; freed memory is kept for reuse on the same stream, so allocating
// and freeing in a loop costs no driver call. On the CPU it is [NewNdarray].
//
// The array reads as zeros until written. On a GPU the zero fill is
// enqueued by the array's first use, on that use's stream, and left out
// when that use writes every element (CopyFromHostOn, CopyFromOn or FillOn
// of the whole array) or the array is closed unused: a fill costs the host
// more than the allocation. In a graph capture the array is memory of the
// graph, zeroed on s by every replay ([Stream.Capture]).
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
	cp, ok := s.c.enter()
	if !ok {
		return nil, closedErr("stream")
	}
	defer s.c.exit()
	bytes := max(c.n*c.lay.size, 1)
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

// freeInOrder frees pooled memory on its allocation stream (home) after
// every stream that used it, without blocking the host. When home is
// closed or captures a graph, the default stream frees it instead, and if
// that one is closed or capturing too, the host waits for the uses and
// frees it. A capture never sees the free: the Close of an array succeeds
// and leaves every capture alone. Memory a capture allocated is freed in
// the capture (freeInCapture).
func (p *Program) freeInOrder(st *storage) error {
	if st.cap != nil {
		return p.freeInCapture(st)
	}
	home := st.home
	// The points of the other streams that used the memory, each taken on
	// its own stream (gate.go); home is ordered after its own work.
	pts, seen, err := st.usePoints(home)
	defer func() {
		for _, pt := range pts {
			pt.release()
		}
	}()
	done := false
	if err == nil {
		done, err = home.freeAfter(st, pts)
	}
	if !done && err == nil {
		// home cannot free it: its own work joins the points, taken
		// again with it (pointsOf).
		for _, pt := range pts {
			pt.release()
		}
		us := []*streamCore{home}
		for _, u := range seen {
			if u.s != home {
				us = append(us, u.s)
			}
		}
		if pts, err = pointsOf(us); err == nil && p.def.c != home {
			done, err = p.def.c.freeAfter(st, pts)
		}
	}
	var errs []error
	if !done {
		// The host waits, then frees: through the points, which need no
		// stream.
		errs = append(errs, err)
		for _, pt := range pts {
			errs = append(errs, pt.waitHost())
		}
		errs = append(errs, st.buf.Close())
	} else {
		errs = append(errs, err)
	}
	st.forget(seen)
	st.zero.release(p)
	return errors.Join(errs...)
}

// freeInCapture frees memory its capture allocated, in the capture, on its
// allocation stream, after the capture's other streams that used it. Once
// the capture has ended the memory is the graph's, freed with it.
func (p *Program) freeInCapture(st *storage) error {
	c, home := st.cap, st.home
	seen := st.snapshot()
	defer st.forget(seen)
	defer st.zero.release(p)
	if c.isEnded() {
		return nil // the memory is the graph's
	}
	type point struct {
		e backend.Event
		m *capMark
	}
	var pts []point
	defer func() {
		for _, pt := range pts {
			p.putEvent(pt.e, pt.m.capture())
		}
	}()
	var errs []error
	for _, u := range seen {
		if u.s == home {
			continue
		}
		e, m, err := u.s.pointOn()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pts = append(pts, point{e, m})
	}
	cs, ok := home.enter()
	if !ok {
		return nil // home's Close ended the capture
	}
	defer home.exit()
	if cs != c {
		return nil // the capture has ended: its points do not matter
	}
	if err := errors.Join(errs...); err != nil {
		return failed(c, err)
	}
	for _, pt := range pts {
		if err := home.waitHeld(cs, pt.m, "Ndarray.Close", pt.e); err != nil {
			return err
		}
	}
	err := failed(c, st.buf.FreeOn(home.b))
	home.did()
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
	size := c.lay.size
	buf, err := c.buf.View(off*size, n*size)
	if err != nil {
		return nil, fmt.Errorf("qd: Ndarray.Rows(%d, %d): %w", lo, hi, err)
	}
	v := &ndCore{p: c.p, st: c.st, buf: buf, lay: c.lay, shape: shape, dims: c.dims, n: n, view: true}
	return &Ndarray[T]{c: v, parent: a.root()}, nil
}

// Reshape is a view of the array with another shape of the same number of
// elements (1 to 4 dimensions, row-major): an Ndarray sharing this one's
// memory and use tracking, as a Rows view does. Copies need equal shapes,
// so Reshape is how a 4×4 array meets a 2×8 one. Closing the parent closes
// its views; closing a view frees nothing.
func (a *Ndarray[T]) Reshape(shape ...int) (*Ndarray[T], error) {
	if err := a.use(); err != nil {
		return nil, err
	}
	defer a.c.p.exit()
	c := a.c
	sh, dims, err := reshaped(c.n, shape, "Ndarray")
	if err != nil {
		return nil, err
	}
	v := &ndCore{p: c.p, st: c.st, buf: c.buf, lay: c.lay, shape: sh, dims: dims, n: c.n, view: true}
	return &Ndarray[T]{c: v, parent: a.root()}, nil
}

// reshaped checks shape as a new shape for n elements.
func reshaped(n int, shape []int, what string) ([4]int, int, error) {
	out := [4]int{1, 1, 1, 1}
	if len(shape) < 1 || len(shape) > ir.MaxDims {
		return out, 0, fmt.Errorf("%w: %s.Reshape: %d dimensions; want 1 to %d", ErrInvalidArgument, what, len(shape), ir.MaxDims)
	}
	m := 1
	for i, d := range shape {
		if d < 0 || d > 0 && m > n/d+1 {
			return out, 0, fmt.Errorf("%w: %s.Reshape%v of an array of %d elements", ErrInvalidArgument, what, shape, n)
		}
		out[i] = d
		m *= d
	}
	if m != n {
		return out, 0, fmt.Errorf("%w: %s.Reshape%v has %d elements; the array has %d", ErrInvalidArgument, what, shape, m, n)
	}
	return out, len(shape), nil
}

// root is the array that owns a's memory: a itself, or the parent of a
// view.
func (a *Ndarray[T]) root() *Ndarray[T] {
	if a.parent != nil {
		return a.parent
	}
	return a
}
