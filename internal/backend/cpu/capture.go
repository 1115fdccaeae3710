package cpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Capture and replay (backend.Capturer).
//
// A capturing stream records the ops it is given instead of queueing
// them: each stream of a capture has a lane, an ordered list of ops. An
// event recorded on a capturing stream records a signal of the capture,
// numbered in the order of the capture's records; a stream that waits for
// such a signal joins the capture (its lane starts with that wait). A
// graph is the lanes; an exec replays them: lane 0 (the origin's) on the
// stream it is launched on, every other lane on a stream of the exec's
// own, with a fresh signal per recorded one, so that the waits of a
// replay refer to the records of the same replay and the lanes run
// concurrently as the streams of the capture would have. Replays of one
// exec are chained by a signal, as CUDA orders launches of one graph exec.
//
// Launches are recorded with their argument block (the launch's Begin
// ran at capture time), which the graph keeps until it is closed: a
// replay runs the same tasks with the same arguments, and reports errors
// its tasks raise on the stream it was launched on.
//
// Trace marks (a trace's Begin and End on a capturing stream) are
// recorded as they come, each End numbering its span in the capture
// (backend.TracedExec). A replay without a trace drops them; a traced
// replay (LaunchTraced) turns them into fresh marks of its trace, which
// read the clock where the replay's lanes reach them.

var (
	errCapturing    = backend.CaptureError("cpu backend: the stream is capturing a graph")
	errCapturedSig  = backend.CaptureError("cpu backend: the event was recorded inside a capture: it marks a point of a graph, not of a stream")
	errCaptureCross = backend.CaptureError("cpu backend: a wait across the boundary of a capture")
)

var _ backend.Capturer = (*Device)(nil)

// capture is one capture in progress.
type capture struct {
	mu     sync.Mutex
	origin *stream
	lanes  []*lane // lanes[0] is the origin's
	nsig   int     // signals recorded so far
	nspans int     // trace spans ended so far
	ended  bool
}

// lane is the ops one stream recorded.
type lane struct {
	s   *stream
	ops []op
}

// laneOf is s's lane; the caller holds c.mu.
func (c *capture) laneOf(s *stream) *lane {
	for _, l := range c.lanes {
		if l.s == s {
			return l
		}
	}
	return nil
}

// BeginCapture starts recording the ops enqueued on bs.
func (d *Device) BeginCapture(bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: capture on a %T", bs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.busyLocked(); err != nil {
		return err
	}
	s.cap = &capture{origin: s, lanes: []*lane{{s: s}}}
	return nil
}

// record appends o to s's lane, or returns false if the capture has
// ended (the caller then enqueues o as usual).
func (c *capture) record(s *stream, o op) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false, nil
	}
	l := c.laneOf(s)
	if l == nil {
		return false, nil // s left the capture as it ended
	}
	switch o.kind {
	case opSignal:
		o.sig.cap, o.sig.idx = c, c.nsig
		c.nsig++
	case opSpan:
		o.mark.idx = c.nspans
		c.nspans++
	}
	l.ops = append(l.ops, o)
	return true, nil
}

// waitCaptured makes s wait for sig, a signal recorded in a capture:
// s joins the capture if it is not capturing yet.
func (s *stream) waitCaptured(sig *signal) error {
	c := sig.cap
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return errCapturedSig
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errStreamClosed
	case s.cap == nil:
		s.cap = c
		c.lanes = append(c.lanes, &lane{s: s})
	case s.cap != c:
		return fmt.Errorf("%w: the event was recorded in another capture", errCaptureCross)
	}
	l := c.laneOf(s)
	l.ops = append(l.ops, op{kind: opWait, sig: sig})
	return nil
}

