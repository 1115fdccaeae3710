package qd

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
)

// Event marks a point in a stream. Record captures the work enqueued on a
// stream so far; the event is reached when that work is done. Streams wait
// for events without blocking the host ([Stream.WaitEvent]); the host waits
// with Synchronize. Every method is safe for concurrent use.
type Event struct {
	c *eventCore
}

type eventCore struct {
	p      *Program
	b      backend.Event
	timing bool
	closed atomic.Bool

	mu       sync.Mutex // orders Record with the waits that read mark
	recorded bool       // Record has succeeded once
	mark     *capMark   // the capture of the last Record, nil outside one
	// waits is held shared by host waits through the backend's event
	// (hostWait), and alone by a Record into a capture: the host must
	// not wait for an event the driver is recording into a graph, and a
	// Record outside every capture need not wait for the host.
	waits sync.RWMutex
	// inflight counts streams of other Programs enqueueing a wait for the
	// event (peers.go); its release waits for them.
	inflight busy
}

// hold keeps the event from being destroyed while a stream of another
// Program enqueues a wait for it; it fails if the event is closed. Pair
// with inflight.leave.
func (c *eventCore) hold() bool {
	c.inflight.enter()
	if c.closed.Load() {
		c.inflight.leave()
		return false
	}
	return true
}

// NewEvent makes an event; [WithTiming] makes it usable with [Elapsed].
func (p *Program) NewEvent(opts ...EventOption) (*Event, error) {
	var cfg eventConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	be, err := p.dev.NewEvent(cfg.timing)
	if err != nil {
		return nil, fmt.Errorf("qd: NewEvent: %w", err)
	}
	c := &eventCore{p: p, b: be, timing: cfg.timing}
	p.mu.Lock()
	p.events[c] = struct{}{}
	p.mu.Unlock()
	e := &Event{c: c}
	runtime.AddCleanup(e, func(c *eventCore) { go c.p.closeLeaked(c) }, c)
	return e, nil
}

// check validates e for use with p; the caller holds p's lifetime lock.
func (e *Event) check(p *Program) error {
	if e == nil || e.c == nil {
		return fmt.Errorf("%w: nil event", ErrInvalidArgument)
	}
	return p.checkObject(e.c.p, e.c, "event")
}

// use checks e and takes its Program's lifetime lock; call exit when done.
func (e *Event) use() error {
	if e == nil || e.c == nil {
		return fmt.Errorf("%w: nil event", ErrInvalidArgument)
	}
	return e.c.p.useObject(e.c, "event")
}

func (c *eventCore) isClosed() bool { return c.closed.Load() }

// Record captures the work enqueued on s so far. Recording again moves the
// event to the new point; waits enqueued before keep the point they saw.
// s must be a stream of the event's Program (a GPU records an event only on
// its own device); streams of other Programs may wait for it.
//
// Recorded on a capturing stream, the event marks a point of the graph
// being captured: streams that wait for it join the capture, and the host
// cannot wait for it (Synchronize and Query fail). Replays of the graph do
// not record it: to know when a replay is done, record an event after
// [Graph.LaunchOn].
func (e *Event) Record(s *Stream) error {
	if err := e.use(); err != nil {
		return err
	}
	defer e.c.p.exit()
	if err := s.check(e.c.p); err != nil {
		return err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	// The mark and the record are one step under s's gate (gate.go).
	cp, ok := s.c.enter()
	if !ok {
		return closedErr("stream")
	}
	defer s.c.exit()
	m := s.c.mark()
	if cp != nil {
		e.c.waits.Lock()
		defer e.c.waits.Unlock()
	}
	if err := e.c.b.Record(s.c.b); err != nil {
		return failed(cp, err)
	}
	e.c.recorded, e.c.mark = true, m
	return nil
}

// hostWait begins a host wait (call) through the backend's event, and
// refuses one for an event last recorded in a capture. The check and the
// wait are one step: a Record into a capture waits for done.
func (e *Event) hostWait(call string) (done func(), err error) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	switch m := e.c.mark; {
	case m == nil:
		e.c.waits.RLock()
		return e.c.waits.RUnlock, nil
	case m.c.isEnded():
		return nil, fmt.Errorf("%w: %s: the event was last recorded inside a capture that has ended (on %s): it marks a point of a graph, not of a stream; record it after Graph.LaunchOn to wait for a replay",
			ErrCapturing, call, m.c.origin.describe())
	default:
		return nil, m.c.refuse(call, "the event was recorded inside the capture: the work it marks runs only when the graph is launched")
	}
}

