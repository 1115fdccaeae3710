package qd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Capture bookkeeping (graph.go has the API).
//
// A capture begins on one stream, its origin, and follows the backend's
// rules (backend.Capturer, which are CUDA's): an event recorded on a
// capturing stream marks a point of the capture, and a stream that waits
// for such a point joins the capture. Package qd keeps its own record of
// who is capturing, so that it refuses, before any driver call and with
// an error in the user's terms, what a capture cannot hold: a host wait
// for a capturing stream, a wait across the capture's boundary, a Go
// slice argument. The capture also counts the work enqueued on each of its
// streams and which of it each stream is ordered after (a vector clock),
// so that a stream not joined back into the origin is named at the end;
// it collects the arrays its work uses, which the graph keeps; and it
// keeps the pooled streams its stream-parallel launches borrowed until it
// ends, since a pooled stream handed to other work while still in the
// capture would capture that work too.
//
// A stream's capture state changes (it begins capturing, or joins, or
// leaves) only with its gate held exclusively. Waits that record an event
// on a stream (a host read, a Close) hold the gate shared while they
// record: they either record before the stream captures, or see that it
// does and wait for pre instead, an event recorded on the stream right
// before it joined, which marks all its work outside the capture. This is
// what lets other goroutines read and free arrays while a capture runs.

// capture is one Capture (or Update) in progress.
type capture struct {
	p      *Program
	origin *streamCore
	bc     backend.Capturer

	mu       sync.Mutex
	members  map[*streamCore]*member
	order    []*streamCore // members in the order they joined
	pooled   []*streamCore // pooled streams borrowed, returned at the end
	held     []heldArray   // arrays the work uses, which the graph keeps
	kernels  []string      // the kernels launched, each once, in order
	trackers map[*tracker]bool
	owned    []ownedArray // arrays allocated inside the capture
	spans    graphSpans   // traced tasks (trace.go)
	traceMu  sync.Mutex   // orders a traced task's End with its note in spans
	refused  error        // the first refusal: the capture fails with it
	ending   bool         // end has begun: no stream joins any more
	ended    bool
	retired  []backend.Event // pooled events recorded in the capture (putEvent)
	released bool            // release has run: events go straight back
	// preRefs counts the pre events lent out by retainPre: release leaves
	// them to the last unretainPre.
	preRefs int
}

// member is a stream of a capture.
type member struct {
	ops  uint64                 // work enqueued on the stream in the capture
	seen map[*streamCore]uint64 // how much of each member's work it is ordered after
	pre  backend.Event          // recorded on it right before it joined
}

// graphParts is what a capture gives its graph besides the backend's
// graph: the arrays to keep and the name of its replays' trace spans.
type graphParts struct {
	held  []heldArray
	name  string
	spans graphSpans
}

// graphSpans are the trace spans a traced capture recorded (trace.go):
// each task's span as the trace had it, with its stream, in the order the
// backend numbered them; launches counts the capture's launches, which
// numbered them from 1.
type graphSpans struct {
	spans    []capturedSpan
	launches uint64
}

// capturedSpan is one task's span in a capture: the stream it ran on
// (whose lane a replay's trace names afresh) and the span, its Launch the
// launch's number in the capture.
type capturedSpan struct {
	s    *streamCore
	span trace.Span
}

// heldArray is an array a graph uses: its core (pinned by every replay),
// the user's handle (which keeps the array from its leak cleanup) and
// what it is, for messages.
type heldArray struct {
	core   pinned
	handle any
	what   string
}

// ownedArray is an array allocated by [NewNdarrayOn] inside a capture.
type ownedArray struct {
	c     *ndCore
	shape []int
}

// capMark is the capture state an event records: the capture and the
// recording stream's clock, or nil for a point outside every capture.
type capMark struct {
	c     *capture
	clock map[*streamCore]uint64
}

// capture is the mark's capture; nil for a nil mark.
func (m *capMark) capture() *capture {
	if m == nil {
		return nil
	}
	return m.c
}

