package qd

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
)

// Stream is an in-order queue of work on a device. Work on one stream runs
// in the order it was enqueued; work on different streams may overlap.
// Streams are non-blocking: they are ordered with each other only by events
// (WaitEvent, WaitStream). Every method is safe for concurrent use.
type Stream struct {
	c *streamCore
}

type streamKind uint8

const (
	streamUser    streamKind = iota // made by NewStream; destroyed by Close
	streamDefault                   // the Program's; destroyed by Program.Close
	streamPooled                    // the stream pool's; destroyed by Program.Close
	streamWrapped                   // a foreign handle; never destroyed by qd
)

// streamCore is the part of a Stream that the Program's registry and the
// leak cleanup hold, so the Stream itself can become unreachable.
type streamCore struct {
	p      *Program
	b      backend.Stream
	kind   streamKind
	closed atomic.Bool
	// gone is closed once a closed stream's work is done and it is
	// destroyed: waits that find closed set wait on it, since a Close in
	// another goroutine may still be draining the stream.
	gone chan struct{}
	// inflight counts launches enqueueing on the stream; Close waits for
	// them before it destroys the stream. Launches only enqueue, which
	// takes microseconds, unless they wait for slices to be copied back.
	inflight busy
	// cap is the graph capture the stream records into, nil when it runs
	// its work; it changes only with gate held exclusively (capture.go).
	cap  atomic.Pointer[capture]
	gate sync.RWMutex
}

func (p *Program) registerStream(bs backend.Stream, kind streamKind) *streamCore {
	c := &streamCore{p: p, b: bs, kind: kind, gone: make(chan struct{})}
	p.mu.Lock()
	p.streams[c] = struct{}{}
	p.mu.Unlock()
	return c
}

// NewStream makes a stream. Close it when done; a stream that becomes
// unreachable without Close is released by a cleanup after its work.
func (p *Program) NewStream(opts ...StreamOption) (*Stream, error) {
	var cfg streamConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	least, greatest := p.dev.PriorityRange()
	prio := least
	if cfg.hasPriority {
		// Lower numbers are higher priorities; clamp into [greatest, least].
		prio = max(min(cfg.priority, least), greatest)
	}
	bs, err := p.dev.NewStream(prio)
	if err != nil {
		return nil, fmt.Errorf("qd: NewStream: %w", err)
	}
	return p.newStreamHandle(bs, streamUser), nil
}

func (p *Program) newStreamHandle(bs backend.Stream, kind streamKind) *Stream {
	s := &Stream{c: p.registerStream(bs, kind)}
	runtime.AddCleanup(s, func(c *streamCore) { go c.p.closeLeaked(c) }, s.c)
	return s
}

// WrapStream wraps a stream made outside qd (a CUstream on CUDA, for
// example one from another library) so kernels can run on it. qd uses the
// stream but never destroys it; Close only forgets it.
func (p *Program) WrapStream(handle uintptr) (*Stream, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	bs, err := p.dev.WrapStream(handle)
	if err != nil {
		return nil, fmt.Errorf("qd: WrapStream(%#x): %w", handle, err)
	}
	return p.newStreamHandle(bs, streamWrapped), nil
}

// check validates s for use with p (not nil, same Program, open); the
// caller holds p's lifetime lock.
func (s *Stream) check(p *Program) error {
	if s == nil || s.c == nil {
		return fmt.Errorf("%w: nil stream", ErrInvalidArgument)
	}
	return p.checkObject(s.c.p, s.c, "stream")
}

// use takes the lifetime lock of s's Program and checks s; call exit on
// the Program when done.
func (s *Stream) use() error {
	if s == nil || s.c == nil {
		return fmt.Errorf("%w: nil stream", ErrInvalidArgument)
	}
	return s.c.p.useObject(s.c, "stream")
}

func (sc *streamCore) isClosed() bool { return sc.closed.Load() }

