package qd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Tracing.
//
// While a trace is on, every task a launch enqueues (each serial or
// parallel task of the kernel, on its stream-parallel group's stream) and
// every copy of a slice argument becomes one span of the trace: its stream,
// the kernel's name, the launch's number, the task's index and group, and
// when it started and ended on the device. StopTrace writes the trace as
// Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open, and which `qd trace` renders as an SVG timeline.
// Each stream is a lane: "default", "stream N" for the streams of NewStream
// and WrapStream, "pool N" for the pooled streams of stream-parallel
// launches, numbered in the order the trace first sees them. Tasks
// launched inside a graph capture are traced by each replay of the graph
// (Graph.LaunchOn), where the backend can.
//
// Times are taken where the work runs. On the CPU the stream's own
// goroutine reads the host's monotonic clock right before and after each
// task. On CUDA a pair of timing events is recorded around each task on its
// stream and resolved when the trace is written, against an epoch event
// recorded at StartTrace; GPU times are therefore exact relative to each
// other and aligned with the host's clock to within a few microseconds.
//
// Cost. With tracing off, a launch pays one atomic load (Program.tracer);
// BenchmarkLaunchTrace/off against BenchmarkLaunchCPU shows it is within
// noise. With tracing on, each task costs two extra stream ops on the CPU
// (about 0.1–0.3 µs) and two cuEventRecord calls on CUDA (about 2–4 µs of
// host time, and timing events make the GPU write timestamps), plus one
// span of memory (about 100 bytes) until the trace is written. A trace
// keeps at most trace.DefaultMaxSpans spans; later ones are counted as
// dropped (the "dropped" key of the file's otherData).

// WithTrace starts a trace at Init, as if StartTrace were called at once.
func WithTrace() InitOption { return func(c *initConfig) { c.trace = true } }

// tracer is one trace in progress.
type tracer struct {
	rec      *trace.Recorder
	timer    backend.TraceTimer
	launches atomic.Uint64 // launch numbers, from 1
	// users counts launches holding the tracer; a stopped trace is written
	// (or discarded) once they are done with it.
	users busy

	mu    sync.Mutex
	lanes map[*streamCore]lane
	count [4]int // lanes named so far, by streamKind
}

// lane is a stream's track in the trace.
type lane struct {
	id   uint64
	name string
}

// StartTrace starts recording a trace of the Program's launches, replacing
// (and discarding) a trace already in progress. Work enqueued before it is
// not traced.
func (p *Program) StartTrace() error {
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	tr, err := p.newTracer()
	if err != nil {
		return err
	}
	if old := p.tracer.Swap(tr); old != nil {
		// Launches may still hold old: close it once they are done, before
		// the device goes (Close waits for retired).
		p.retired.Add(1)
		go func() {
			defer p.retired.Done()
			old.drain()
			old.timer.Close()
		}()
	}
	return nil
}

// acquire returns the trace in progress, held for one launch (release it
// with done), or nil. Swap-then-drain in StopTrace and load-hold-recheck
// here pair up: a launch either sees the trace replaced, or is counted
// before StopTrace waits.
func (p *Program) acquireTracer() *tracer {
	tr := p.tracer.Load()
	if tr == nil {
		return nil
	}
	tr.users.enter()
	if p.tracer.Load() != tr {
		tr.users.leave()
		return nil
	}
	return tr
}

func (tr *tracer) done() { tr.users.leave() }

// drain waits until no launch holds tr. Unlike taking the Program's
// lifetime lock, it never makes other launches wait.
func (tr *tracer) drain() { tr.users.wait() }

func (p *Program) newTracer() (*tracer, error) {
	tg, ok := p.dev.(backend.Tracing)
	if !ok {
		return nil, fmt.Errorf("qd: tracing on the %s backend: %w", p.arch, ErrUnsupported)
	}
	rec := trace.NewRecorder(p.arch.String()+": "+p.dev.Describe(), 0)
	rec.SetMeta("arch", p.arch.String())
	timer, err := tg.NewTraceTimer(rec)
	if err != nil {
		return nil, fmt.Errorf("qd: starting a trace: %w", err)
	}
	return &tracer{rec: rec, timer: timer, lanes: make(map[*streamCore]lane)}, nil
}

