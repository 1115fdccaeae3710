package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Traced graphs (backend.CaptureTracer, backend.TracedExec).
//
// While a trace is on, package qd brackets each task it enqueues on a
// capturing stream with the trace timer's Begin and End, as outside a
// capture. There each mark is a trace point: an event of the capture's
// own, recorded with Codes.EventRecordExternal, which the capture keeps
// as an event-record node of the graph (a plain record in a capture only
// orders streams). Calls.StreamGetCaptureInfo, asked right after, names
// the node: the stream's next work depends on it alone. The graph owns
// its points' events.
//
// A replay while a trace is on (LaunchTraced) points each node of the
// exec at a fresh timing event of the trace
// (Calls.GraphExecEventRecordNodeSetEvent, which changes later launches
// only), launches, points the nodes back at the graph's own events (so
// that no later replay records an event the trace has recycled or
// destroyed), and hands the fresh events to the timer as pending spans,
// resolved as any others. Replays in flight keep their events, so traced
// replays may overlap. A replay with no trace on records the graph's own
// events, which nothing reads.
//
// The node handles are the captured graph's: an exec with points keeps
// its graph until the exec is destroyed, and is never updated in place
// (Update reports false, and package qd instantiates the new capture).

// captureActive is the capture status of a stream that is capturing
// (CU_STREAM_CAPTURE_STATUS_ACTIVE, hipStreamCaptureStatusActive).
const captureActive = 1

// tracePoint is one captured mark: the graph's event and its node.
type tracePoint struct {
	ev   *event
	node uintptr
}

// capturedSpan is a Begin/End pair captured in a graph.
type capturedSpan struct{ start, end tracePoint }

var _ backend.CaptureTracer = (*traceTimer)(nil)

// TracesCaptures reports whether the driver has the calls traced graphs
// need.
func (t *traceTimer) TracesCaptures() bool { return t.d.tracesCaptures() }

func (d *Device) tracesCaptures() bool {
	c := d.c
	return d.codes.EventRecordExternal != 0 && c.EventRecordWithFlags.Bound() &&
		c.StreamGetCaptureInfo.Bound() && c.GraphExecEventRecordNodeSetEvent.Bound()
}

// point records a trace point on s, a stream of capture c.
func (d *Device) point(s *stream) (tracePoint, error) {
	if !d.tracesCaptures() {
		return tracePoint{}, fmt.Errorf("%s: trace marks cannot be captured with this driver (it lacks %s): %w",
			d.Arch(), d.c.GraphExecEventRecordNodeSetEvent.Name, backend.ErrUnsupported)
	}
	// The graph's own events only stand in between traced replays: they
	// need not time.
	ev, err := d.newEvent(false)
	if err != nil {
		return tracePoint{}, err
	}
	if err := d.run(&d.c.EventRecordWithFlags, []uintptr{ev.h, s.h, d.codes.EventRecordExternal}); err != nil {
		return tracePoint{}, errors.Join(err, ev.Close())
	}
	// (stream, status*, id*, graph*, deps**, ndeps*)
	var status uint32
	var id uint64
	var graph, ndeps uintptr
	var deps *uintptr // the driver's array of node handles
	if err := d.enter(); err != nil {
		return tracePoint{}, errors.Join(err, ev.Close())
	}
	// Call keeps the out-parameters on the heap (go:uintptrescapes).
	r := Call(&d.c.StreamGetCaptureInfo, s.h, uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&id)),
		uintptr(unsafe.Pointer(&graph)), uintptr(unsafe.Pointer(&deps)), uintptr(unsafe.Pointer(&ndeps)))
	d.leave()
	err = d.check(&d.c.StreamGetCaptureInfo, r)
	if err == nil && (status != captureActive || ndeps != 1 || deps == nil) {
		err = fmt.Errorf("%s: a trace point in a capture: capture status %d with %d nodes after its record, want an active capture and 1", d.Arch(), status, ndeps)
	}
	if err != nil {
		return tracePoint{}, errors.Join(err, ev.Close())
	}
	return tracePoint{ev: ev, node: *deps}, nil
}

