package vulkan

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Capture and replay (backend.Capturer). Every stream of a capture has a
// lane: the commands it was given while capturing, each a node of a
// graph whose edges are the lanes' order and the event waits that joined
// streams to the capture (a wait for an event recorded on a capturing
// stream: a point of that stream's lane). Instantiate records the nodes
// into one command buffer, level by level of the graph, with a global
// memory barrier between levels and none within one, so that the lanes'
// independent commands still run at once, and a replay is one
// vkQueueSubmit however many launches the graph holds. Replays of one exec
// are chained by the semaphore of the last one, as CUDA orders launches of
// one graph exec.
//
// As on CUDA, every stream that joined must be joined back into the
// origin before EndCapture, and a wait across the capture's boundary (a
// capturing stream waiting for an event recorded outside it) is refused
// with an error matching ErrCapturing. Host work the captured commands
// leave for later (the frees of stream-ordered memory and of staging
// buffers) runs once the graph and every exec made from it are closed:
// memory allocated in a capture lives while the graph can run.

var (
	errCapturing      = backend.CaptureError("vulkan: the stream is capturing a graph")
	errCaptureCross   = backend.CaptureError("vulkan: a wait across the boundary of a capture")
	errNotCapturing   = backend.CaptureError("vulkan: EndCapture of a stream that is not capturing")
	errAlreadyCapture = backend.CaptureError("vulkan: BeginCapture of a stream that is capturing")
	errNotOrigin      = backend.CaptureError("vulkan: EndCapture on a stream that joined a capture but did not begin it")
	errUnjoined       = backend.CaptureError("vulkan: EndCapture with a stream of the capture not joined back into the origin")
	errCaptureEnded   = backend.CaptureError("vulkan: a wait for an event recorded in a capture that has ended: it marks a point of a graph, not of a stream")
)

var _ backend.Capturer = (*Device)(nil)

// capture is a capture in progress, shared by the streams that take part.
type capture struct {
	mu     sync.Mutex
	origin *Stream
	lanes  map[*Stream]*lane
	order  []*Stream // the lanes in joining order
	nodes  []*node
	hooks  []func() error
	ended  bool     // EndCapture ran: no stream joins any more
	marks  int      // trace marks among the nodes (trace.go)
	spans  [][2]int // the traced spans' start and end marks, in End order
}

// lane is one stream's part: its nodes, and the nodes the next one
// depends on beside the lane's last (the event waits since).
type lane struct {
	nodes   []*node
	pending []*node
}

// node is one command of a capture.
type node struct {
	record func(cb uintptr)
	deps   []*node // the nodes it must follow (its lane's previous one included)
	mark   int     // a trace mark's number + 1 (trace.go); 0 for other nodes
}

// point is the node an event recorded on a capturing stream stands for:
// the last of its lane (nil: none yet, the capture's start).
func (c *capture) point(s *Stream) *node {
	l := c.lanes[s]
	var last *node
	if n := len(l.nodes); n > 0 {
		last = l.nodes[n-1]
	}
	if len(l.pending) == 0 {
		return last
	}
	// The waits since the last command count too, as a record after a
	// wait comes after the waited-for point: a join node (no command)
	// that depends on both.
	join := &node{deps: append([]*node(nil), l.pending...)}
	if last != nil {
		join.deps = append(join.deps, last)
	}
	return join
}

// add appends a command to s's lane.
func (c *capture) add(s *Stream, record func(cb uintptr)) {
	c.addNode(s, &node{record: record})
}

// addNode appends n, which holds a command, to s's lane.
func (c *capture) addNode(s *Stream, n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lanes[s]
	n.deps = l.pending
	if k := len(l.nodes); k > 0 {
		n.deps = append(n.deps, l.nodes[k-1])
	}
	l.pending = nil
	l.nodes = append(l.nodes, n)
	c.nodes = append(c.nodes, n)
}

// join makes s (capturing this capture already, or joining it now) wait
// for p, a point of the capture; it fails once the capture has ended.
func (c *capture) join(s *Stream, p *node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return errCaptureEnded
	}
	l, ok := c.lanes[s]
	if !ok {
		l = &lane{}
		c.lanes[s] = l
		c.order = append(c.order, s)
	}
	if p != nil {
		l.pending = append(l.pending, p)
	}
	return nil
}