// describe names a stream for messages.
func (sc *streamCore) describe() string {
	switch sc.kind {
	case streamDefault:
		return "the default stream"
	case streamPooled:
		return fmt.Sprintf("pooled stream %#x", sc.b.Handle())
	}
	return fmt.Sprintf("stream %#x", sc.b.Handle())
}

// capturing returns the capture s records into, or nil. It costs one
// atomic load when no capture is in progress in the Program.
func (sc *streamCore) capturing() *capture {
	if sc.p.ncap.Load() == 0 {
		return nil
	}
	return sc.cap.Load()
}

// refuse makes err the capture's failure (its first one) and returns it.
func (cp *capture) refuse(call, why string) error {
	err := &captureError{call: call, origin: cp.origin.describe(), why: why}
	cp.fail(err)
	return err
}

// refuseErr is refuse for what the backend refused (err, matching
// [ErrUnsupported]) in the capture; other errors pass through.
func (cp *capture) refuseErr(call string, err error) error {
	if cp == nil || err == nil || !errors.Is(err, ErrUnsupported) {
		return err
	}
	e := &captureError{call: call, origin: cp.origin.describe(), why: err.Error(), err: err}
	cp.fail(e)
	return e
}

// fail records err as the capture's failure if it has none.
func (cp *capture) fail(err error) {
	if err == nil {
		return
	}
	cp.mu.Lock()
	if cp.refused == nil {
		cp.refused = err
	}
	cp.mu.Unlock()
}

// failed is fail for an error of work enqueued on a capturing stream (the
// driver may have invalidated the capture), passing err through.
func failed(c *capture, err error) error {
	if c != nil && err != nil {
		c.fail(err)
	}
	return err
}

// isEnded reports whether the capture is over.
func (cp *capture) isEnded() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.ended
}

// mark is the capture state of an event recorded on s now.
func (sc *streamCore) mark() *capMark {
	c := sc.capturing()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[sc]
	if m == nil {
		return &capMark{c: c}
	}
	clock := maps.Clone(m.seen)
	clock[sc] = m.ops
	return &capMark{c: c, clock: clock}
}

// did counts work just enqueued on s, if s is capturing.
func (sc *streamCore) did() {
	if c := sc.capturing(); c != nil {
		c.mu.Lock()
		if m := c.members[sc]; m != nil {
			m.ops++
			m.seen[sc] = m.ops
		}
		c.mu.Unlock()
	}
}

// join adds s to the capture, ordered after clock, and enqueues s's wait
// for e (the backend's wait that makes its stream join the capture) with s's gate held
// exclusively, so that qd's record of s and the backend's stream change
// together. It records s's pre event first, while s is outside the capture.
func (cp *capture) join(s *streamCore, clock map[*streamCore]uint64, call string, e backend.Event) error {
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.closed.Load() {
		return closedErr("stream")
	}
	if cur := s.cap.Load(); cur != nil { // another goroutine was first
		if cur == cp {
			cp.merge(s, clock)
			return failed(cp, s.b.WaitEvent(e))
		}
		return cp.refuse(call, fmt.Sprintf("%s is capturing on %s", s.describe(), cur.origin.describe()))
	}
	pre, err := cp.p.evpool.Get()
	if err != nil {
		return failed(cp, err)
	}
	if err := pre.Record(s.b); err != nil {
		cp.p.evpool.Put(pre)
		return failed(cp, err)
	}
	cp.mu.Lock()
	if cp.ended || cp.ending {
		cp.mu.Unlock()
		cp.p.evpool.Put(pre)
		return fmt.Errorf("qd: %w: %s: the capture on %s has ended", ErrCapturing, call, cp.origin.describe())
	}
	seen := maps.Clone(clock)
	if seen == nil {
		seen = map[*streamCore]uint64{}
	}
	cp.members[s] = &member{seen: seen, pre: pre}
	cp.order = append(cp.order, s)
	cp.mu.Unlock()
	s.cap.Store(cp)
	return failed(cp, s.b.WaitEvent(e))
}

