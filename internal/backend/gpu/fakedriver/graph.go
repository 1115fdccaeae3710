package fakedriver

import (
	"maps"
	"slices"
	"unsafe"
)

// Stream capture and graphs, simulated as CUDA's relaxed-mode capture
// works (the mode the runtime asks for).
//
// StreamBeginCapture puts a stream in capture mode. Work enqueued on a
// capturing stream (copies, fills, launches, stream-ordered allocations
// and frees) is checked as if it ran and recorded instead: a graph is the
// list of what its capture recorded, and GraphLaunch replays the copies
// and fills in that order (launches run nothing on the fake, as ever).
// An event recorded on a capturing stream marks a point of the capture; a
// stream that waits for it joins the capture. Each member counts its
// recorded work, and what of every member's work it is ordered after (a
// vector clock, carried by events), so that StreamEndCapture fails, as
// CUDA does, when a member's work was not joined back into the origin.
//
// Memory allocated by MemAllocAsync in a capture is allocated at once
// and kept by the graph (and every exec made from it) until the last of
// them is destroyed: a replay's addresses are the capture's.
//
// What CUDA refuses during a capture, and the runtime must never do, is a
// misuse: synchronizing or querying a capturing stream or an event
// recorded in a capture in progress, recording such an event again
// outside its capture, a capturing stream waiting for an
// event recorded outside its capture (or in another), destroying a
// capturing stream, freeing in a capture memory it did not allocate,
// launching a graph on a capturing stream. A misuse on a capturing stream
// invalidates the capture: its StreamEndCapture fails.

// captureRelaxed is CUDA's CU_STREAM_CAPTURE_MODE_RELAXED, the mode the
// fake accepts (Codes.CaptureRelaxed).
const captureRelaxed = 2

// graphState is the fake's captures, graphs and execs.
type graphState struct {
	caps   map[uintptr]*capture // capturing stream → its capture
	graphs map[uintptr]*fgraph  // StreamEndCapture's graphs
	execs  map[uintptr]*fgraph  // GraphInstantiate's execs
}

// capture is a capture in progress (or ended, for the events it marked).
type capture struct {
	origin  uintptr
	members map[uintptr]*member
	ops     []op
	mem     *gmem
	invalid bool // a misuse on one of its streams: EndCapture fails
	ended   bool
}

// member is a stream of a capture: how much work it recorded, and how
// much of each member's work it is ordered after.
type member struct {
	n    int
	seen map[uintptr]int
	// The node of the stream's last external event record, and
	// StreamGetCaptureInfo's answer: per stream, as in CUDA, so that
	// members traced at once each find their own node.
	last uintptr
	deps [1]uintptr
}

// op is a recorded call.
type op struct {
	c call
	a args
}

// gmem is the memory a capture allocated, shared by its graph and the
// execs made from it.
type gmem struct {
	blocks []uintptr       // allocation addresses
	freed  map[uintptr]int // those the capture freed, and their bytes
	refs   int
}

// fgraph is a graph or an exec: what it replays and the memory it keeps.
type fgraph struct {
	ops []op
	mem *gmem
}

// streamArg is the index of the stream argument of the calls a capture
// records; -1 for other calls.
func streamArg(c call) int {
	switch c {
	case cMemAllocAsync:
		return 2
	case cMemFreeAsync:
		return 1
	case cCopyHtoDAsync, cCopyDtoHAsync, cCopyDtoDAsync, cMemsetD8Async, cMemsetD16Async, cMemsetD32Async:
		return 3
	case cLaunchKernel:
		return 8
	case cEventRecordWithFlags:
		return 1
	}
	return -1
}