// capturedBegin is Begin on a capturing stream: the start point.
func (t *traceTimer) capturedBegin(s *stream) (backend.TraceMark, error) {
	p, err := t.d.point(s)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// capturedEnd is End on a capturing stream: the end point, and the span
// kept by the capture.
func (t *traceTimer) capturedEnd(s *stream, c *capture, m backend.TraceMark) error {
	start, ok := m.(*tracePoint)
	if !ok || start == nil {
		return fmt.Errorf("%s: trace End in a capture with a mark %T made outside it", t.d.Arch(), m)
	}
	end, err := t.d.point(s)
	if err != nil {
		return errors.Join(err, start.ev.Close())
	}
	c.mu.Lock()
	c.spans = append(c.spans, capturedSpan{*start, end})
	c.mu.Unlock()
	return nil
}

// closeSpans destroys the events of spans.
func closeSpans(spans []capturedSpan) error {
	var errs []error
	for _, sp := range spans {
		errs = append(errs, sp.start.ev.Close(), sp.end.ev.Close())
	}
	return errors.Join(errs...)
}

var _ backend.TracedExec = (*graphExec)(nil)

// TracedSpans is the number of spans captured in the exec's graph.
func (x *graphExec) TracedSpans() int {
	if x.tmpl == nil {
		return 0
	}
	return len(x.tmpl.spans)
}

// LaunchTraced is Launch with this replay's times of the captured spans
// recorded by bt.
func (x *graphExec) LaunchTraced(bs backend.Stream, bt backend.TraceTimer, spans []trace.Span) error {
	d := x.d
	t, ok := bt.(*traceTimer)
	if !ok || t.d != d {
		return fmt.Errorf("%s: LaunchTraced with a %T that is not this device's trace timer", d.Arch(), bt)
	}
	if n := x.TracedSpans(); len(spans) != n {
		return fmt.Errorf("%s: LaunchTraced with %d spans for a graph that captured %d", d.Arch(), len(spans), n)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.usable(); err != nil {
		return err
	}
	evs := make([]*event, 0, 2*len(spans))
	for range 2 * len(spans) {
		e, err := t.get()
		if err != nil {
			t.recycle(evs...)
			return err
		}
		evs = append(evs, e)
	}
	err := x.pointAt(func(i int) *event { return evs[i] })
	launched := false
	if err == nil {
		err = x.launch(bs)
		launched = err == nil
	}
	// Back to the graph's own events, whatever happened: the trace's may
	// be recycled once resolved.
	if rerr := x.pointAt(nil); rerr != nil {
		if launched {
			// The replay is enqueued and records the trace's events: its
			// spans are kept, but later replays would record them too, so
			// the exec refuses them.
			x.broken = fmt.Errorf("%s: graph exec unusable: its trace nodes could not be reset after a traced replay: %w", d.Arch(), rerr)
			err = nil
		} else {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		t.recycle(evs...)
		return err
	}
	for _, e := range evs {
		// The replay records them, outside every capture.
		e.cap.Store(nil)
		e.recorded.Store(true)
	}
	pend := make([]pendingSpan, len(spans))
	for i, sp := range spans {
		pend[i] = pendingSpan{start: evs[2*i], end: evs[2*i+1], span: sp}
	}
	return t.pend(pend...)
}

// pointAt points the exec's trace nodes at ev(2i) and ev(2i+1) for span
// i, or at the graph's own events when ev is nil. The caller holds x.mu.
func (x *graphExec) pointAt(ev func(i int) *event) error {
	d := x.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	for i, sp := range x.tmpl.spans {
		for k, p := range [2]tracePoint{sp.start, sp.end} {
			e := p.ev
			if ev != nil {
				e = ev(2*i + k)
			}
			if err := d.check(&d.c.GraphExecEventRecordNodeSetEvent, Call(&d.c.GraphExecEventRecordNodeSetEvent, x.h, p.node, e.h)); err != nil {
				return err
			}
		}
	}
	runtime.KeepAlive(x)
	return nil
}
