package qd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Graphs of a stress worker's private world (stress_private_test.go): a
// capture's body is a list of model operations (gop), each enqueued in the
// capture and applied to the model by each replay, in order. A replay
// fails with ErrClosed, and changes nothing, once an array or host array
// of its graph is closed. Another worker's Program.Synchronize refuses
// every capture in progress: a private capture may fail with
// ErrCapturing, and then nothing changes.

// body makes a capture's operations on origin s: one to four, on open
// arrays and host arrays of the worker.
func (w *stressWorker) body(s *pStream) []gop {
	if w.live() == nil {
		return nil
	}
	ops := make([]gop, 1+w.pick(4))
	for i := range ops {
		ops[i] = w.gop(s, w.spec(s))
	}
	return ops
}

// sameShape is body again with new values: a capture of the same shape,
// which Update makes in place. It is nil if an operand has been closed.
func (w *stressWorker) sameShape(s *pStream, body []gop) []gop {
	arrays, hosts := operands(body)
	if anyClosed(arrays, hosts) || slices.ContainsFunc(body, func(op gop) bool { return op.spec.f != nil && op.spec.f.closed }) {
		return nil
	}
	ops := make([]gop, len(body))
	for i, op := range body {
		op.spec.v = w.value()
		ops[i] = w.gop(s, op.spec)
	}
	return ops
}

// gopSpec says what an operation of a body is.
type gopSpec struct {
	kind int
	a, b *pArray
	h    *pHost   // host copies
	f    *pStream // a fork's stream
	v    int32
	flag bool // host copies: into the array; the temporary: fill it first
}

// Kinds of body operations.
const (
	gFill = iota
	gFillOn
	gAdd
	gTwo
	gInc2
	gCopy
	gHost
	gTemp
	gFork
	gKinds
)

// spec is a random operation on stream s.
func (w *stressWorker) spec(s *pStream) gopSpec {
	sp := gopSpec{kind: w.pick(gKinds), a: w.live(), b: w.live(), v: w.value(), flag: w.pick(2) == 0}
	switch sp.kind {
	case gTwo, gCopy:
		if sp.a == sp.b {
			sp.kind = gInc2
		}
	case gHost:
		if sp.h = w.liveHost(); sp.h == nil || sp.h.closed {
			sp.kind = gTemp
		}
	case gFork:
		if sp.f = w.own(s); sp.f == nil {
			sp.kind = gFill
		}
	}
	return sp
}