// simCapture runs the calls that capture touches: the graph calls, work
// enqueued on a capturing stream, and what a capture forbids on its
// streams. It reports false for every other call. The caller holds mu.
func (d *Driver) simCapture(c call, a *args) (int32, bool) {
	switch c {
	case cStreamBeginCapture:
		return d.beginCapture(a), true
	case cStreamEndCapture:
		return d.endCapture(a), true
	case cGraphInstantiate:
		return d.instantiate(a), true
	case cGraphLaunch:
		return d.graphLaunch(a), true
	case cGraphExecDestroy, cGraphDestroy:
		return d.graphDestroy(c, a[0]), true
	case cGraphExecUpdate:
		return d.execUpdate(a), true
	case cStreamGetCaptureInfo:
		return d.captureInfo(a), true
	case cGraphExecEventRecordNodeSetEvent:
		return d.setNodeEvent(a), true
	case cCopyPeerAsync:
		// Graphs do not span Programs yet: package qd refuses peer copies
		// in a capture, so the fake does not simulate them there.
		if cp := d.caps[a[5]]; cp != nil {
			cp.invalid = true
			return d.misuse(c, CodeStreamCaptureUnsupported, "a peer copy on capturing stream %#x", a[5]), true
		}
		return 0, false
	case cStreamSynchronize, cStreamQuery, cStreamDestroy:
		if cp := d.caps[a[0]]; cp != nil {
			cp.invalid = true
			return d.misuse(c, CodeStreamCaptureUnsupported, "stream %#x is capturing", a[0]), true
		}
		return 0, false
	}
	i := streamArg(c)
	if i < 0 || d.caps[a[i]] == nil {
		return 0, false
	}
	s := a[i]
	cp := d.caps[s]
	var r int32
	switch c {
	case cMemAllocAsync:
		if r = d.dev.alloc(d, c, a[0], a[1]); r == 0 {
			cp.mem.blocks = append(cp.mem.blocks, uintptr(*(*uint64)(ptr(a[0]))))
		}
	case cMemFreeAsync:
		b, off, ok := d.dev.find(a[0], 0)
		switch {
		case !ok || off != 0 || !slices.Contains(cp.mem.blocks, a[0]):
			r = d.misuse(c, CodeInvalidValue, "%#x is not an allocation of the capture on stream %#x", a[0], cp.origin)
		case cp.mem.freed[a[0]] != 0:
			r = d.misuse(c, CodeInvalidValue, "%#x freed twice in a capture", a[0])
		default:
			cp.mem.freed[a[0]] = b.size
		}
	case cLaunchKernel:
		r = d.launch(a)
	case cEventRecordWithFlags:
		// Only an external record reaches here (sim): a node.
		if _, r = d.event(c, a[0]); r == 0 {
			a[2] = d.newHandle() // the node
			cp.members[s].last = a[2]
		}
	default:
		r = d.transfer(c, a, false)
	}
	if r != 0 {
		cp.invalid = true
		return r, true
	}
	cp.ops = append(cp.ops, op{c: c, a: *a})
	m := cp.members[s]
	m.n++
	m.seen[s] = m.n
	return 0, true
}

// faulted is told of an injected failure of call c. A failure of work
// enqueued on a capturing stream invalidates the capture, and a failed
// StreamEndCapture ends the capture all the same, without a graph, as
// CUDA's do.
func (d *Driver) faulted(c call, a *args) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i := streamArg(c); i >= 0 {
		if cp := d.caps[a[i]]; cp != nil {
			cp.invalid = true
		}
	}
	if cp := d.caps[a[0]]; c == cStreamEndCapture && cp != nil && cp.origin == a[0] {
		cp.invalid = true
		d.endCapture(a)
	}
}

// recordEvent records e on stream s: a point of s's capture, if s
// captures.
func (d *Driver) recordEvent(e *event, s uintptr) {
	cp := d.caps[s]
	if cp == nil {
		e.at, e.cap, e.clock = d.clock, nil, nil
		return
	}
	m := cp.members[s]
	e.cap, e.clock = cp, maps.Clone(m.seen)
}

// waitCaptured is the capture side of stream s waiting for e: s joins
// e's capture, or learns how much of it it is ordered after; a wait
// across a capture's boundary is a misuse.
func (d *Driver) waitCaptured(s uintptr, e *event) int32 {
	sc := d.caps[s]
	ec := e.cap
	if ec != nil && ec.ended {
		return d.misuse(cStreamWaitEvent, CodeStreamCaptureIsolation, "the event was recorded in a capture that has ended")
	}
	switch {
	case ec == nil && sc == nil:
		return 0
	case ec == nil:
		sc.invalid = true
		return d.misuse(cStreamWaitEvent, CodeStreamCaptureIsolation, "capturing stream %#x waits for an event recorded outside its capture", s)
	case sc == nil:
		d.caps[s] = ec
		ec.members[s] = &member{seen: maps.Clone(e.clock)}
		return 0
	case sc != ec:
		sc.invalid, ec.invalid = true, true
		return d.misuse(cStreamWaitEvent, CodeStreamCaptureIsolation, "capturing stream %#x waits for an event of another capture", s)
	}
	m := sc.members[s]
	for k, v := range e.clock {
		m.seen[k] = max(m.seen[k], v)
	}
	return 0
}