// merge orders member s after clock.
func (cp *capture) merge(s *streamCore, clock map[*streamCore]uint64) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	m := cp.members[s]
	if m == nil {
		return
	}
	for k, v := range clock {
		m.seen[k] = max(m.seen[k], v)
	}
}

// unjoinedLocked lists the members whose work the origin is not ordered
// after; the caller holds mu.
func (cp *capture) unjoinedLocked() []string {
	seen := cp.members[cp.origin].seen
	var out []string
	for _, s := range cp.order {
		if m := cp.members[s]; s != cp.origin && seen[s] < m.ops {
			out = append(out, s.describe())
		}
	}
	return out
}

// keepPooled keeps a pooled stream until the capture ends.
func (cp *capture) keepPooled(s *streamCore) {
	cp.mu.Lock()
	cp.pooled = append(cp.pooled, s)
	cp.mu.Unlock()
}

// uses records that the capture's work uses an array: core, the user's
// handle, and what it is.
func (cp *capture) uses(core pinned, handle any, what string) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.trackers[core.track()] = true
	if core.owner() == cp {
		return // memory of the graph itself
	}
	for _, h := range cp.held {
		if h.core == core {
			return
		}
	}
	cp.held = append(cp.held, heldArray{core: core, handle: handle, what: what})
}

// launched records that the capture's work launches kernel name.
func (cp *capture) launched(name string) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if !slices.Contains(cp.kernels, name) {
		cp.kernels = append(cp.kernels, name)
	}
}

// spanName is the name of a graph's replay spans: "graph: " and the
// kernels it launches (the first three, then how many more).
func spanName(kernels []string) string {
	switch {
	case len(kernels) == 0:
		return "graph"
	case len(kernels) <= 3:
		return "graph: " + strings.Join(kernels, ", ")
	}
	return fmt.Sprintf("graph: %s and %d more", strings.Join(kernels[:3], ", "), len(kernels)-3)
}

// usedTracker reports whether the capture's work uses the memory of t.
func (cp *capture) usedTracker(t *tracker) bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.trackers[t]
}

// own records an array allocated inside the capture.
func (cp *capture) own(a *ndCore, shape []int) {
	cp.mu.Lock()
	cp.owned = append(cp.owned, ownedArray{c: a, shape: slices.Clone(shape)})
	cp.trackers[&a.st.tracker] = true
	cp.mu.Unlock()
}

// preOf is member s's pre event; the caller holds s's gate.
func (cp *capture) preOf(s *streamCore) backend.Event {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if m := cp.members[s]; m != nil {
		return m.pre
	}
	return nil
}

// retainPre lends member s's pre event (its work from before it joined)
// to a caller that waits for it after letting go of s's gate: the event
// stays out of the pool, where another capture could record it, until
// unretainPre. The caller holds s's gate; s is a member.
func (cp *capture) retainPre(s *streamCore) backend.Event {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.preRefs++
	return cp.members[s].pre
}

// unretainPre ends a retainPre; the last one after release gives the pre
// events back.
func (cp *capture) unretainPre() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.preRefs--
	if cp.preRefs == 0 && cp.released {
		cp.putPresLocked()
	}
}

// putPresLocked gives the members' pre events back to the pool; the
// caller holds mu.
func (cp *capture) putPresLocked() {
	for _, s := range cp.order {
		if m := cp.members[s]; m.pre != nil {
			cp.p.evpool.Put(m.pre)
			m.pre = nil
		}
	}
}