// EndCapture ends the capture begun on bs and returns its graph. Every
// joined lane's work must come before the origin's last op.
func (d *Device) EndCapture(bs backend.Stream) (backend.Graph, error) {
	s, ok := bs.(*stream)
	if !ok {
		return nil, fmt.Errorf("cpu backend: capture on a %T", bs)
	}
	s.mu.Lock()
	c := s.cap
	s.mu.Unlock()
	if c == nil || c.origin != s {
		return nil, errors.New("cpu backend: EndCapture on a stream that did not begin a capture")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for _, l := range c.lanes {
		l.s.mu.Lock()
		l.s.cap = nil
		l.s.mu.Unlock()
	}
	g := &graph{d: d, nsig: c.nsig, nspans: c.nspans}
	for _, l := range c.lanes {
		g.lanes = append(g.lanes, l.ops)
		g.ids = append(g.ids, l.s.id)
	}
	if err := g.checkJoined(); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// isCapturing reports whether s is recording.
func (s *stream) isCapturing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cap != nil
}

// graph is a capture's lanes. Its launches are released by Close, unless
// an exec took them over.
type graph struct {
	d      *Device
	lanes  [][]op
	ids    []uint64 // the stream of each lane, for messages
	nsig   int
	nspans int // trace spans captured
}

// checkJoined reports work of a lane that does not come before the end of
// lane 0: following waits back from the end of lane 0 to the records they
// wait for, every run, end or copy op must be reached.
func (g *graph) checkJoined() error {
	type pos struct{ lane, at int }
	sigAt := make([]pos, g.nsig)
	for li, ops := range g.lanes {
		for i, o := range ops {
			if o.kind == opSignal {
				sigAt[o.sig.idx] = pos{li, i}
			}
		}
	}
	reached := make([]int, len(g.lanes)) // ops [0, reached) of each lane come before the end
	reached[0] = len(g.lanes[0])
	for changed := true; changed; {
		changed = false
		for li, ops := range g.lanes {
			for _, o := range ops[:reached[li]] {
				if o.kind != opWait {
					continue
				}
				at := sigAt[o.sig.idx]
				if at.at+1 > reached[at.lane] {
					reached[at.lane] = at.at + 1
					changed = true
				}
			}
		}
	}
	for li, ops := range g.lanes {
		for _, o := range ops[reached[li]:] {
			if o.kind == opRun || o.kind == opEnd || o.kind == opFunc {
				return fmt.Errorf("cpu backend: work recorded on stream %d was not joined back into the capturing stream %d", g.ids[li], g.ids[0])
			}
		}
	}
	return nil
}

// Instantiate makes an exec that takes the graph's lanes over.
func (g *graph) Instantiate() (backend.GraphExec, error) {
	if g.lanes == nil {
		return nil, backend.ClosedError("cpu backend: Instantiate of a closed graph")
	}
	x := &exec{g: g.take()}
	x.helpers = make([]*stream, len(x.g.lanes)-1)
	for i := range x.helpers {
		x.helpers[i] = newStream(g.d)
	}
	return x, nil
}

// Close releases the launches of a graph no exec took over.
func (g *graph) Close() error {
	g.release()
	return nil
}

// take moves g's lanes into a new graph, leaving g empty.
func (g *graph) take() *graph {
	h := *g
	g.lanes = nil
	return &h
}

func (g *graph) release() {
	seen := map[*launch]bool{}
	for _, ops := range g.lanes {
		for _, o := range ops {
			if o.kind == opEnd && !seen[o.l] {
				seen[o.l] = true
				o.l.release()
			}
		}
	}
	g.lanes = nil
}

// sameShape reports whether h has g's lanes with the same ops in the same
// order: the same tasks of the same kernels, and the same records and waits.
func (g *graph) sameShape(h *graph) bool {
	if len(g.lanes) != len(h.lanes) || g.nsig != h.nsig || g.nspans != h.nspans {
		return false
	}
	for li := range g.lanes {
		a, b := g.lanes[li], h.lanes[li]
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			x, y := a[i], b[i]
			if x.kind != y.kind || x.task != y.task {
				return false
			}
			if (x.kind == opRun || x.kind == opEnd) && x.l.m != y.l.m {
				return false
			}
			if (x.kind == opSignal || x.kind == opWait) && x.sig.idx != y.sig.idx {
				return false
			}
		}
	}
	return true
}

// exec replays a graph.
type exec struct {
	mu      sync.Mutex
	g       *graph
	helpers []*stream // the streams of lanes 1, 2, ...
	last    *signal   // completed when the last replay launched is done
	closed  bool
}

var errExecClosed = backend.ClosedError("cpu backend: graph exec closed")

// replay is one Launch's state: the first error its ops raised.
type replay struct {
	mu  sync.Mutex
	err error
}

func (r *replay) fail(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *replay) take() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.err = nil
	return err
}

// Launch enqueues one replay on bs: lane 0 there, the others on the
// exec's streams, after the previous replay.
func (x *exec) Launch(bs backend.Stream) error { return x.launch(bs, nil, nil) }

var _ backend.TracedExec = (*exec)(nil)

// TracedSpans is the number of trace spans captured in the graph.
func (x *exec) TracedSpans() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.g.nspans
}