// beginCapture runs StreamBeginCapture(stream, mode).
func (d *Driver) beginCapture(a *args) int32 {
	const c = cStreamBeginCapture
	s := a[0]
	if !d.streams[s] {
		return d.misuse(c, CodeStreamCaptureUnsupported, "stream %#x is not a live stream of its own (the default streams cannot capture)", s)
	}
	if a[1] != captureRelaxed {
		return d.misuse(c, CodeInvalidValue, "mode %d, the runtime asks for relaxed (%d)", a[1], captureRelaxed)
	}
	if d.caps[s] != nil {
		return d.misuse(c, CodeIllegalState, "stream %#x is capturing already", s)
	}
	if d.caps == nil {
		d.caps = map[uintptr]*capture{}
	}
	d.caps[s] = &capture{origin: s, members: map[uintptr]*member{s: {seen: map[uintptr]int{}}},
		mem: &gmem{freed: map[uintptr]int{}}}
	return 0
}

// endCapture runs StreamEndCapture(stream, graph*): every member leaves
// the capture; the graph is made unless the capture broke a rule.
func (d *Driver) endCapture(a *args) int32 {
	const c = cStreamEndCapture
	s := a[0]
	out := (*uintptr)(ptr(a[1]))
	*out = 0
	cp := d.caps[s]
	if cp == nil || cp.origin != s {
		return d.misuse(c, CodeStreamCaptureUnmatched, "stream %#x did not begin a capture", s)
	}
	cp.ended = true
	for m := range cp.members {
		delete(d.caps, m)
	}
	seen := cp.members[s].seen
	code := int32(0)
	for ms, m := range cp.members {
		if ms != s && seen[ms] < m.n {
			code = CodeStreamCaptureUnjoined // not a misuse: the runtime reports it too
		}
	}
	if cp.invalid {
		code = CodeStreamCaptureInvalidated
	}
	cp.mem.refs++
	g := &fgraph{ops: cp.ops, mem: cp.mem}
	if code != 0 {
		d.release(g)
		return code
	}
	*out = d.add(&d.graphs, g)
	return 0
}

// add gives g a new handle in *set (made on first use) and returns it.
func (d *Driver) add(set *map[uintptr]*fgraph, g *fgraph) uintptr {
	if *set == nil {
		*set = map[uintptr]*fgraph{}
	}
	h := d.newHandle()
	(*set)[h] = g
	return h
}

// instantiate runs GraphInstantiate(exec*, graph, flags).
func (d *Driver) instantiate(a *args) int32 {
	const c = cGraphInstantiate
	g := d.graphs[a[1]]
	if g == nil {
		return d.misuse(c, CodeInvalidHandle, "graph %#x is not live", a[1])
	}
	if a[2] != 0 {
		return d.misuse(c, CodeInvalidValue, "flags %#x", a[2])
	}
	g.mem.refs++
	*(*uintptr)(ptr(a[0])) = d.add(&d.execs, &fgraph{ops: slices.Clone(g.ops), mem: g.mem})
	return 0
}

// graphLaunch runs GraphLaunch(exec, stream): the recorded copies and
// fills run again, on memory that must still be live.
func (d *Driver) graphLaunch(a *args) int32 {
	const c = cGraphLaunch
	x := d.execs[a[0]]
	if x == nil {
		return d.misuse(c, CodeInvalidHandle, "graph exec %#x is not live", a[0])
	}
	if r := d.stream(c, a[1]); r != 0 {
		return r
	}
	if cp := d.caps[a[1]]; cp != nil {
		cp.invalid = true
		return d.misuse(c, CodeStreamCaptureUnsupported, "stream %#x is capturing", a[1])
	}
	for _, o := range x.ops {
		switch o.c {
		case cCopyHtoDAsync, cCopyDtoHAsync, cCopyDtoDAsync, cMemsetD8Async, cMemsetD16Async, cMemsetD32Async:
			oa := o.a
			oa[3] = a[1]
			if r := d.transfer(o.c, &oa, true); r != 0 {
				return r
			}
		case cLaunchKernel:
			// The parameters were copied into the graph at capture; only
			// the function is checked again.
			if d.funcs[o.a[0]] == nil {
				return d.misuse(c, CodeInvalidHandle, "the graph launches function %#x, unloaded since", o.a[0])
			}
		case cEventRecordWithFlags:
			e := d.events[o.a[0]]
			if e == nil {
				return d.misuse(c, CodeInvalidHandle, "the graph records event %#x, destroyed since", o.a[0])
			}
			e.at, e.cap, e.clock = d.clock, nil, nil
		}
	}
	return 0
}