// beginCapture starts a capture on s.
func (p *Program) beginCapture(s *streamCore, call string) (*capture, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	bc, ok := p.dev.(backend.Capturer)
	if !ok {
		return nil, fmt.Errorf("qd: %s: graphs on the %s backend: %w", call, p.arch, ErrUnsupported)
	}
	if !s.hold() {
		return nil, fmt.Errorf("qd: %s: %w", call, closedErr("stream"))
	}
	defer s.inflight.leave()
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.closed.Load() {
		return nil, fmt.Errorf("qd: %s: %w", call, closedErr("stream"))
	}
	if cur := s.cap.Load(); cur != nil {
		return nil, cur.refuse(call, s.describe()+" is already capturing")
	}
	pre, err := p.evpool.Get()
	if err != nil {
		return nil, err
	}
	if err := pre.Record(s.b); err != nil {
		p.evpool.Put(pre)
		return nil, err
	}
	if err := bc.BeginCapture(s.b); err != nil {
		p.evpool.Put(pre)
		return nil, fmt.Errorf("qd: %s: %w", call, err)
	}
	c := &capture{p: p, origin: s, bc: bc, trackers: map[*tracker]bool{},
		members: map[*streamCore]*member{s: {seen: map[*streamCore]uint64{}, pre: pre}}, order: []*streamCore{s}}
	p.mu.Lock()
	p.captures[c] = struct{}{}
	p.mu.Unlock()
	p.ncap.Add(1)
	s.cap.Store(c)
	return c, nil
}

// errPanicked ends a capture whose function panicked.
var errPanicked = errors.New("the capture function panicked")

// run runs fn as the capture's body and ends the capture: the graph and
// the arrays it holds, or the capture's failure. A panic in fn ends the
// capture and goes on.
func (cp *capture) run(call string, fn func() error) (bg backend.Graph, parts graphParts, err error) {
	ended := false
	defer func() {
		if !ended {
			if g, _, _ := cp.end(call, errPanicked); g != nil {
				g.Close()
			}
		}
	}()
	ferr := fn()
	ended = true
	return cp.end(call, ferr)
}

// end ends the capture: the backend's capture first (whatever else went
// wrong), then the capture's streams leave it. It fails with ferr (fn's
// error), the capture's first refusal, the streams not joined back, and
// the arrays allocated in it and not closed in it.
//
// The backend ends the capture with the gate of every stream of the
// capture held exclusively (gate.go): an operation enqueueing on one of
// them finishes first, inside the capture, and one that comes later finds
// the stream out of it. No stream joins once end has begun.
func (cp *capture) end(call string, ferr error) (backend.Graph, graphParts, error) {
	p := cp.p
	if err := p.enter(); err != nil {
		return nil, graphParts{}, err // Program.Close ended the capture
	}
	defer p.exit()
	cp.mu.Lock()
	if cp.ended || cp.ending {
		cp.mu.Unlock()
		return nil, graphParts{}, fmt.Errorf("qd: %s: the capture has already ended", call)
	}
	cp.ending = true
	members := slices.Clone(cp.order)
	cp.mu.Unlock()
	for _, s := range members {
		s.gate.Lock()
	}
	cp.mu.Lock()
	cp.ended = true
	var errs []error
	if ferr != nil {
		errs = append(errs, ferr)
	}
	if cp.refused != nil && (ferr == nil || !errors.Is(ferr, cp.refused)) {
		errs = append(errs, cp.refused)
	}
	if names := cp.unjoinedLocked(); len(names) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s joined the capture on %s (by waiting for an event recorded in it) and its work was not joined back: make %s wait for it (WaitStream or WaitEvent) before the function returns",
			ErrInvalidArgument, strings.Join(names, " and "), cp.origin.describe(), cp.origin.describe()))
	}
	for _, o := range cp.owned {
		if !o.c.isClosed() {
			errs = append(errs, fmt.Errorf("%w: an Ndarray of shape %v made by NewNdarrayOn inside the capture was not closed in it: memory allocated in a graph exists only while the graph runs, so close it before the function returns",
				ErrInvalidArgument, o.shape))
		}
	}
	parts := graphParts{held: cp.held, name: spanName(cp.kernels), spans: cp.spans}
	cp.mu.Unlock()
	bg, berr := cp.bc.EndCapture(cp.origin.b)
	for _, s := range members {
		s.cap.CompareAndSwap(cp, nil)
		s.gate.Unlock()
	}
	cp.release()
	if berr != nil && len(errs) == 0 {
		errs = append(errs, berr)
	}
	if len(errs) > 0 {
		if bg != nil {
			bg.Close()
		}
		return nil, graphParts{}, fmt.Errorf("qd: %s on %s: %w", call, cp.origin.describe(), errors.Join(errs...))
	}
	return bg, parts, nil
}

