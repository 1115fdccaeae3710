package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
)

// Graphs: stream capture (backend.Capturer) on the driver's own capture.
//
// BeginCapture starts the driver's capture in relaxed mode
// (Codes.CaptureRelaxed). The other modes tie a capture to the OS thread
// that began it: the driver refuses to end it on another thread, and
// forbids "unsafe" calls (a synchronous allocation, say) to any goroutine
// that happens to run on that thread meanwhile. Goroutines move between
// threads, and the runtime locks them only for the length of one call
// path, so neither holds in Go. Relaxed mode checks nothing beyond the
// capture's own streams, which package qd polices itself.
//
// The runtime mirrors the driver's view of who captures: a stream that
// begins a capture, or waits for an event recorded in one, is a member
// until the capture ends. It needs that view for what the driver would
// accept but that would go wrong: the block cache must neither hand a
// capturing stream a block (its address would be baked into the graph
// while the block went back to the cache) nor keep a block freed in a
// capture; a launch that needs temporaries from the free list, or carries
// a violation record (WithDebug), cannot be captured; and while any
// capture is in progress every call makes the device current first
// (mayCallUnbound), so that no call on a capturing stream fails for a
// thread without the context, which might invalidate the capture.
//
// Captured memory operations follow the driver: an allocation on a
// capturing stream (MemAllocAsync) becomes an allocation node whose
// memory exists while the graph runs, and its free (MemFreeAsync, in the
// capture) a free node; kernel launches copy their parameters into the
// graph, so the launch's block is recycled at End as usual. A launch of
// an entry that waits for its predecessors is captured as a programmatic
// dependent launch where the driver has one (launch.go): in a replay each
// such kernel starts while the one before it still runs.

var (
	errCapturing     = backend.CaptureError("the stream is capturing a graph")
	errCapturedEvent = backend.CaptureError("the event was recorded inside a capture: it marks a point of a graph, not of a stream")
	errCaptureCross  = backend.CaptureError("a wait across the boundary of a capture")
	errGraphClosed   = backend.ClosedError("gpu: graph closed")
)

var _ backend.Capturer = (*Device)(nil)

// capture is a capture in progress.
type capture struct {
	origin  *stream
	mu      sync.Mutex
	members []*stream
	spans   []capturedSpan // trace points, when traced (graphtrace.go)
	ended   bool
}

// graphsBound reports whether the driver has every graph call.
func (c *Calls) graphsBound() bool {
	for _, f := range []*Fn{&c.StreamBeginCapture, &c.StreamEndCapture, &c.GraphInstantiate, &c.GraphLaunch, &c.GraphExecDestroy, &c.GraphDestroy} {
		if !f.Bound() {
			return false
		}
	}
	return true
}

// BeginCapture starts the driver's capture on bs, in relaxed mode.
func (d *Device) BeginCapture(bs backend.Stream) error {
	s, err := d.asStream(bs)
	if err != nil {
		return err
	}
	if !d.c.graphsBound() {
		return fmt.Errorf("%s: graphs: the driver lacks %s (too old?): %w", d.Arch(), d.c.GraphInstantiate.Name, backend.ErrUnsupported)
	}
	if s.cap.Load() != nil {
		return fmt.Errorf("%s: BeginCapture: %w", d.Arch(), errCapturing)
	}
	// Counted first: from now on no call goes without the context.
	d.captures.Add(1)
	f := getFrame()
	f.a[0], f.a[1] = s.h, d.codes.CaptureRelaxed
	err = d.run(&d.c.StreamBeginCapture, f.a[:2])
	putFrame(f)
	if err != nil {
		d.captures.Add(-1)
		return err
	}
	s.cap.Store(&capture{origin: s, members: []*stream{s}})
	return nil
}

// EndCapture ends the capture begun on bs; every member leaves it.
func (d *Device) EndCapture(bs backend.Stream) (backend.Graph, error) {
	s, err := d.asStream(bs)
	if err != nil {
		return nil, err
	}
	c := s.cap.Load()
	if c == nil || c.origin != s {
		return nil, fmt.Errorf("%s: EndCapture on a stream that did not begin a capture", d.Arch())
	}
	f := getFrame()
	f.out[0] = 0
	f.a[0], f.a[1] = s.h, f.outAddr(0)
	err = d.run(&d.c.StreamEndCapture, f.a[:2])
	h := uintptr(f.out[0])
	putFrame(f)
	c.mu.Lock()
	c.ended = true
	for _, m := range c.members {
		m.cap.Store(nil)
	}
	spans := c.spans
	c.spans = nil
	c.mu.Unlock()
	d.captures.Add(-1)
	if err != nil {
		if h != 0 {
			d.run(&d.c.GraphDestroy, []uintptr{h})
		}
		return nil, errors.Join(err, closeSpans(spans))
	}
	g := &graph{graphHandle: graphHandle{d: d, h: h, destroy: &d.c.GraphDestroy}, spans: spans}
	g.refs.Store(1)
	d.track(g, true)
	return g, nil
}