// graphDestroy runs GraphDestroy(graph) or GraphExecDestroy(exec).
func (d *Driver) graphDestroy(c call, h uintptr) int32 {
	set := d.graphs
	if c == cGraphExecDestroy {
		set = d.execs
	}
	g := set[h]
	if g == nil {
		return d.misuse(c, CodeInvalidHandle, "%#x is not live", h)
	}
	delete(set, h)
	d.release(g)
	return 0
}

// execUpdate runs GraphExecUpdate(exec, graph, out1*, out2*): the exec
// replays the graph from now on if their recorded calls match one for
// one (the same calls, the same functions, the same allocation sizes);
// otherwise it fails, as CUDA's does, with the exec unchanged.
func (d *Driver) execUpdate(a *args) int32 {
	const c = cGraphExecUpdate
	x, g := d.execs[a[0]], d.graphs[a[1]]
	if x == nil || g == nil {
		return d.misuse(c, CodeInvalidHandle, "exec %#x or graph %#x is not live", a[0], a[1])
	}
	if len(x.ops) != len(g.ops) {
		return CodeGraphExecUpdateFailure
	}
	for i, o := range x.ops {
		n := g.ops[i]
		same := o.c == n.c
		switch o.c {
		case cLaunchKernel:
			same = same && o.a[0] == n.a[0]
		case cMemAllocAsync:
			same = same && o.a[1] == n.a[1]
		}
		if !same {
			return CodeGraphExecUpdateFailure
		}
	}
	g.mem.refs++
	d.release(&fgraph{mem: x.mem})
	x.ops, x.mem = slices.Clone(g.ops), g.mem
	return 0
}

// captureInfo runs StreamGetCaptureInfo(stream, status*, id*, graph*,
// deps**, ndeps*) for what the runtime asks it: the node of the external
// event record just made on a capturing stream.
func (d *Driver) captureInfo(a *args) int32 {
	const c = cStreamGetCaptureInfo
	if r := d.stream(c, a[0]); r != 0 {
		return r
	}
	cp := d.caps[a[0]]
	var m *member
	if cp != nil {
		m = cp.members[a[0]]
	}
	if m == nil || m.last == 0 {
		return d.misuse(c, CodeNotSupported, "the fake answers only on a capturing stream right after an external event record")
	}
	m.deps[0] = m.last
	*(*uint32)(ptr(a[1])) = 1 // active
	*(*uint64)(ptr(a[2])) = uint64(cp.origin)
	*(*uintptr)(ptr(a[3])) = 0
	*(*uintptr)(ptr(a[4])) = uintptr(unsafe.Pointer(&m.deps[0]))
	*(*uintptr)(ptr(a[5])) = 1
	m.last = 0
	return 0
}

// setNodeEvent runs GraphExecEventRecordNodeSetEvent(exec, node, event):
// the exec's record of node records event from its next launch on.
func (d *Driver) setNodeEvent(a *args) int32 {
	const c = cGraphExecEventRecordNodeSetEvent
	x := d.execs[a[0]]
	if x == nil {
		return d.misuse(c, CodeInvalidHandle, "graph exec %#x is not live", a[0])
	}
	if _, r := d.event(c, a[2]); r != 0 {
		return r
	}
	for i, o := range x.ops {
		if o.c == cEventRecordWithFlags && o.a[2] == a[1] {
			x.ops[i].a[0] = a[2]
			return 0
		}
	}
	return d.misuse(c, CodeInvalidValue, "node %#x is not an event record of the exec's graph", a[1])
}

// release drops g's hold on its memory, freeing the memory with the last
// hold.
func (d *Driver) release(g *fgraph) {
	if g.mem.refs--; g.mem.refs > 0 {
		return
	}
	for _, b := range g.mem.blocks {
		d.dev.free(d, cMemFree, b)
		d.gone(b)
	}
	g.mem.blocks = nil
	clear(g.mem.freed)
}

// graphFreed counts the allocations captures freed whose memory their
// graphs still hold, and their bytes: live in the fake, not in the
// Injector's account.
func (d *Driver) graphFreed() (n int, bytes int64) {
	seen := map[*gmem]bool{}
	count := func(m *gmem) {
		if seen[m] {
			return
		}
		seen[m] = true
		for _, b := range m.freed {
			n++
			bytes += int64(b)
		}
	}
	for _, g := range d.graphs {
		count(g.mem)
	}
	for _, x := range d.execs {
		count(x.mem)
	}
	for _, cp := range d.caps {
		count(cp.mem)
	}
	return n, bytes
}