// BeginCapture starts capturing on s.
func (d *Device) BeginCapture(bs backend.Stream) error {
	s, err := d.stream(bs)
	if err != nil {
		return err
	}
	if _, err := s.point(); err != nil { // pending event waits go first
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capture != nil {
		return errAlreadyCapture
	}
	c := &capture{origin: s, lanes: map[*Stream]*lane{s: {}}, order: []*Stream{s}}
	s.capture = c
	return nil
}

// EndCapture ends the capture begun on s and returns its graph; every
// stream of the capture leaves it, also when it fails.
func (d *Device) EndCapture(bs backend.Stream) (backend.Graph, error) {
	s, err := d.stream(bs)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	c := s.capture
	s.mu.Unlock()
	if c == nil {
		return nil, errNotCapturing
	}
	if c.origin != s {
		return nil, errNotOrigin
	}
	c.mu.Lock()
	c.ended = true
	members := c.order
	c.mu.Unlock()
	for _, m := range members {
		m.mu.Lock()
		m.capture = nil
		m.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Every other lane's last node must come before the origin's end.
	end := &node{deps: c.lanes[s].pending}
	if l := c.lanes[s].nodes; len(l) > 0 {
		end.deps = append(end.deps, l[len(l)-1])
	}
	before := ancestors(end)
	for _, m := range members[1:] {
		if l := c.lanes[m].nodes; len(l) > 0 && !before[l[len(l)-1]] {
			for _, h := range c.hooks {
				_ = h()
			}
			return nil, errUnjoined
		}
	}
	g := &graph{d: d, nodes: c.nodes, hooks: c.hooks, marks: c.marks, spans: c.spans}
	g.refs.Store(1)
	return g, nil
}

// ancestors is every node n depends on, directly or not.
func ancestors(n *node) map[*node]bool {
	seen := map[*node]bool{}
	stack := append([]*node(nil), n.deps...)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		stack = append(stack, x.deps...)
	}
	return seen
}

// levels orders the commands for one command buffer: each node's level is
// one more than its deepest dependency's (a join node, which holds no
// command, passes its dependencies' level on).
func levels(nodes []*node) [][]*node {
	level := map[*node]int{}
	var depth func(n *node) int
	depth = func(n *node) int {
		if l, ok := level[n]; ok {
			return l
		}
		l := 0
		for _, d := range n.deps {
			dl := depth(d)
			if d.record != nil {
				dl++
			}
			l = max(l, dl)
		}
		level[n] = l
		return l
	}
	var out [][]*node
	for _, n := range nodes {
		l := depth(n)
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], n)
	}
	return out
}

// graph is a capture's commands.
type graph struct {
	d      *Device
	nodes  []*node
	hooks  []func() error
	marks  int          // trace marks among the nodes
	spans  [][2]int     // the traced spans' marks
	refs   atomic.Int32 // the graph and its execs
	closed atomic.Bool
}

// release drops one reference; the last runs the deferred host work.
func (g *graph) release() {
	if g.refs.Add(-1) == 0 {
		for _, h := range g.hooks {
			_ = h()
		}
		g.hooks = nil
	}
}

// Close releases the graph; execs made from it stay usable.
func (g *graph) Close() error {
	if !g.closed.Swap(true) {
		g.release()
	}
	return nil
}