// Tracing reports whether a trace is in progress.
func (p *Program) Tracing() bool { return p != nil && p.tracer.Load() != nil }

// StopTrace ends the trace: it waits for the traced work on every stream,
// resolves its timings and writes the trace to w as Chrome trace-event
// JSON (w may be nil to discard it). It returns an error if no trace is in
// progress.
func (p *Program) StopTrace(w io.Writer) error {
	if p == nil {
		return fmt.Errorf("%w: nil Program", ErrInvalidArgument)
	}
	// The Program stays open until the trace's timer is closed: a Close
	// waits, so the timer never outlives the device.
	if err := p.enter(); err != nil {
		return fmt.Errorf("qd: StopTrace: %w", err)
	}
	tr := p.tracer.Swap(nil)
	if tr == nil {
		p.exit()
		return fmt.Errorf("qd: %w: StopTrace: no trace in progress", ErrInvalidArgument)
	}
	tr.drain()
	err := p.syncAll()
	err = errors.Join(err, tr.timer.Flush(), tr.timer.Close())
	p.exit()
	if w != nil {
		if _, werr := tr.rec.WriteTo(w); werr != nil {
			err = errors.Join(err, fmt.Errorf("qd: writing the trace: %w", werr))
		}
	}
	return err
}

// stopTraceOnClose drops a trace still in progress when the Program closes;
// the caller holds the lifetime lock exclusively.
func (p *Program) stopTraceOnClose() error {
	if tr := p.tracer.Swap(nil); tr != nil {
		return tr.timer.Close()
	}
	return nil
}

// lane gives s's track, naming it on first use.
func (tr *tracer) lane(s *streamCore) lane {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if l, ok := tr.lanes[s]; ok {
		return l
	}
	tr.count[s.kind]++
	var name string
	switch s.kind {
	case streamDefault:
		name = "default"
	case streamPooled:
		name = "pool " + strconv.Itoa(tr.count[s.kind])
	default:
		name = "stream " + strconv.Itoa(tr.count[streamUser]+tr.count[streamWrapped])
	}
	l := lane{id: uint64(len(tr.lanes) + 1), name: name}
	tr.lanes[s] = l
	tr.rec.NameStream(l.id, name)
	return l
}

// tracesCaptures reports whether the backend captures trace marks
// (backend.CaptureTracer).
func (tr *tracer) tracesCaptures() bool {
	ct, ok := tr.timer.(backend.CaptureTracer)
	return ok && ct.TracesCaptures()
}

// timed enqueues work on s between a start and an end mark, so span (its
// stream filled in here) gets the work's device times. On a capturing
// stream the marks and the span go into the capture instead: each replay
// times them ([Graph.LaunchOn]).
func (tr *tracer) timed(s *streamCore, span trace.Span, work func() error) error {
	l := tr.lane(s)
	span.Stream, span.StreamID = l.name, l.id
	m, err := tr.timer.Begin(s.b)
	if err != nil {
		return fmt.Errorf("qd: trace: %w", err)
	}
	werr := work()
	cp := s.capturing()
	if cp != nil {
		// The backend numbers captured spans in the order of their Ends.
		cp.traceMu.Lock()
		defer cp.traceMu.Unlock()
	}
	err = tr.timer.End(s.b, m, span)
	if err == nil && cp != nil {
		cp.traced(s, span)
	}
	if err != nil && werr == nil {
		werr = fmt.Errorf("qd: trace: %w", err)
	}
	return werr
}

// runTraced is runTask with the task bracketed by trace marks.
func (tr *tracer) runTraced(k *kernelCore, l backend.Launch, task int, s *streamCore, launchID uint64) error {
	t := k.plan.Tasks[task]
	span := trace.Span{Kernel: k.name, Kind: t.Kind.String(), Launch: launchID, Task: task, Group: t.Group}
	return tr.timed(s, span, func() error { return runTask(l, task, s) })
}