// Synchronize blocks until the event's last recorded point is reached (at
// once for an event never recorded). An event last recorded inside a
// capture cannot be waited for: the error matches [ErrCapturing].
func (e *Event) Synchronize() error {
	if err := e.use(); err != nil {
		return err
	}
	defer e.c.p.exit()
	done, err := e.hostWait("Event.Synchronize")
	if err != nil {
		return err
	}
	defer done()
	return e.c.b.Synchronize()
}

// SynchronizeContext is Synchronize that gives up when ctx is done,
// returning ctx's error. A nil ctx is an error matching
// [ErrInvalidArgument].
func (e *Event) SynchronizeContext(ctx context.Context) error {
	const call = "Event.SynchronizeContext"
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context", ErrInvalidArgument, call)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.use(); err != nil {
		return err
	}
	done, err := e.hostWait(call)
	e.c.p.exit()
	if err != nil {
		return err
	}
	done()
	if done, err := e.Query(); err != nil || done {
		return err
	}
	// The goroutine holds the Program already (untilDone): it waits on the
	// backend's event itself, since another enter would deadlock behind a
	// Close that waits to take the Program; and it holds the event, so that
	// the event's Close waits for it rather than destroy what it waits on.
	return untilDone(ctx, e.c.p, func() error {
		if !e.c.hold() {
			return closedErr("event")
		}
		defer e.c.inflight.leave()
		done, err := e.hostWait(call)
		if err != nil {
			return err
		}
		defer done()
		return e.c.b.Synchronize()
	})
}

// Query reports whether the event's last recorded point is reached. An
// event last recorded inside a capture cannot be queried: the error
// matches [ErrCapturing].
func (e *Event) Query() (bool, error) {
	if err := e.use(); err != nil {
		return false, err
	}
	defer e.c.p.exit()
	done, err := e.hostWait("Event.Query")
	if err != nil {
		return false, err
	}
	defer done()
	return e.c.b.Query()
}

// Close releases the event. It is idempotent.
func (e *Event) Close() error {
	if e == nil || e.c == nil {
		return nil
	}
	return e.c.p.closeObject(e.c)
}

func (c *eventCore) close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.inflight.wait()
	c.p.mu.Lock()
	delete(c.p.events, c)
	c.p.mu.Unlock()
	return c.b.Close()
}

func (c *eventCore) release() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.inflight.wait()
	return c.b.Close()
}

// Elapsed is the time between two reached timing events ([WithTiming]) of
// one Program, measured on the device.
func Elapsed(start, end *Event) (time.Duration, error) {
	if err := start.use(); err != nil {
		return 0, err
	}
	defer start.c.p.exit()
	if err := end.check(start.c.p); err != nil {
		return 0, err
	}
	if !start.c.timing || !end.c.timing {
		return 0, fmt.Errorf("%w: Elapsed needs two events made WithTiming()", ErrInvalidArgument)
	}
	done, err := start.hostWait("Elapsed")
	if err != nil {
		return 0, err
	}
	defer done()
	if start.c != end.c {
		done, err := end.hostWait("Elapsed")
		if err != nil {
			return 0, err
		}
		defer done()
	}
	return start.c.b.Elapsed(end.c.b)
}
