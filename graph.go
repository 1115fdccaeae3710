package qd

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// Graph is work captured from streams ([Stream.Capture]), replayed with one
// call: LaunchOn enqueues all of it on a stream at the host cost of about
// one launch, and on a GPU its kernels start back to back without the
// host in between. Every method is safe for concurrent use.
//
// What a capture records, on every backend: kernel launches (on explicit
// streams and on the default stream), stream-parallel kernels (their
// groups fork and join inside the graph, on streams the graph has),
// event records and waits between the capture's streams, asynchronous
// copies (CopyFromHostOn, CopyToHostOn, CopyFromOn), fills (FillOn), and
// allocations and frees in stream order ([NewNdarrayOn] and Close). Each is
// recorded with its arguments as they were: the same arrays, scalar values
// and sizes at every replay. Update changes them.
//
// A graph keeps the arrays and host arrays its work uses alive, and a
// replay counts as a use of each of them: a host read or Close of such an
// array waits for the replays enqueued before it. Closing an array a graph
// uses is allowed; the graph's later LaunchOn then fails with an error
// matching [ErrClosed] that names the array, rather than touch freed memory.
type Graph struct {
	c *graphCore
}

// graphCore is the part of a Graph the Program's registry and the leak
// cleanup hold.
type graphCore struct {
	p      *Program
	origin *streamCore // where Update captures

	mu     sync.Mutex // serializes LaunchOn, Update and Close
	exec   backend.GraphExec
	held   []heldArray
	name   string     // its replays' trace spans' name
	spans  graphSpans // the spans of its traced capture, if any
	failed error      // an Update that failed: LaunchOn returns it

	uses     tracker // the streams the graph was launched on
	inflight busy    // LaunchOn calls in progress
	closed   atomic.Bool
}

// Capture records, without running it, the work fn enqueues on s, and on
// every stream that joins the capture, and returns it as a Graph.
//
// A stream joins the capture when it waits for an event recorded on a
// stream of the capture (WaitEvent, WaitStream): this is how work forks
// onto other streams. Every stream that joined must be joined back into s
// (s waits for an event recorded after its work) before fn returns, or
// Capture fails naming it. Stream-parallel kernels fork and join by
// themselves: their groups become parallel branches of the graph.
//
// While s captures, what would make the host wait for it is refused with
// an error that names the call and the capture and matches [ErrCapturing]:
// Synchronize, SynchronizeContext or Query of a capturing stream, [Program.Synchronize], a host
// read or write of an array the capture's work uses (CopyToHost, ToSlice,
// CopyFromHost, [HostArray.Data]), Synchronize or Query of an event
// recorded in the capture, a launch with a Go slice argument on a
// capturing stream, a wait by a capturing stream for work outside the
// capture, [NewNdarrayOn] on a device that cannot allocate inside a graph,
// and a wait or copy that involves another Program (graphs do not span
// Programs yet; docs/multigpu.md).
// The capture then fails: Capture returns that error (joined with fn's),
// the streams leave capture mode, and the Program stays usable. A panic in
// fn ends the capture the same way and goes on. Calls without a stream
// ([NewNdarray], [NewHostArray], Compile, NewStream, NewEvent) run at once, as
// outside a capture, and are not captured.
//
// An array made by NewNdarrayOn on a capturing stream is memory of the
// graph: only the capture's streams may use it, and it must be closed
// before fn returns (its free is captured too); each replay allocates,
// zeroes and frees it again. An array made by NewNdarrayOn before the
// capture and first used in it is zeroed at once, outside the capture
// (Capture waits for that fill on the host): replays never zero it.
//
// While a trace is on, each replay of the graph is one span on its
// stream, of kind "graph", named after the kernels the graph launches
// ("graph: fill, axpb"). A graph captured while a trace was on also traces
// each task of each replay, as launches are traced: a span on the lane of
// the stream the task was captured on, its launch numbered afresh for the
// replay (on a GPU, event-record nodes captured around each task, timed by
// the trace's own events at every traced replay; such a graph is rebuilt,
// not updated in place, by Update). Those nodes stay in every replay of
// the graph, traced or not, and sit between its kernels, which then no
// longer start while the one before runs (programmatic launches, sm_90
// and later): capture without a trace to measure a graph's speed. HIP
// traces a replay as one span only. Events recorded inside a capture order
// its streams but are not recorded by replays.
//
// On a GPU the driver's stream capture records the work (CUDA in relaxed
// mode, the only mode in which goroutines, which move between threads, may
// end a capture on another thread than the one that began it), and a
// kernel built [WithDebug] cannot be captured: its index checks report
// through the host at Synchronize, which a replay never reaches. Captures
// on different streams may run at once in different goroutines; work
// another goroutine enqueues on a capturing stream is captured too.
func (s *Stream) Capture(fn func() error) (*Graph, error) {
	if s == nil || s.c == nil {
		return nil, fmt.Errorf("%w: Capture: nil stream", ErrInvalidArgument)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: Capture: nil function", ErrInvalidArgument)
	}
	p := s.c.p
	c, err := p.beginCapture(s.c, "Capture")
	if err != nil {
		return nil, err
	}
	bg, parts, err := c.run("Capture", fn)
	if err != nil {
		return nil, err
	}
	return p.newGraph(s.c, bg, parts)
}