// gop builds operation sp on stream s.
func (w *stressWorker) gop(s *pStream, sp gopSpec) gop {
	a, b, v, k := sp.a, sp.b, sp.v, &w.r.k
	op := gop{spec: sp, arrays: []*pArray{a}}
	switch sp.kind {
	case gFill:
		op.desc = fmt.Sprintf("fill(%s, %d)", a.name, v)
		op.enqueue = func() error { return k.fill.LaunchOn(s.s, a.a, v) }
		op.apply = func() { w.kernel(func() { a.set(v) }, a) }
	case gFillOn:
		op.desc = fmt.Sprintf("%s.FillOn(%d)", a.name, v)
		op.enqueue = func() error { return a.a.FillOn(s.s, v) }
		op.apply = func() { w.kernel(func() { a.set(v) }, a) }
	case gAdd:
		op.desc, op.arrays = fmt.Sprintf("add(%s, %s)", a.name, b.name), []*pArray{a, b}
		op.enqueue = func() error { return k.add.LaunchOn(s.s, a.a, b.a) }
		op.apply = func() { w.kernel(func() { addInto(b, a) }, b) }
	case gTwo:
		op.desc, op.arrays = fmt.Sprintf("two(%s, %s, %d)", a.name, b.name, v), []*pArray{a, b}
		op.enqueue = func() error { return k.two.LaunchOn(s.s, a.a, b.a, v) }
		op.apply = func() { w.kernel(func() { a.set(v); b.set(2 * v) }, a, b) }
	case gInc2:
		op.desc = "inc2(" + a.name + ")"
		op.enqueue = func() error { return k.inc2.LaunchOn(s.s, a.a) }
		op.apply = func() { w.kernel(func() { addConst(a, 2) }, a) }
	case gCopy:
		op.desc, op.arrays = fmt.Sprintf("%s.CopyFromOn(%s)", b.name, a.name), []*pArray{a, b}
		op.enqueue = func() error { return b.a.CopyFromOn(s.s, a.a) }
		op.apply = func() { copy(b.want, a.want); b.known = a.known }
	case gHost:
		h := sp.h
		op.hosts = []*pHost{h}
		if sp.flag {
			op.desc = fmt.Sprintf("%s.CopyFromHostOn(%s)", a.name, h.name)
			op.enqueue = func() error { return a.a.CopyFromHostOn(s.s, h.h) }
			op.apply = func() { copy(a.want, h.want); a.known = h.known }
		} else {
			op.desc = fmt.Sprintf("%s.CopyToHostOn(%s)", a.name, h.name)
			op.enqueue = func() error { return a.a.CopyToHostOn(s.s, h.h) }
			op.apply = func() { copy(h.want, a.want); h.known = a.known }
		}
	case gTemp:
		// Memory of the graph: allocated, zeroed, maybe filled, copied
		// out and freed by every replay.
		fillTmp := sp.flag
		op.desc = fmt.Sprintf("tmp := NewNdarrayOn; fill %v %d; %s.CopyFromOn(tmp); tmp.Close", fillTmp, v, a.name)
		op.enqueue = func() error {
			tmp, err := NewNdarrayOn[int32](s.s, w.n)
			if err != nil {
				return err
			}
			var errs []error
			if fillTmp {
				errs = append(errs, tmp.FillOn(s.s, v))
			}
			return errors.Join(append(errs, a.a.CopyFromOn(s.s, tmp), tmp.Close())...)
		}
		op.apply = func() {
			if !fillTmp {
				a.set(0)
			} else {
				w.kernel(func() { a.set(v) }, a)
			}
		}
	case gFork:
		// A fork onto another stream of the worker, joined back.
		f := sp.f
		op.desc = fmt.Sprintf("fork to %s: fill(%s, %d); join", f.name, a.name, v)
		op.enqueue = func() error {
			return errors.Join(f.s.WaitStream(s.s), k.fill.LaunchOn(f.s, a.a, v), s.s.WaitStream(f.s))
		}
		op.apply = func() { w.kernel(func() { a.set(v) }, a) }
	}
	return op
}