// LaunchTraced is Launch with the captured spans timed by bt.
func (x *exec) LaunchTraced(bs backend.Stream, bt backend.TraceTimer, spans []trace.Span) error {
	t, ok := bt.(*traceTimer)
	if !ok {
		return fmt.Errorf("cpu backend: LaunchTraced with a %T", bt)
	}
	return x.launch(bs, t, spans)
}

// launch enqueues one replay, its captured trace marks timed by t for
// spans (or dropped when t is nil).
func (x *exec) launch(bs backend.Stream, t *traceTimer, spans []trace.Span) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: graph launch on a %T", bs)
	}
	if s.isCapturing() {
		return errCapturing
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return errExecClosed
	}
	if t != nil && len(spans) != x.g.nspans {
		return fmt.Errorf("cpu backend: LaunchTraced with %d spans for a graph that captured %d", len(spans), x.g.nspans)
	}
	tr := replayTrace{t: t, spans: spans}
	sigs := make([]*signal, x.g.nsig)
	for i := range sigs {
		sigs[i] = &signal{done: make(chan struct{})}
	}
	r := new(replay)
	done := &signal{done: make(chan struct{})}
	lanes := make([][]op, len(x.g.lanes))
	for li, ops := range x.g.lanes {
		out := make([]op, 0, len(ops)+3)
		if li == 0 && x.last != nil && !x.last.isDone() {
			out = append(out, op{kind: opWait, sig: x.last})
		}
		for _, o := range ops {
			if o.kind == opMark || o.kind == opSpan {
				if o, ok := tr.op(o); ok {
					out = append(out, o)
				}
				continue
			}
			out = append(out, replayOp(o, sigs, r))
		}
		if li == 0 {
			out = append(out, op{kind: opFunc, fn: r.take}, op{kind: opSignal, sig: done})
		}
		lanes[li] = out
	}
	// Lane 0 first: its stream is the only one that may refuse (closed);
	// the exec's own streams never do.
	if err := s.enqueueAll(lanes[0]); err != nil {
		return err
	}
	for li, h := range x.helpers {
		if err := h.enqueueAll(lanes[li+1]); err != nil {
			return err
		}
	}
	x.last = done
	return nil
}

// replayTrace is one replay's trace: the timer (nil: marks dropped), the
// spans, and the fresh mark of each captured span, by its number.
type replayTrace struct {
	t     *traceTimer
	spans []trace.Span
	marks []*mark
}

// op is the replay's op for a captured mark op, if any.
func (rt *replayTrace) op(o op) (op, bool) {
	if rt.t == nil || o.mark.idx < 0 { // no trace, or a mark whose End never came
		return op{}, false
	}
	if rt.marks == nil {
		rt.marks = make([]*mark, len(rt.spans))
	}
	m := rt.marks[o.mark.idx]
	if m == nil {
		m = rt.t.newMark()
		rt.marks[o.mark.idx] = m
	}
	if o.kind == opSpan {
		m.span = rt.spans[o.mark.idx]
	}
	return op{kind: o.kind, mark: m}, true
}

// replayOp is o for one replay: its records and waits on the replay's own
// signals, and its errors kept for the replay's stream.
func replayOp(o op, sigs []*signal, r *replay) op {
	switch o.kind {
	case opSignal, opWait:
		o.sig = sigs[o.sig.idx]
	case opEnd:
		l := o.l
		return op{kind: opFunc, fn: func() error { r.fail(l.takeErr()); return nil }}
	case opFunc:
		fn := o.fn
		return op{kind: opFunc, fn: func() error { r.fail(fn()); return nil }}
	}
	return o
}

// Update replays g from the next Launch when it has the same shape.
func (x *exec) Update(bg backend.Graph) (bool, error) {
	g, ok := bg.(*graph)
	if !ok || g.lanes == nil {
		return false, fmt.Errorf("cpu backend: Update with a %T", bg)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false, errExecClosed
	}
	if !x.g.sameShape(g) {
		return false, nil
	}
	old := x.g
	x.g = g.take()
	// Replays already enqueued use the old launches: release them once
	// those replays are done.
	if last := x.last; last != nil && !last.isDone() {
		go func() { <-last.done; old.release() }()
	} else {
		old.release()
	}
	return true, nil
}

// Close waits for the replays enqueued, then releases the graph and the
// exec's streams.
func (x *exec) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	if x.last != nil {
		<-x.last.done
	}
	var errs []error
	for _, h := range x.helpers {
		errs = append(errs, h.Close())
	}
	x.g.release()
	return errors.Join(errs...)
}