// newGraph instantiates a capture's graph.
func (p *Program) newGraph(origin *streamCore, bg backend.Graph, parts graphParts) (*Graph, error) {
	if err := p.enter(); err != nil {
		bg.Close()
		return nil, err
	}
	defer p.exit()
	x, err := bg.Instantiate()
	bg.Close()
	if err != nil {
		return nil, fmt.Errorf("qd: Capture: instantiating the graph: %w", err)
	}
	c := &graphCore{p: p, origin: origin, exec: x, held: parts.held, name: parts.name, spans: parts.spans}
	p.mu.Lock()
	p.graphs[c] = struct{}{}
	p.mu.Unlock()
	g := &Graph{c: c}
	runtime.AddCleanup(g, func(c *graphCore) { go c.p.closeLeaked(c) }, c)
	return g, nil
}

// LaunchOn enqueues one replay of the graph on s, any stream of the
// graph's Program, and returns: the replay comes after the work enqueued
// on s before it, and work enqueued on s later comes after the replay.
// Replays of one graph run one after another, in the order of their
// LaunchOn calls, whatever their streams. Errors the replay's work raises
// (the CPU's index checks) are reported by the next Synchronize of s.
func (g *Graph) LaunchOn(s *Stream) error {
	if g == nil || g.c == nil {
		return fmt.Errorf("%w: nil Graph", ErrInvalidArgument)
	}
	if err := s.use(); err != nil {
		return err
	}
	c := g.c
	p := s.c.p
	defer p.exit()
	if c.p != p {
		return fmt.Errorf("%w: Graph.LaunchOn: the graph belongs to another Program", ErrForeign)
	}
	// The capture check and the launch are one step under s's gate.
	cp, ok := s.c.enter()
	if !ok {
		return closedErr("stream")
	}
	defer s.c.exit()
	if cp != nil {
		return cp.refuse("Graph.LaunchOn", "a graph cannot be launched inside a capture")
	}
	c.inflight.enter()
	defer c.inflight.leave()
	if c.closed.Load() {
		return closedErr("graph")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed != nil {
		return c.failed
	}
	for i, h := range c.held {
		if !h.core.pin() {
			for _, o := range c.held[:i] {
				o.core.unpin()
			}
			return fmt.Errorf("qd: Graph.LaunchOn: %s was closed, so the graph can no longer run (capture it again, or Update it): %w", h.what, ErrClosed)
		}
	}
	launch := func() error { return c.exec.Launch(s.c.b) }
	var err error
	if tr := p.acquireTracer(); tr != nil {
		if x, spans := c.replaySpans(tr); spans != nil {
			launch = func() error { return x.LaunchTraced(s.c.b, tr.timer, spans) }
		}
		span := trace.Span{Kernel: c.name, Kind: "graph", Launch: tr.launches.Add(1), Task: -1}
		err = tr.timed(s.c, span, launch)
		tr.done()
	} else {
		err = launch()
	}
	for _, h := range c.held {
		if err == nil {
			h.core.noteUse(s.c)
		}
		h.core.unpin()
	}
	if err != nil {
		return fmt.Errorf("qd: Graph.LaunchOn: %w", err)
	}
	c.uses.noteUse(s.c)
	return nil
}

// Update captures fn on the stream the graph was captured on, as Capture
// does, and makes the graph replay the new capture from its next LaunchOn;
// replays already enqueued are not affected. Use it to replay with other
// scalar values or other arrays.
//
// When the new capture has the same shape as the graph's (the same
// operations in the same order with the same dependencies: only their
// scalar values, arrays and sizes differ), the executable graph is
// updated in place (cuGraphExecUpdate on CUDA, hipGraphExecUpdate on HIP),
// which costs about as much as the capture itself. Otherwise, or where the
// driver declines the update, Update builds a new executable graph, as
// Capture does, after waiting for the replays enqueued so far. Either way
// the graph then keeps the arrays of the new capture. If the capture
// fails the graph is unchanged; if building the new executable graph
// fails, LaunchOn returns that error until an Update succeeds.
func (g *Graph) Update(fn func() error) error {
	if g == nil || g.c == nil {
		return fmt.Errorf("%w: nil Graph", ErrInvalidArgument)
	}
	if fn == nil {
		return fmt.Errorf("%w: Graph.Update: nil function", ErrInvalidArgument)
	}
	c := g.c
	if c.closed.Load() {
		return closedErr("graph")
	}
	cp, err := c.p.beginCapture(c.origin, "Graph.Update")
	if err != nil {
		return err
	}
	bg, parts, err := cp.run("Graph.Update", fn)
	if err != nil {
		return err
	}
	return c.update(bg, parts)
}

// update makes the graph replay bg, and closes bg. It closes bg before it
// lets Program.Close in, as newGraph does: a backend graph closed after
// the Program's Close had begun raced the device's Close, which destroys
// the graphs still open, and could outlive it (a leaked driver graph,
// found by TestStress).
func (c *graphCore) update(bg backend.Graph, parts graphParts) error {
	p := c.p
	if err := p.enter(); err != nil {
		bg.Close() // the device's Close has destroyed it: a no-op
		return err
	}
	defer p.exit()
	defer bg.Close()
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return closedErr("graph")
	}
	var uerr error
	if c.failed == nil {
		var ok bool
		if ok, uerr = c.exec.Update(bg); ok && uerr == nil {
			c.held, c.name, c.spans = parts.held, parts.name, parts.spans
			c.mu.Unlock()
			return nil
		}
	}
	// Not updated: build the new capture anew.
	x, err := bg.Instantiate()
	if err != nil {
		err = fmt.Errorf("qd: Graph.Update: instantiating the new graph: %w", errors.Join(uerr, err))
		c.failed = err
		c.mu.Unlock()
		return err
	}
	old := c.exec
	c.exec, c.held, c.name, c.spans, c.failed = x, parts.held, parts.name, parts.spans, nil
	c.mu.Unlock()
	// The old exec may still have replays enqueued. They are waited for
	// without c.mu: the wait takes their streams' gates, which LaunchOn
	// holds while it waits for c.mu. No LaunchOn uses old from now on.
	return errors.Join(c.uses.waitUses(), old.Close())
}