// operands are the arrays and host arrays a body uses.
func operands(body []gop) ([]*pArray, []*pHost) {
	var arrays []*pArray
	var hosts []*pHost
	for _, op := range body {
		for _, a := range op.arrays {
			if !slices.Contains(arrays, a) {
				arrays = append(arrays, a)
			}
		}
		for _, h := range op.hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return arrays, hosts
}

func describeBody(body []gop) string {
	var d []string
	for _, op := range body {
		d = append(d, op.desc)
	}
	return strings.Join(d, "; ")
}

// capture runs fn (g.Capture or g.Update) with body: the body's arrays
// are ordered on s first, as a capture cannot wait for work outside it.
// Each operation must succeed. It reports whether the capture did; one
// that fails may only have been refused by another worker.
func (w *stressWorker) capture(call string, s *pStream, body []gop, fn func(func() error) error) bool {
	arrays, hosts := operands(body)
	w.orderAll(s, arrays, hosts)
	call = fmt.Sprintf("%s on %s [%s]", call, s.name, describeBody(body))
	w.r.shared.pcapMu.RLock()
	defer w.r.shared.pcapMu.RUnlock()
	err := fn(func() error {
		for _, op := range body {
			w.expect("in "+call+": "+op.desc, op.enqueue())
		}
		return nil
	})
	return w.expect(call, err, ErrCapturing)
}

func (w *stressWorker) opCapture() {
	s := w.own(nil)
	if s == nil {
		return
	}
	body := w.body(s)
	if body == nil {
		return
	}
	var g *Graph
	if w.capture("Capture", s, body, func(fn func() error) (err error) {
		g, err = s.s.Capture(fn)
		return err
	}) {
		w.graphs = append(w.graphs, &pGraph{name: w.name("g"), g: g, origin: s, body: body})
	}
}

// opCaptureRefused makes a call a capture cannot hold inside one: the
// call and the capture fail with ErrCapturing, and nothing runs.
func (w *stressWorker) opCaptureRefused() {
	s := w.own(nil)
	if s == nil {
		return
	}
	body := w.body(s)
	if body == nil {
		return
	}
	a := body[0].arrays[0]
	refused := []struct {
		name string
		call func() error
	}{
		{"Synchronize of the capturing stream", s.s.Synchronize},
		{"Query of the capturing stream", func() error { _, err := s.s.Query(); return err }},
		{"ToSlice of an array the capture uses", func() error { _, err := a.a.ToSlice(); return err }},
		{"a launch with a Go slice", func() error { return w.r.k.fill.LaunchOn(s.s, make([]int32, w.n), int32(1)) }},
		{"Close of the capturing stream", s.s.Close},
	}[w.pick(5)]
	arrays, hosts := operands(body)
	w.orderAll(s, arrays, hosts)
	call := fmt.Sprintf("Capture on %s [%s; %s]", s.name, describeBody(body), refused.name)
	w.r.shared.pcapMu.RLock()
	defer w.r.shared.pcapMu.RUnlock()
	g, err := s.s.Capture(func() error {
		for _, op := range body {
			w.expect("in "+call+": "+op.desc, op.enqueue())
		}
		err := refused.call()
		w.expect("in "+call+": "+refused.name, err, ErrCapturing)
		if err == nil && w.checking() { // a closed Program's Close returns nil
			w.fail("%s: succeeded inside a capture", refused.name)
		}
		return nil
	})
	if w.expect(call, err, ErrCapturing) && w.checking() {
		g.Close()
		w.fail("%s: the capture succeeded", call)
	}
}

func (w *stressWorker) graph() *pGraph {
	if len(w.graphs) == 0 {
		return nil
	}
	return w.graphs[w.pick(len(w.graphs))]
}

// opReplay replays a graph on any stream. Once the graph or one of its
// arrays is closed the replay must fail with ErrClosed: succeeding would
// run on freed memory.
func (w *stressWorker) opReplay() {
	g, s := w.graph(), w.stream()
	if g == nil {
		return
	}
	arrays, hosts := operands(g.body)
	closed := g.closed || anyClosed(arrays, hosts)
	if !closed {
		w.orderAll(s, arrays, hosts)
	}
	call := fmt.Sprintf("%s.LaunchOn [%s]", g.name, describeBody(g.body))
	if !w.outcome(call, s, closed, g.g.LaunchOn(s.s)) {
		return
	}
	for _, op := range g.body {
		op.apply()
	}
	for _, a := range arrays {
		a.last = s
	}
	for _, h := range hosts {
		h.last = s
	}
}

func (w *stressWorker) opUpdate() {
	g := w.graph()
	if g == nil {
		return
	}
	body := w.body(g.origin)
	if same := w.sameShape(g.origin, g.body); same != nil && w.pick(2) == 0 {
		body = same // updated in place
	}
	if body == nil {
		return
	}
	if g.closed || g.origin.closed {
		err := g.g.Update(func() error { return nil })
		w.expect(g.name+".Update of a closed graph or on a closed stream", err, ErrClosed)
		if err == nil {
			w.fail("%s.Update succeeded on a closed graph or stream", g.name)
		}
		return
	}
	if w.capture(g.name+".Update", g.origin, body, g.g.Update) {
		g.body = body
	}
}

func (w *stressWorker) opCloseGraph() {
	if g := w.graph(); g != nil && w.expect("Close "+g.name, g.g.Close()) {
		g.closed = true
	}
}