// Synchronize blocks until all work enqueued on s so far is done, and
// returns the first error that work reported since the last call. While s
// captures a graph it fails with an error matching [ErrCapturing].
func (s *Stream) Synchronize() error {
	if err := s.use(); err != nil {
		return err
	}
	defer s.c.p.exit()
	cp, ok := s.c.enter()
	if !ok {
		return closedErr("stream")
	}
	defer s.c.exit()
	if cp != nil {
		return cp.refuse("Stream.Synchronize", capturedWork)
	}
	return s.c.withCommErrs(s.c.b.Synchronize())
}

// capturedWork says why a capturing stream cannot be waited for.
const capturedWork = "the stream is capturing: its work runs only when the graph is launched; wait after Capture returns"

// SynchronizeContext is Synchronize that gives up when ctx is done,
// returning ctx's error (errors.Is(err, context.DeadlineExceeded), say).
// The work goes on, and its errors are left for the next Synchronize of
// s. A nil ctx is an error matching [ErrInvalidArgument].
func (s *Stream) SynchronizeContext(ctx context.Context) error {
	const call = "Stream.SynchronizeContext"
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context", ErrInvalidArgument, call)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	s.c.p.exit()
	return s.c.synchronizeContext(ctx, call)
}

// synchronizeContext waits for the work on s, giving up when ctx is done.
// The waits that may be given up go through events, which take none of
// the errors of the stream's work: those are collected by a Synchronize
// once the stream is idle, so a wait given up leaves them all for the next
// Synchronize. (Waiting on a goroutine with Synchronize itself lost them:
// the goroutine took the errors after its caller had gone.) Each round
// waits for the work enqueued so far; work other goroutines enqueue
// meanwhile takes another round. The caller must not hold s's Program: a
// round's goroutine holds it (untilDone).
func (sc *streamCore) synchronizeContext(ctx context.Context, call string) error {
	for {
		done, err := sc.syncIfIdle(call)
		if err != nil || done {
			return err
		}
		if err := untilDone(ctx, sc.p, func() error { return sc.hostWaitFor(nil, "") }); err != nil {
			return err
		}
	}
}

// syncIfIdle reports whether s has no work left and, if so, returns the
// errors its work reported (Synchronize, which then does not block). A
// closed stream is done: its Close waits for its work.
func (sc *streamCore) syncIfIdle(call string) (bool, error) {
	if err := sc.p.enter(); err != nil {
		return false, err
	}
	defer sc.p.exit()
	cp, ok := sc.enter()
	if !ok {
		return false, closedErr("stream")
	}
	defer sc.exit()
	if cp != nil {
		return false, cp.refuse(call, capturedWork)
	}
	done, err := sc.b.Query()
	if err == nil && done {
		err = sc.withCommErrs(sc.b.Synchronize())
	}
	return done, err
}