// admit is the capture side of s waiting for an event of capture ec (nil:
// recorded outside every capture): s joins ec, or the wait is refused.
func (s *stream) admit(ec *capture) error {
	sc := s.cap.Load()
	switch {
	case ec == nil:
		return fmt.Errorf("%s: %w: a capturing stream cannot wait for an event recorded outside its capture", s.d.Arch(), errCaptureCross)
	case sc == ec:
		return nil
	case sc != nil:
		return fmt.Errorf("%s: %w: the event was recorded in another capture", s.d.Arch(), errCaptureCross)
	}
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if ec.ended {
		return fmt.Errorf("%s: %w", s.d.Arch(), errCapturedEvent)
	}
	ec.members = append(ec.members, s)
	s.cap.Store(ec)
	return nil
}

// track adds or removes a graph or exec from the device's set of live
// ones, which Device.Close destroys if package qd has not.
func (d *Device) track(o graphObject, live bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graphs == nil {
		d.graphs = map[graphObject]struct{}{}
	}
	if live {
		d.graphs[o] = struct{}{}
	} else {
		delete(d.graphs, o)
	}
}

// graphObject is a graph or an exec: what Device.Close destroys.
type graphObject interface {
	destroyLocked() error
}

// graphHandle is a driver graph or exec handle and its destroy function.
type graphHandle struct {
	d       *Device
	h       uintptr
	destroy *Fn // Calls.GraphDestroy or Calls.GraphExecDestroy
	closed  atomic.Bool
}

// close destroys the handle, which o (the graph or exec) tracks. It is
// idempotent.
func (g *graphHandle) close(o graphObject) error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	g.d.track(o, false)
	return g.d.run(g.destroy, []uintptr{g.h})
}

// destroyLocked is Device.Close's: it runs inside enter/leave.
func (g *graphHandle) destroyLocked() error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	return g.d.call1(g.destroy, g.h)
}

// graph is a captured graph. A graph with trace points is kept by the
// execs made from it (graphtrace.go): refs counts its Close and theirs.
type graph struct {
	graphHandle
	spans      []capturedSpan
	refs       atomic.Int32
	userClosed atomic.Bool
}

// Instantiate makes an executable graph.
func (g *graph) Instantiate() (backend.GraphExec, error) {
	if g.closed.Load() || g.userClosed.Load() {
		return nil, errGraphClosed
	}
	if len(g.spans) > 0 && !g.hold() {
		return nil, errGraphClosed
	}
	d := g.d
	f := getFrame()
	f.out[0] = 0
	f.a[0], f.a[1], f.a[2] = f.outAddr(0), g.h, 0 // flags: none
	err := d.run(&d.c.GraphInstantiate, f.a[:3])
	h := uintptr(f.out[0])
	putFrame(f)
	if err != nil {
		if len(g.spans) > 0 {
			err = errors.Join(err, g.unref())
		}
		return nil, err
	}
	x := &graphExec{graphHandle: graphHandle{d: d, h: h, destroy: &d.c.GraphExecDestroy}}
	if len(g.spans) > 0 {
		x.tmpl = g // the hold taken above
	}
	d.track(x, true)
	return x, nil
}

// Close destroys the graph, or leaves that to the last exec made from it
// that keeps it. It is idempotent.
func (g *graph) Close() error {
	if !g.userClosed.CompareAndSwap(false, true) {
		return nil
	}
	return g.unref()
}

