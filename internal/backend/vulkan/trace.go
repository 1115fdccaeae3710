package vulkan

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Tracing (backend.Tracing). A mark is a timestamp query written on the
// mark's stream after the work enqueued before it (vkCmdWriteTimestamp at
// the bottom of the pipe, one submit); a span's times are its two
// timestamps' ticks after the epoch's, a timestamp written on an idle
// stream and waited for when the timer starts, at the recorder's time
// epochAt. Queries come from pools of markPool, handed out and back as
// spans resolve. Spans are resolved at Flush, or by End, for those whose
// stream has passed them, once resolveAt are pending.
//
// In a capture a mark is a node of the capture's graph (captureMark):
// a replay with no trace on records nothing for it, and a traced replay
// (LaunchTraced) records the graph again into a command buffer of its
// own with a query pool of its own, whose timestamps the timer reads as
// it reads the others'. The marks are ordered as the graph's commands
// are, level by level: a mark waits for the whole level before it, not
// only for its task, so the spans of a graph's parallel branches are
// longer than their tasks where another branch's level runs longer.

var (
	_ backend.Tracing       = (*Device)(nil)
	_ backend.CaptureTracer = (*traceTimer)(nil)
	_ backend.TracedExec    = (*graphExec)(nil)
)

const (
	markPool  = 256  // queries of a pool of marks
	resolveAt = 4096 // pending spans at which End resolves the done ones
)

type traceTimer struct {
	d          *Device
	rec        *trace.Recorder
	epochTicks uint64
	epochAt    time.Duration

	mu      sync.Mutex
	pools   []uint64   // every pool of marks, for Close
	free    []query    // queries of those pools not in use
	pending []traceSet // spans not yet resolved
	closed  bool
}

// query is one timestamp query.
type query struct {
	pool uint64
	q    int
}

// traceSet is spans whose queries are written once stream point (sem,
// value) is reached; own is a query pool the set owns (a traced replay's),
// destroyed once it is read; 0 for queries of the timer's pools.
type traceSet struct {
	sem, value uint64
	spans      []tracedSpan
	own        uint64
}

type tracedSpan struct {
	start, end query
	span       trace.Span
}

// NewTraceTimer starts timing for rec: it writes the epoch's timestamp on
// a stream of its own and waits for it.
func (d *Device) NewTraceTimer(rec *trace.Recorder) (backend.TraceTimer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if d.lim.timestampBits == 0 {
		return nil, fmt.Errorf("vulkan: %w: tracing: %s has no timestamps on its compute queues", backend.ErrUnsupported, d.phys.Name)
	}
	t := &traceTimer{d: d, rec: rec}
	q, err := t.get()
	if err != nil {
		return nil, err
	}
	s, err := d.newStream()
	if err != nil {
		t.Close()
		return nil, err
	}
	v, err := s.submit(func(cb uintptr) { d.vd.CmdTimestamp(cb, q.pool, q.q) })
	if err == nil {
		err = d.waitValue(s.sem, v)
	}
	t.epochAt = rec.Now()
	err = errors.Join(err, s.Close())
	if err == nil {
		var ok bool
		t.epochTicks, ok, err = d.vd.Timestamp(q.pool, q.q)
		if err == nil && !ok {
			err = errors.New("vulkan: tracing: the epoch's timestamp is not available although its submit is done")
		}
	}
	if err != nil {
		t.Close()
		return nil, d.wrap(err)
	}
	t.put(q)
	rec.SetMeta("clock", "vulkan timestamps, relative to an epoch timestamp")
	return t, nil
}

// get hands out a query of the timer's pools.
func (t *traceTimer) get() (query, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return query{}, errors.New("vulkan: trace timer closed")
	}
	if len(t.free) == 0 {
		p, err := t.d.vd.CreateTimestampPool(markPool)
		if err != nil {
			return query{}, t.d.wrap(err)
		}
		t.pools = append(t.pools, p)
		for i := markPool - 1; i >= 0; i-- {
			t.free = append(t.free, query{p, i})
		}
	}
	q := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	return q, nil
}

func (t *traceTimer) put(qs ...query) {
	t.mu.Lock()
	t.free = append(t.free, qs...)
	t.mu.Unlock()
}