// untilDone runs wait, a host wait that takes no stream's errors and does
// not take p's lifetime lock itself (a second shared hold would deadlock
// behind a Close waiting for the lock), on a
// goroutine that holds p, and returns wait's error, or ctx's error once
// ctx is done first (wait then ends on its own, when the work does).
func untilDone(ctx context.Context, p *Program, wait func() error) error {
	res := make(chan error, 1)
	if err := p.enter(); err != nil {
		return err
	}
	go func() {
		defer p.exit()
		res <- wait()
	}()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Query reports whether all work enqueued on s is done, without blocking.
// While s captures a graph it fails with an error matching [ErrCapturing].
func (s *Stream) Query() (bool, error) {
	if err := s.use(); err != nil {
		return false, err
	}
	defer s.c.p.exit()
	cp, ok := s.c.enter()
	if !ok {
		return false, closedErr("stream")
	}
	defer s.c.exit()
	if cp != nil {
		return false, cp.refuse("Stream.Query", capturedWork)
	}
	return s.c.b.Query()
}

// WaitEvent makes work enqueued on s after this call wait until e's last
// recorded point is reached. The host does not block. An event never
// recorded is already reached. e may belong to another Program of the same
// backend, on another device or the same one: the wait then orders s after
// that Program's work (a GPU waits on the device, across GPUs; docs/
// multigpu.md). An event of another backend's Program is [ErrForeign].
//
// Inside a capture, waiting for an event recorded on a capturing stream
// makes s join the capture (its later work is captured too, until it is
// joined back); a capturing stream may wait only for events recorded in
// its own capture. Graphs do not span Programs yet: a wait that would join
// streams of two Programs in one capture fails with [ErrCapturing].
func (s *Stream) WaitEvent(e *Event) error {
	if err := s.use(); err != nil {
		return err
	}
	p := s.c.p
	defer p.exit()
	if e != nil && e.c != nil && e.c.p != p {
		return s.c.waitPeerEvent(e.c)
	}
	if err := e.check(p); err != nil {
		return err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	if !e.c.recorded {
		return nil
	}
	return s.c.waitPoint(e.c.mark, "Stream.WaitEvent", e.c.b)
}

// WaitStream makes work enqueued on s after this call wait for all work
// enqueued on o before it, without blocking the host. o may belong to
// another Program of the same backend, as for WaitEvent. Inside a capture,
// a stream that waits for a capturing stream joins its capture, and a
// capturing stream may wait only for streams of its own capture.
func (s *Stream) WaitStream(o *Stream) error {
	if err := s.use(); err != nil {
		return err
	}
	p := s.c.p
	defer p.exit()
	if o != nil && o.c != nil && o.c.p != p {
		return s.c.waitPeerStream(o.c)
	}
	if err := o.check(p); err != nil {
		return err
	}
	if s.c == o.c {
		return nil // a stream is always ordered after itself
	}
	return p.join(s.c, o.c, "Stream.WaitStream")
}

// Handle is the native handle: a CUstream on CUDA; an identifier on the CPU.
func (s *Stream) Handle() uintptr {
	if s == nil || s.c == nil {
		return 0
	}
	return s.c.b.Handle()
}

// Close waits for the work enqueued on s, then destroys it (a wrapped
// foreign stream is only forgotten). Close is idempotent; other methods of a
// closed stream return [ErrClosed]. The default stream belongs to the Program:
// closing it is an error.
func (s *Stream) Close() error {
	if s == nil || s.c == nil {
		return nil
	}
	if s.c.kind == streamDefault {
		return fmt.Errorf("%w: the default stream is closed by Program.Close", ErrInvalidArgument)
	}
	return s.c.p.closeObject(s.c)
}

func (p *Program) closeStream(c *streamCore) error {
	// The capture check and the mark are one step under the gate: a
	// capture begins on an open stream only, and operations holding the
	// gate (enter) are done once the gate is ours.
	c.gate.Lock()
	if cp := c.cap.Load(); cp != nil {
		c.gate.Unlock()
		return cp.refuse("Stream.Close", "the stream is capturing; close it after Capture returns")
	}
	if !c.closed.CompareAndSwap(false, true) {
		c.gate.Unlock()
		<-c.gone // another Close is draining it: Close returns after the work
		return nil
	}
	c.gate.Unlock()
	c.inflight.wait()
	err := c.closeHandle()
	close(c.gone)
	// Only now leave the registry, so Program.Synchronize sees a stream until its
	// work is done.
	p.mu.Lock()
	delete(p.streams, c)
	p.mu.Unlock()
	return err
}

// release is [Program.Close]'s path: the Program is already synchronized.
// Operations of other Programs may hold the stream (an event recorded on
// it, a zero fill); it waits for them.
func (sc *streamCore) release() error {
	sc.gate.Lock()
	closing := sc.closed.CompareAndSwap(false, true)
	sc.gate.Unlock()
	if !closing {
		return nil
	}
	sc.inflight.wait()
	err := sc.closeHandle()
	close(sc.gone)
	return err
}

func (sc *streamCore) closeHandle() error {
	if sc.kind == streamWrapped {
		// Not ours to destroy; wait for what we enqueued on it.
		return sc.b.Synchronize()
	}
	return sc.b.Close()
}

func (sc *streamCore) close() error { return sc.p.closeStream(sc) }

var errNilEvent = errors.New("qd: nil event")

// hold keeps the stream from being destroyed while work is enqueued on it
// (its Close waits for inflight); it fails if the stream is closed. Pair
// with inflight.leave. It counts first, then checks, as Close marks first,
// then waits: one of the two sees the other.
func (sc *streamCore) hold() bool {
	sc.inflight.enter()
	if sc.closed.Load() {
		sc.inflight.leave()
		return false
	}
	return true
}
