package cpu

import (
	"fmt"
	"sync"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

var _ backend.Tracing = (*Device)(nil)

// traceTimer times tasks where they really run: Begin and End enqueue
// marker ops, and the stream's drain goroutine reads the host's monotonic
// clock when it reaches each one, right before and right after the work
// between them. Tracing on costs two extra queue ops per task (about
// 0.1–0.2 µs on the launching goroutine) and one Recorder.Span per task on
// the stream's goroutine.
type traceTimer struct {
	rec   *trace.Recorder
	marks sync.Pool // *mark
}

// mark is one Begin/End pair: start is written by the start op, span by
// End before it enqueues the end op, and both are read by the end op; the
// queue's mutex orders the three.
type mark struct {
	t     *traceTimer
	start time.Duration
	span  trace.Span
	idx   int // its span's number in a capture (capture.go)
}

// NewTraceTimer starts timing spans for rec on this device's streams.
func (d *Device) NewTraceTimer(rec *trace.Recorder) (backend.TraceTimer, error) {
	rec.SetMeta("clock", "host monotonic clock, read on the stream's goroutine")
	return &traceTimer{rec: rec}, nil
}

func (t *traceTimer) Begin(bs backend.Stream) (backend.TraceMark, error) {
	s, ok := bs.(*stream)
	if !ok {
		return nil, fmt.Errorf("cpu backend: trace mark on a %T", bs)
	}
	var m *mark
	if s.isCapturing() {
		m = &mark{t: t, idx: -1} // kept by the graph (capture.go), never back in the pool; numbered at End
	} else {
		m = t.newMark()
	}
	if err := s.enqueue(op{kind: opMark, mark: m}); err != nil {
		t.marks.Put(m)
		return nil, err
	}
	return m, nil
}

func (t *traceTimer) End(bs backend.Stream, tm backend.TraceMark, span trace.Span) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: trace mark on a %T", bs)
	}
	m, ok := tm.(*mark)
	if !ok || m.t != t {
		return fmt.Errorf("cpu backend: trace End with a foreign mark %T", tm)
	}
	m.span = span
	return s.enqueue(op{kind: opSpan, mark: m})
}

// newMark is a mark from the pool.
func (t *traceTimer) newMark() *mark {
	m, _ := t.marks.Get().(*mark)
	if m == nil {
		m = &mark{t: t}
	}
	return m
}

var _ backend.CaptureTracer = (*traceTimer)(nil)

// TracesCaptures is true: a capture records trace marks (capture.go).
func (t *traceTimer) TracesCaptures() bool { return true }

// finish runs on the stream's goroutine at the end mark.
func (m *mark) finish() {
	t := m.t
	m.span.Start, m.span.End = m.start, t.rec.Now()
	t.rec.Span(m.span)
	m.span = trace.Span{}
	t.marks.Put(m)
}

// Flush has nothing to resolve: spans are recorded as their end marks run,
// and package qd waits for the streams before it calls Flush.
func (t *traceTimer) Flush() error { return nil }

func (t *traceTimer) Close() error { return nil }