// hold takes a hold on g for an exec, unless the last one is gone.
func (g *graph) hold() bool {
	for {
		n := g.refs.Load()
		if n <= 0 {
			return false
		}
		if g.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unref drops one hold on g, destroying it (and its trace points' events)
// with the last.
func (g *graph) unref() error {
	if g.refs.Add(-1) > 0 {
		return nil
	}
	return errors.Join(g.close(g), closeSpans(g.spans))
}

// destroyLocked is Device.Close's, with the trace points' events.
func (g *graph) destroyLocked() error {
	return errors.Join(g.graphHandle.destroyLocked(), closeSpans(g.spans))
}

// graphExec is an executable graph. tmpl is the graph it was made from
// when that graph has trace points; mu then orders its launches against
// LaunchTraced's pointing of the nodes (graphtrace.go).
type graphExec struct {
	graphHandle
	tmpl   *graph
	mu     sync.Mutex
	broken error // a traced replay left the nodes pointing at a trace's events
}

// usable says why x cannot be launched; the caller holds x.mu when x has
// trace points.
func (x *graphExec) usable() error {
	if x.closed.Load() {
		return errGraphClosed
	}
	return x.broken
}

var (
	_ backend.GraphExec        = (*graphExec)(nil)
	_ backend.RawGraphLauncher = (*graphExec)(nil)
)

// Launch enqueues a replay on bs.
func (x *graphExec) Launch(bs backend.Stream) error {
	if x.tmpl != nil {
		x.mu.Lock()
		defer x.mu.Unlock()
	}
	return x.launch(bs)
}

func (x *graphExec) launch(bs backend.Stream) error {
	if err := x.usable(); err != nil {
		return err
	}
	d := x.d
	s, err := d.asStream(bs)
	if err != nil {
		return err
	}
	if s.cap.Load() != nil {
		return fmt.Errorf("%s: graph launch: %w", d.Arch(), errCapturing)
	}
	f := getFrame()
	f.a[0], f.a[1] = x.h, s.h
	err = d.runOn(&d.c.GraphLaunch, f.a[:2])
	putFrame(f)
	return err
}

// Update updates the exec's nodes from bg, a graph of the same topology.
// The call passes four arguments: HIP's hipGraphExecUpdate (and CUDA
// 11's) takes (exec, graph, errorNode*, result*), CUDA 12's
// cuGraphExecUpdate_v2 takes (exec, graph, resultInfo*) and ignores the
// fourth, which the C calling conventions allow. The first out-parameter
// has room for CUDA's CUgraphExecUpdateResultInfo (a result and two node
// handles: 24 bytes). Any failure but a fatal one means "not updated".
func (x *graphExec) Update(bg backend.Graph) (bool, error) {
	d := x.d
	g, ok := bg.(*graph)
	if !ok || g == nil || g.d != d {
		return false, fmt.Errorf("%s: Update with a %T that is not a graph of this device", d.Arch(), bg)
	}
	if x.closed.Load() || g.closed.Load() {
		return false, errGraphClosed
	}
	if !d.c.GraphExecUpdate.Bound() || x.tmpl != nil || len(g.spans) > 0 {
		// Trace points name the nodes of the graph an exec was made
		// from: such an exec is rebuilt, not updated.
		return false, nil
	}
	info := new([4]uint64)
	if err := d.enter(); err != nil {
		return false, err
	}
	r := Call(&d.c.GraphExecUpdate, x.h, g.h, uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&info[3])))
	d.leave()
	if r == 0 {
		return true, nil
	}
	if d.drv.Classify(r) == Fatal {
		return false, d.fail(&d.c.GraphExecUpdate, r)
	}
	return false, nil
}

// Close destroys the exec; replays enqueued run to their end (the
// driver frees it once they are done). It is idempotent.
func (x *graphExec) Close() error {
	if x.tmpl != nil {
		// Not while a traced replay points the nodes.
		x.mu.Lock()
		defer x.mu.Unlock()
	}
	if !x.closed.CompareAndSwap(false, true) {
		return nil
	}
	x.d.track(x, false)
	err := x.d.run(x.destroy, []uintptr{x.h})
	if x.tmpl != nil {
		err = errors.Join(err, x.tmpl.unref())
	}
	return err
}

// RawLaunchCost is the reference of the graph host-cost figure: the host
// time of one Calls.GraphLaunch through these bindings, with nothing else
// on the path (Device.rawBursts).
func (x *graphExec) RawLaunchCost(bs backend.Stream, n, syncEvery int) (time.Duration, error) {
	s, err := x.d.asStream(bs)
	if err != nil {
		return 0, err
	}
	cost, err := x.d.rawBursts(&x.d.c.GraphLaunch, []uintptr{x.h, s.h}, s, n, syncEvery)
	runtime.KeepAlive(x)
	return cost, err
}

// destroyGraphs destroys the graphs and execs package qd left open; it
// runs inside enter/leave at Device.Close.
func (d *Device) destroyGraphs() error {
	d.mu.Lock()
	objs := make([]graphObject, 0, len(d.graphs))
	for o := range d.graphs {
		objs = append(objs, o)
	}
	clear(d.graphs)
	d.mu.Unlock()
	var errs []error
	// Execs first: they were made from graphs, though they do not depend
	// on them.
	for _, o := range objs {
		if _, ok := o.(*graphExec); ok {
			errs = append(errs, o.destroyLocked())
		}
	}
	for _, o := range objs {
		if _, ok := o.(*graph); ok {
			errs = append(errs, o.destroyLocked())
		}
	}
	return errors.Join(errs...)
}