// abort ends a capture at [Program.Close]; the caller holds the Program
// exclusively.
func (cp *capture) abort() error {
	cp.mu.Lock()
	if cp.ended {
		cp.mu.Unlock()
		return nil
	}
	cp.ending, cp.ended = true, true
	// The driver refuses to end a capture whose forks were not joined
	// back, or that a refused call invalidated: the failure the user's
	// function would have met at its end. Close discards the capture and
	// its graph either way, so that failure is no failure of Close.
	expected := len(cp.unjoinedLocked()) > 0 || cp.refused != nil
	cp.mu.Unlock()
	bg, err := cp.bc.EndCapture(cp.origin.b)
	if bg != nil {
		bg.Close()
	}
	cp.release()
	if err != nil && !expected && !errors.Is(err, backend.ErrDeviceLost) {
		return err
	}
	return nil
}

// release takes the capture's streams out of it and gives back what it
// borrowed. Arrays allocated in the capture and still open are closed:
// their memory belongs to the graph and is freed with it.
func (cp *capture) release() {
	p := cp.p
	for _, s := range cp.order {
		s.gate.Lock()
		s.cap.CompareAndSwap(cp, nil)
		s.gate.Unlock()
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.preRefs == 0 {
		cp.putPresLocked()
	}
	for _, e := range cp.retired {
		p.evpool.Put(e)
	}
	cp.retired, cp.released = nil, true
	for _, s := range cp.pooled {
		p.pool.Put(s)
	}
	cp.pooled = nil
	for _, o := range cp.owned {
		if o.c.closed.CompareAndSwap(false, true) {
			o.c.st.closed.Store(true)
			p.mu.Lock()
			delete(p.arrays, o.c)
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	delete(p.captures, cp)
	p.mu.Unlock()
	p.ncap.Add(-1)
}

// refuseIfCapturing refuses call, which would wait for every stream, while
// any capture of the Program is in progress; each of them fails.
func (p *Program) refuseIfCapturing(call string) error {
	if p.ncap.Load() == 0 {
		return nil
	}
	p.mu.Lock()
	caps := slices.Collect(maps.Keys(p.captures))
	p.mu.Unlock()
	var errs []error
	for _, c := range caps {
		errs = append(errs, c.refuse(call, "it would wait for the capturing streams, whose work runs only when the graph is launched"))
	}
	return errors.Join(errs...)
}

// abortCaptures ends every capture in progress ([Program.Close]).
func (p *Program) abortCaptures() error {
	p.mu.Lock()
	caps := slices.Collect(maps.Keys(p.captures))
	p.mu.Unlock()
	var errs []error
	for _, c := range caps {
		errs = append(errs, c.abort())
	}
	return errors.Join(errs...)
}

// putEvent gives pooled event e back to p's pool once it is safe to
// record it again: an event recorded on a stream of capture c is a point
// of that capture's graph in the driver, so it waits in c until the
// capture ends. On the H100, an event recorded in one goroutine's capture
// and recorded again, outside it, by another goroutine while the capture
// went on crashed the CUDA driver (TestGraphConcurrentCaptures).
func (p *Program) putEvent(e backend.Event, c *capture) {
	if c != nil {
		c.mu.Lock()
		if !c.released {
			c.retired = append(c.retired, e)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	p.evpool.Put(e)
}

// tracedLaunch numbers a launch traced in the capture.
func (cp *capture) tracedLaunch() uint64 {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.spans.launches++
	return cp.spans.launches
}

// traced keeps the span of a task traced on s in the capture, in the
// order the backend numbers them (its End has returned).
func (cp *capture) traced(s *streamCore, span trace.Span) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.spans.spans = append(cp.spans.spans, capturedSpan{s: s, span: span})
}