// Instantiate records the graph's commands into one command buffer.
func (g *graph) Instantiate() (backend.GraphExec, error) {
	// A reference first, refused once the last one is gone (a Close in
	// between would free what the exec replays).
	for {
		r := g.refs.Load()
		if r <= 0 || g.closed.Load() {
			return nil, backend.ClosedError("vulkan: Instantiate of a closed graph")
		}
		if g.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	ok := false
	defer func() {
		if !ok {
			g.release()
		}
	}()
	vd := g.d.vd
	pool, err := vd.CreateCommandPool()
	if err != nil {
		return nil, g.d.wrap(err)
	}
	cb, err := vd.AllocateCommandBuffer(pool)
	if err == nil {
		err = g.record(cb, 0)
	}
	if err != nil {
		vd.DestroyCommandPool(pool)
		return nil, g.d.wrap(err)
	}
	ok = true
	return &graphExec{g: g, pool: pool, cb: cb}, nil
}

// record records the graph's commands into cb: for the exec's own replays
// (marks 0: the trace marks write nothing), or for one traced replay,
// whose marks write their timestamps into query pool marks (trace.go).
func (g *graph) record(cb uintptr, marks uint64) error {
	vd := g.d.vd
	flags := uint32(vk.CommandBufferUsageSimultaneous)
	if marks != 0 {
		flags = vk.CommandBufferUsageOneTimeSubmit
	}
	if err := vd.Begin(cb, flags); err != nil {
		return err
	}
	for i, lv := range levels(g.nodes) {
		if i > 0 {
			vd.CmdDeviceBarrier(cb)
		}
		for _, n := range lv {
			if n.mark > 0 {
				if marks != 0 {
					vd.CmdTimestamp(cb, marks, n.mark-1)
				}
				continue
			}
			n.record(cb)
		}
	}
	vd.CmdHostReadBarrier(cb)
	return vd.End(cb)
}

// graphExec is an instantiated graph.
type graphExec struct {
	g      *graph
	pool   uint64
	cb     uintptr
	mu     sync.Mutex
	last   vk.Wait // the last replay's signal; zero before the first
	lastOn *Stream // the stream of the last replay
	closed bool
	// traced are the command buffers of traced replays (trace.go), freed
	// once their stream passes them.
	traced []tracedReplay
}

type tracedReplay struct {
	cb         uintptr
	sem, value uint64
}

// Launch submits one replay on s, after s's work and the exec's last
// replay.
func (x *graphExec) Launch(bs backend.Stream) error {
	s, err := x.g.d.stream(bs)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return backend.ClosedError("vulkan: Launch of a closed graph exec")
	}
	_, err = x.launchLocked(s, x.cb)
	return err
}

// launchLocked submits cb, a replay of the exec, on s after s's work and
// the exec's last replay, and frees the traced replays' command buffers
// that are done.
func (x *graphExec) launchLocked(s *Stream, cb uintptr) (uint64, error) {
	kept := x.traced[:0]
	for _, r := range x.traced {
		if v, err := x.g.d.vd.SemaphoreValue(r.sem); err == nil && v >= r.value {
			x.g.d.vd.FreeCommandBuffer(x.pool, r.cb)
		} else {
			kept = append(kept, r)
		}
	}
	clear(x.traced[len(kept):])
	x.traced = kept
	var extra []vk.Wait
	if last := x.last; last.Value > 0 && last.Semaphore != s.sem {
		if x.lastOn.submitted.Load() < last.Value {
			// The last replay is held behind a relay of its stream (peer.go).
			if err := s.d.relayWait(s, s.d, last.Semaphore, last.Value); err != nil {
				return 0, err
			}
		} else {
			extra = append(extra, last)
		}
	}
	v, err := s.submitRecorded(cb, extra)
	if err != nil {
		return 0, err
	}
	x.last, x.lastOn = vk.Wait{Semaphore: s.sem, Value: v}, s
	return v, nil
}

// Update reports false: the caller instantiates the new capture.
func (x *graphExec) Update(backend.Graph) (bool, error) { return false, nil }

// Close waits for the last replay, then releases the command buffer.
func (x *graphExec) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	var err error
	if x.last.Value > 0 {
		err = x.g.d.waitValue(x.last.Semaphore, x.last.Value)
	}
	x.g.d.vd.DestroyCommandPool(x.pool)
	x.g.release()
	return err
}

var _ backend.RawGraphLauncher = (*graphExec)(nil)

// RawLaunchCost is the host time of one replay straight through the
// bindings: n vkQueueSubmits of the exec's command buffer on s's queue,
// chained by a timeline semaphore, a wait every syncEvery.
func (x *graphExec) RawLaunchCost(bs backend.Stream, n, syncEvery int) (time.Duration, error) {
	s, err := x.g.d.stream(bs)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, backend.ClosedError("vulkan: RawLaunchCost of a closed graph exec")
	}
	if x.last.Value > 0 {
		if err := x.g.d.waitValue(x.last.Semaphore, x.last.Value); err != nil {
			return 0, err
		}
	}
	return x.g.d.submitLoop(s.main.q, []uintptr{x.cb}, n, syncEvery)
}