// TracesCaptures is true: marks on a capturing stream become nodes of the
// capture (captureMark).
func (t *traceTimer) TracesCaptures() bool { return true }

// captureMark is a mark Begin returned on a capturing stream: the index of
// its node among the capture's marks.
type captureMark struct {
	c *capture
	i int
}

// Begin marks the start of the work enqueued next on bs.
func (t *traceTimer) Begin(bs backend.Stream) (backend.TraceMark, error) {
	s, err := t.d.stream(bs)
	if err != nil {
		return nil, err
	}
	if c, i, ok := s.markCapture(); ok {
		return captureMark{c, i}, nil
	}
	q, err := t.get()
	if err != nil {
		return nil, err
	}
	if _, err := s.submit(func(cb uintptr) { t.d.vd.CmdTimestamp(cb, q.pool, q.q) }); err != nil {
		t.put(q)
		return nil, err
	}
	return q, nil
}

// End marks the end of the work enqueued on bs since Begin returned m and
// pends span.
func (t *traceTimer) End(bs backend.Stream, m backend.TraceMark, span trace.Span) error {
	s, err := t.d.stream(bs)
	if err != nil {
		return err
	}
	if cm, ok := m.(captureMark); ok {
		return s.endCaptureMark(cm)
	}
	start, ok := m.(query)
	if !ok {
		return fmt.Errorf("vulkan: trace End with a foreign mark %T", m)
	}
	// On a failure start stays out of the free list: Begin's submit may
	// still write it (the timer's pools go at Close).
	end, err := t.get()
	if err != nil {
		return err
	}
	v, err := s.submit(func(cb uintptr) { t.d.vd.CmdTimestamp(cb, end.pool, end.q) })
	if err != nil {
		t.put(end)
		return err
	}
	return t.pend(traceSet{sem: s.sem, value: v, spans: []tracedSpan{{start, end, span}}})
}

// pend adds a set, resolving the done ones once resolveAt spans are
// pending.
func (t *traceTimer) pend(set traceSet) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		// Its submit still writes the queries: release them after it.
		if t.d.lost.Load() == nil {
			_ = t.d.waitValue(set.sem, set.value)
		}
		t.releaseLocked(set)
		return errors.New("vulkan: trace timer closed")
	}
	t.pending = append(t.pending, set)
	if len(t.pending) >= resolveAt {
		return t.resolveLocked(false)
	}
	return nil
}

// resolveLocked records the spans of the pending sets whose point is
// reached (every set, waiting for it, when wait is set).
func (t *traceTimer) resolveLocked(wait bool) error {
	var errs []error
	kept := t.pending[:0]
	for _, set := range t.pending {
		if wait {
			if err := t.d.waitValue(set.sem, set.value); err != nil {
				errs = append(errs, err)
				t.releaseLocked(set)
				continue
			}
		} else if v, err := t.d.vd.SemaphoreValue(set.sem); err != nil || v < set.value {
			if err != nil {
				errs = append(errs, t.d.wrap(err))
			}
			kept = append(kept, set)
			continue
		}
		for _, ts := range set.spans {
			a, err1 := t.at(ts.start)
			b, err2 := t.at(ts.end)
			if err1 != nil || err2 != nil {
				errs = append(errs, err1, err2)
				continue
			}
			ts.span.Start, ts.span.End = a, b
			t.rec.Span(ts.span)
		}
		t.releaseLocked(set)
	}
	clear(t.pending[len(kept):])
	t.pending = kept
	return errors.Join(errs...)
}

// at is query q's time on the recorder's clock.
func (t *traceTimer) at(q query) (time.Duration, error) {
	ticks, ok, err := t.d.vd.Timestamp(q.pool, q.q)
	if err != nil {
		return 0, t.d.wrap(err)
	}
	if !ok {
		return 0, errors.New("vulkan: tracing: a timestamp is not available although its point is reached")
	}
	ns := float64(int64(ticks-t.epochTicks)) * t.d.lim.timestampPeriod
	return t.epochAt + time.Duration(ns), nil
}

// releaseLocked gives a resolved set's queries back.
func (t *traceTimer) releaseLocked(set traceSet) {
	if set.own != 0 {
		t.d.vd.DestroyQueryPool(set.own)
		return
	}
	for _, ts := range set.spans {
		t.free = append(t.free, ts.start, ts.end)
	}
}