// Close releases the graph after the replays enqueued so far. It is
// idempotent; LaunchOn and Update of a closed graph return [ErrClosed].
func (g *Graph) Close() error {
	if g == nil || g.c == nil {
		return nil
	}
	return g.c.p.closeObject(g.c)
}

func (c *graphCore) close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	p := c.p
	p.mu.Lock()
	delete(p.graphs, c)
	p.mu.Unlock()
	c.inflight.wait()
	err := c.uses.waitUses()
	c.mu.Lock()
	defer c.mu.Unlock()
	err = errors.Join(err, c.exec.Close())
	c.held = nil
	return err
}

// release is [Program.Close]'s path: all work is already done.
func (c *graphCore) release() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = nil
	return c.exec.Close()
}

// replaySpans are the exec and the spans of one traced replay in tr: the
// captured tasks' spans on their streams' lanes in tr, their launches
// numbered after tr's last; nil spans when the graph was captured without
// a trace, or its backend cannot time them. The caller holds c.mu.
func (c *graphCore) replaySpans(tr *tracer) (backend.TracedExec, []trace.Span) {
	x, ok := c.exec.(backend.TracedExec)
	if !ok || len(c.spans.spans) == 0 || x.TracedSpans() != len(c.spans.spans) {
		return nil, nil
	}
	base := tr.launches.Add(c.spans.launches) - c.spans.launches
	out := make([]trace.Span, len(c.spans.spans))
	for i, cs := range c.spans.spans {
		sp := cs.span
		l := tr.lane(cs.s)
		sp.Stream, sp.StreamID, sp.Launch = l.name, l.id, base+sp.Launch
		out[i] = sp
	}
	return x, out
}
