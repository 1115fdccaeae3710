package gpu

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// traceTimer times tasks on the GPU with timing events: Begin and End each
// record one pooled timing event on the task's stream, and a span's times
// are the events' elapsed times from an epoch event, recorded at the
// start on an idle stream and synchronized at once, so that it completes at
// (within a few microseconds of) the host time epochAt.
//
// Cost with tracing on: two event records per task (each about 1–2
// µs of host time, similar to a launch) and the GPU's timestamp writes.
// Spans are resolved when a trace is flushed, or, once resolveAt are
// pending, by End itself for the pending spans whose end event the GPU has
// already reached (one event query each), so a long trace does not hold an
// unbounded number of events. Elapsed times come as float32 milliseconds
// from the driver (resolution about 0.5 µs): within 100 s of the epoch they
// are exact to a few microseconds.
type traceTimer struct {
	d       *Device
	rec     *trace.Recorder
	epoch   *event
	epochAt time.Duration

	mu      sync.Mutex
	free    []*event
	all     []*event
	pending []pendingSpan
	closed  bool
}

type pendingSpan struct {
	start, end *event
	span       trace.Span
}

// resolveAt is the number of pending spans at which End resolves the ones
// already done.
const resolveAt = 4096

// NewTraceTimer starts timing spans for rec on this device's streams.
func (d *Device) NewTraceTimer(rec *trace.Recorder) (backend.TraceTimer, error) {
	ep, err := d.newEvent(true)
	if err != nil {
		return nil, err
	}
	bs, err := d.NewStream(d.props.PriorityLeast)
	if err != nil {
		ep.Close()
		return nil, err
	}
	err = ep.Record(bs)
	if err == nil {
		err = ep.Synchronize()
	}
	// The stream's Close reports a failed wait or destroy, which would
	// otherwise go unseen (and leave the stream behind).
	if cerr := bs.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		ep.Close()
		return nil, err
	}
	at := rec.Now()
	rec.SetMeta("clock", d.Arch()+" timing events, relative to an epoch event")
	return &traceTimer{d: d, rec: rec, epoch: ep, epochAt: at}, nil
}

func (t *traceTimer) get() (*event, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("%s: trace timer closed", t.d.Arch())
	}
	if n := len(t.free); n > 0 {
		e := t.free[n-1]
		t.free = t.free[:n-1]
		t.mu.Unlock()
		return e, nil
	}
	t.mu.Unlock()
	e, err := t.d.newEvent(true)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.all = append(t.all, e)
	t.mu.Unlock()
	return e, nil
}

func (t *traceTimer) Begin(bs backend.Stream) (backend.TraceMark, error) {
	if s, ok := bs.(*stream); ok && s.cap.Load() != nil {
		return t.capturedBegin(s) // graphtrace.go
	}
	e, err := t.get()
	if err != nil {
		return nil, err
	}
	if err := e.Record(bs); err != nil {
		t.recycle(e)
		return nil, err
	}
	return e, nil
}

// recycle gives events that time nothing back to the free list.
func (t *traceTimer) recycle(evs ...*event) {
	t.mu.Lock()
	t.free = append(t.free, evs...)
	t.mu.Unlock()
}

// pend adds spans to the pending ones, resolving those already reached
// once resolveAt are pending.
func (t *traceTimer) pend(spans ...pendingSpan) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, spans...)
	if len(t.pending) >= resolveAt {
		return t.resolveLocked(false)
	}
	return nil
}

func (t *traceTimer) End(bs backend.Stream, m backend.TraceMark, span trace.Span) error {
	if s, ok := bs.(*stream); ok {
		if c := s.cap.Load(); c != nil {
			return t.capturedEnd(s, c, m) // graphtrace.go
		}
	}
	start, ok := m.(*event)
	if !ok || start == nil || start.d != t.d {
		return fmt.Errorf("%s: trace End with a foreign mark %T", t.d.Arch(), m)
	}
	end, err := t.get()
	if err != nil {
		return err
	}
	if err := end.Record(bs); err != nil {
		t.recycle(start, end)
		return err
	}
	return t.pend(pendingSpan{start: start, end: end, span: span})
}

// resolveLocked records the pending spans whose end event is reached
// (every one, waiting for each, when wait is set) and recycles their
// events.
func (t *traceTimer) resolveLocked(wait bool) error {
	var errs []error
	kept := t.pending[:0]
	for _, ps := range t.pending {
		if wait {
			if err := ps.end.Synchronize(); err != nil {
				errs = append(errs, err)
			}
		} else if done, err := ps.end.query(); err != nil || !done {
			if err != nil {
				errs = append(errs, err)
			}
			kept = append(kept, ps)
			continue
		}
		a, err1 := t.epoch.Elapsed(ps.start)
		b, err2 := t.epoch.Elapsed(ps.end)
		if err1 == nil && err2 == nil {
			ps.span.Start, ps.span.End = t.epochAt+a, t.epochAt+b
			t.rec.Span(ps.span)
		} else {
			errs = append(errs, err1, err2)
		}
		t.free = append(t.free, ps.start, ps.end)
	}
	clear(t.pending[len(kept):])
	t.pending = kept
	return errors.Join(errs...)
}

// Flush waits for every pending span's end event and records the spans.
func (t *traceTimer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resolveLocked(true)
}

// Close destroys the timer's events.
func (t *traceTimer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	errs := []error{t.epoch.Close()}
	for _, e := range t.all {
		errs = append(errs, e.Close())
	}
	t.all, t.free, t.pending = nil, nil, nil
	return errors.Join(errs...)
}