// Flush records every pending span, waiting for its work.
func (t *traceTimer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resolveLocked(true)
}

// Close waits for the work of the pending spans (a submit still writes
// their queries), then destroys the timer's query pools; spans not
// flushed are lost.
func (t *traceTimer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var errs []error
	for _, set := range t.pending {
		if t.d.lost.Load() == nil {
			if err := t.d.waitValue(set.sem, set.value); err != nil {
				errs = append(errs, err)
			}
		}
		t.releaseLocked(set)
	}
	for _, p := range t.pools {
		t.d.vd.DestroyQueryPool(p)
	}
	t.pools, t.free, t.pending = nil, nil, nil
	return errors.Join(errs...)
}

// markCapture adds a mark node to the capture s is capturing, if any, and
// gives its index among the capture's marks.
func (s *Stream) markCapture() (*capture, int, bool) {
	s.mu.Lock()
	c := s.capture
	s.mu.Unlock()
	if c == nil {
		return nil, 0, false
	}
	return c, c.addMark(s), true
}

// endCaptureMark adds the end mark of cm's span to the capture and the
// span to the capture's spans, in the order of their Ends.
func (s *Stream) endCaptureMark(cm captureMark) error {
	s.mu.Lock()
	c := s.capture
	s.mu.Unlock()
	if c != cm.c {
		return fmt.Errorf("vulkan: %w: a trace span begun in one capture ends outside it", errCaptureCross)
	}
	end := c.addMark(s)
	c.mu.Lock()
	c.spans = append(c.spans, [2]int{cm.i, end})
	c.mu.Unlock()
	return nil
}

// addMark appends a mark node to s's lane and numbers it.
func (c *capture) addMark(s *Stream) int {
	c.mu.Lock()
	i := c.marks
	c.marks++
	c.mu.Unlock()
	c.addNode(s, &node{record: func(uintptr) {}, mark: i + 1})
	return i
}

// TracedSpans is the number of spans captured in the exec's graph.
func (x *graphExec) TracedSpans() int { return len(x.g.spans) }

// LaunchTraced is Launch with this replay's marks written: the graph
// recorded again, into a command buffer of the replay's own with a query
// pool of its own, which the timer reads and destroys once the replay is
// done.
func (x *graphExec) LaunchTraced(bs backend.Stream, bt backend.TraceTimer, spans []trace.Span) error {
	g := x.g
	if len(g.spans) == 0 {
		return x.Launch(bs)
	}
	t, ok := bt.(*traceTimer)
	if !ok || t.d != g.d {
		return fmt.Errorf("vulkan: LaunchTraced with a foreign trace timer %T", bt)
	}
	if len(spans) != len(g.spans) {
		return fmt.Errorf("vulkan: LaunchTraced with %d spans for a graph of %d", len(spans), len(g.spans))
	}
	s, err := g.d.stream(bs)
	if err != nil {
		return err
	}
	d := g.d
	pool, err := d.vd.CreateTimestampPool(g.marks)
	if err != nil {
		return d.wrap(err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		d.vd.DestroyQueryPool(pool)
		return backend.ClosedError("vulkan: Launch of a closed graph exec")
	}
	cb, err := d.vd.AllocateCommandBuffer(x.pool)
	if err == nil {
		err = g.record(cb, pool)
	}
	if err != nil {
		if cb != 0 {
			d.vd.FreeCommandBuffer(x.pool, cb)
		}
		d.vd.DestroyQueryPool(pool)
		return d.wrap(err)
	}
	v, err := x.launchLocked(s, cb)
	if err != nil {
		d.vd.FreeCommandBuffer(x.pool, cb)
		d.vd.DestroyQueryPool(pool)
		return err
	}
	x.traced = append(x.traced, tracedReplay{cb, s.sem, v})
	set := traceSet{sem: s.sem, value: v, own: pool, spans: make([]tracedSpan, len(spans))}
	for i, sp := range g.spans {
		set.spans[i] = tracedSpan{query{pool, sp[0]}, query{pool, sp[1]}, spans[i]}
	}
	return t.pend(set)
}
