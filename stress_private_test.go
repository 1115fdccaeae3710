package qd

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// The private world of a stress worker (stress_test.go): objects only
// this worker uses, so that the model knows every result exactly. The
// worker orders a stream after the stream that last used an array before
// the stream uses it, as a correct program must (order); host reads and
// Close need no such care. Its streams are its own, the Program's default
// stream (which every worker shares), or the round's victim streams,
// which other workers close at any time: there a call either happens
// (nil) or does not (ErrClosed), and the model follows what it returned.
//
// Over the fake driver kernels do not run, so an array a kernel wrote is
// no longer known until a copy writes it whole; copies and fills of memory
// (zero fills included) do run there and are checked.

// private is a worker's own objects and their model.
type private struct {
	n       int // the length of every private array
	arrays  []*pArray
	hosts   []*pHost
	streams []*pStream // [0] is the default stream
	events  []*pEvent
	graphs  []*pGraph
	victims map[*Stream]*pStream
	names   int
	sink    *HostArray[int32] // where the worker copies shared arrays (stress_shared_test.go)
}

type pArray struct {
	name   string
	a      *Ndarray[int32]
	want   []int32
	known  bool // want is what the array holds
	closed bool
	last   *pStream // the stream that last used it
}

type pHost struct {
	name   string
	h      *HostArray[int32]
	want   []int32
	known  bool
	closed bool
	last   *pStream
}

type pStream struct {
	name   string
	s      *Stream
	def    bool // the default stream: never closed, never captures
	victim bool // another worker may close it
	closed bool // known to be closed
	// forked: it joined a capture on S; then the host waits of other
	// workers for the shared arrays record events on it.
	forked bool
}

type pEvent struct {
	name     string
	e        *Event
	timing   bool
	recorded bool // and waited for since
	closed   bool
}

type pGraph struct {
	name   string
	g      *Graph
	origin *pStream
	body   []gop
	closed bool
}

// gop is one operation of a graph's body: what it enqueues in the capture
// and what each replay does to the model (stress_graphs_test.go).
type gop struct {
	spec    gopSpec
	desc    string
	arrays  []*pArray
	hosts   []*pHost
	enqueue func() error
	apply   func()
}

func (w *stressWorker) name(kind string) string {
	w.names++
	return fmt.Sprintf("%s%d.%d", kind, w.id, w.names)
}

func (w *stressWorker) setup() {
	w.n = []int{1, 7, 64, 1000}[w.pick(4)]
	w.victims = map[*Stream]*pStream{}
	w.streams = []*pStream{{name: "default", s: w.r.p.DefaultStream(), def: true}}
	w.opNewStream()
	w.opNewArray()
	w.setupShared()
}

func (w *stressWorker) value() int32 { return int32(w.pick(1000)) }

func (a *pArray) set(v int32) {
	for i := range a.want {
		a.want[i] = v
	}
	a.known = true
}

// kernel applies a kernel's effect to the model where kernels run, and
// forgets what outs hold where they do not.
func (w *stressWorker) kernel(apply func(), outs ...*pArray) {
	if w.r.runs {
		apply()
		return
	}
	for _, a := range outs {
		a.known = false
	}
}

// live is a random open array, nil if none; anyArray may be a closed one
// (a use after Close), one time in eight.
func (w *stressWorker) live() *pArray {
	var open []*pArray
	for _, a := range w.arrays {
		if !a.closed {
			open = append(open, a)
		}
	}
	if len(open) == 0 {
		return nil
	}
	return open[w.pick(len(open))]
}

func (w *stressWorker) anyArray() *pArray {
	if a := w.live(); a != nil && w.pick(8) != 0 {
		return a
	}
	return w.arrays[w.pick(len(w.arrays))]
}

// stream picks where a call runs: the worker's own streams (maybe closed),
// the default stream, or a victim stream.
func (w *stressWorker) stream() *pStream {
	if w.pick(6) == 0 {
		return w.victim(w.r.shared.victims[w.pick(len(w.r.shared.victims))].Load())
	}
	return w.streams[w.pick(len(w.streams))]
}

// own is an open stream of the worker's own (for captures), nil if none;
// not is one to leave out.
func (w *stressWorker) own(not *pStream) *pStream {
	var open []*pStream
	for _, s := range w.streams {
		if !s.def && !s.closed && s != not {
			open = append(open, s)
		}
	}
	if len(open) == 0 {
		return nil
	}
	return open[w.pick(len(open))]
}

func (w *stressWorker) victim(s *Stream) *pStream {
	v := w.victims[s]
	if v == nil {
		v = &pStream{name: fmt.Sprintf("victim %#x", s.Handle()), s: s, victim: true}
		w.victims[s] = v
	}
	return v
}

// victimClosed reports whether err says that victim stream v was closed,
// and if so waits for its Close, which waits for its work.
func (w *stressWorker) victimClosed(v *pStream, err error) bool {
	if !v.victim || !errors.Is(err, ErrClosed) || !v.s.c.closed.Load() {
		return false
	}
	w.expect("Close of "+v.name+", closed by another worker (waits for it)", w.closeStream(v.s))
	v.closed = true
	return true
}

// order makes s wait for o, the last stream to use what s will use, by
// WaitStream or by an event. A victim stream closed meanwhile needs no
// wait (its Close waits for its work), or is closed itself: the call on it
// will fail.
func (w *stressWorker) order(s, o *pStream) {
	if o == nil || o == s || o.closed || s.closed {
		return
	}
	call := fmt.Sprintf("WaitStream(%s, %s)", s.name, o.name)
	var err error
	if e := w.openEvent(); e == nil || w.pick(2) == 0 {
		err = s.s.WaitStream(o.s)
	} else {
		call = fmt.Sprintf("%s.Record(%s); %s.WaitEvent", e.name, o.name, s.name)
		if err = e.e.Record(o.s); err == nil {
			e.recorded = false
			err = s.s.WaitEvent(e.e)
		}
	}
	if err != nil && (w.victimClosed(o, err) || w.victimClosed(s, err)) {
		return
	}
	w.expect(call, err)
}

func (w *stressWorker) orderAll(s *pStream, arrays []*pArray, hosts []*pHost) {
	for _, a := range arrays {
		if !a.closed {
			w.order(s, a.last)
		}
	}
	for _, h := range hosts {
		if !h.closed {
			w.order(s, h.last)
		}
	}
}

// outcome checks the error of a call on s: ErrClosed when s or an operand
// is closed, nil or ErrClosed on a victim stream, nil otherwise. It reports
// whether the call happened.
func (w *stressWorker) outcome(call string, s *pStream, closedOperand bool, err error) bool {
	call += " on " + s.name
	if closedOperand || s.closed {
		if err == nil {
			w.fail("%s: succeeded with a closed stream or operand", call)
		}
		w.expect(call, err, ErrClosed)
		return false
	}
	if err != nil && w.victimClosed(s, err) {
		w.note(call + ": ErrClosed (victim closed)")
		return false
	}
	return w.expect(call, err)
}

func anyClosed(arrays []*pArray, hosts []*pHost) bool {
	return slices.ContainsFunc(arrays, func(a *pArray) bool { return a.closed }) ||
		slices.ContainsFunc(hosts, func(h *pHost) bool { return h.closed })
}

// enqueue runs a stream operation of the model: ordered, checked, and
// applied if it happened.
func (w *stressWorker) enqueue(call string, s *pStream, arrays []*pArray, hosts []*pHost, do func() error, apply func()) {
	closed := anyClosed(arrays, hosts)
	if !closed {
		w.orderAll(s, arrays, hosts)
	}
	if !w.outcome(call, s, closed, do()) {
		return
	}
	apply()
	for _, a := range arrays {
		a.last = s
	}
	for _, h := range hosts {
		h.last = s
	}
}

func (w *stressWorker) addArray(a *Ndarray[int32], home *pStream) {
	w.arrays = append(w.arrays, &pArray{name: w.name("a"), a: a, want: make([]int32, w.n), known: true, last: home})
}

func (w *stressWorker) opNewArray() {
	a, err := NewNdarray[int32](w.r.p, w.n)
	if w.expect("NewNdarray", err) {
		w.addArray(a, nil)
	}
}

func (w *stressWorker) opNewArrayOn() {
	s := w.stream()
	a, err := NewNdarrayOn[int32](s.s, w.n)
	if w.outcome("NewNdarrayOn", s, false, err) {
		w.addArray(a, s)
	}
}

func (w *stressWorker) opCloseArray() {
	a := w.anyArray()
	if w.expect("Close "+a.name, a.a.Close()) {
		a.closed = true
	}
}

func (w *stressWorker) opFill() {
	a, s, v := w.anyArray(), w.stream(), w.value()
	w.enqueue(fmt.Sprintf("fill(%s, %d)", a.name, v), s, []*pArray{a}, nil,
		func() error { return w.r.k.fill.LaunchOn(s.s, a.a, v) },
		func() { w.kernel(func() { a.set(v) }, a) })
}

func (w *stressWorker) opAdd() {
	a, b, s := w.anyArray(), w.anyArray(), w.stream()
	w.enqueue(fmt.Sprintf("add(%s, %s)", a.name, b.name), s, []*pArray{a, b}, nil,
		func() error { return w.r.k.add.LaunchOn(s.s, a.a, b.a) },
		func() { w.kernel(func() { addInto(b, a) }, b) })
}

func addInto(b, a *pArray) {
	for i := range b.want {
		b.want[i] += a.want[i]
	}
	b.known = b.known && a.known
}

func (w *stressWorker) opTwo() {
	a, b, s, v := w.anyArray(), w.anyArray(), w.stream(), w.value()
	if a == b {
		return // two groups writing one array would race
	}
	w.enqueue(fmt.Sprintf("two(%s, %s, %d)", a.name, b.name, v), s, []*pArray{a, b}, nil,
		func() error { return w.r.k.two.LaunchOn(s.s, a.a, b.a, v) },
		func() { w.kernel(func() { a.set(v); b.set(2 * v) }, a, b) })
}

func (w *stressWorker) opInc2() {
	a, s := w.anyArray(), w.stream()
	w.enqueue("inc2("+a.name+")", s, []*pArray{a}, nil,
		func() error { return w.r.k.inc2.LaunchOn(s.s, a.a) },
		func() { w.kernel(func() { addConst(a, 2) }, a) })
}

func addConst(a *pArray, v int32) {
	for i := range a.want {
		a.want[i] += v
	}
}

// opSlice launches with a Go slice: the launch waits for the kernel and
// copies back.
func (w *stressWorker) opSlice() {
	s, v := w.stream(), w.value()
	x := make([]int32, w.n)
	call := fmt.Sprintf("fill(Go slice, %d)", v)
	if w.outcome(call, s, false, w.r.k.fill.LaunchOn(s.s, x, v)) && w.r.runs && w.checking() &&
		slices.ContainsFunc(x, func(e int32) bool { return e != v }) {
		w.fail("%s: the slice holds %v", call, x[:min(8, len(x))])
	}
}

func (w *stressWorker) opFillOn() {
	a, s, v := w.anyArray(), w.stream(), w.value()
	w.enqueue(fmt.Sprintf("%s.FillOn(%d)", a.name, v), s, []*pArray{a}, nil,
		func() error { return a.a.FillOn(s.s, v) },
		func() { w.kernel(func() { a.set(v) }, a) })
}

func (w *stressWorker) opCopyFromOn() {
	a, b, s := w.anyArray(), w.anyArray(), w.stream()
	if a == b {
		return
	}
	w.enqueue(fmt.Sprintf("%s.CopyFromOn(%s)", b.name, a.name), s, []*pArray{a, b}, nil,
		func() error { return b.a.CopyFromOn(s.s, a.a) },
		func() { copy(b.want, a.want); b.known = a.known })
}

func (w *stressWorker) opCopyFromHost() {
	a := w.anyArray()
	src := make([]int32, w.n)
	for i := range src {
		src[i] = w.value()
	}
	err := a.a.CopyFromHost(src)
	if a.closed {
		w.expect("CopyFromHost into closed "+a.name, err, ErrClosed)
		return
	}
	if w.expect("CopyFromHost into "+a.name, err) {
		copy(a.want, src)
		a.known = true
	}
}

func (w *stressWorker) opRead() {
	a := w.anyArray()
	var got []int32
	var err error
	call := "ToSlice of " + a.name
	if w.pick(2) == 0 {
		got, err = a.a.ToSlice()
	} else {
		call = "CopyToHost of " + a.name
		got = make([]int32, w.n)
		err = a.a.CopyToHost(got)
	}
	if a.closed {
		w.expect(call+" (closed)", err, ErrClosed)
		return
	}
	if w.expect(call, err) {
		w.same(call, got, a.want, a.known)
	}
}

// same checks contents against the model.
func (w *stressWorker) same(call string, got, want []int32, known bool) {
	if known && w.checking() && !slices.Equal(got, want) {
		w.fail("%s = %v, want %v", call, got[:min(8, len(got))], want[:min(8, len(want))])
	}
}

func (w *stressWorker) liveHost() *pHost {
	for _, i := range w.rng.Perm(len(w.hosts)) {
		if !w.hosts[i].closed || w.pick(8) == 0 {
			return w.hosts[i]
		}
	}
	return nil
}

func (w *stressWorker) opNewHost() {
	h, err := NewHostArray[int32](w.r.p, w.n)
	if w.expect("NewHostArray", err) {
		w.hosts = append(w.hosts, &pHost{name: w.name("h"), h: h, want: make([]int32, w.n), known: true})
	}
}

func (w *stressWorker) opHostIn() {
	a, h, s := w.anyArray(), w.liveHost(), w.stream()
	if h == nil {
		return
	}
	w.enqueue(fmt.Sprintf("%s.CopyFromHostOn(%s)", a.name, h.name), s, []*pArray{a}, []*pHost{h},
		func() error { return a.a.CopyFromHostOn(s.s, h.h) },
		func() { copy(a.want, h.want); a.known = h.known })
}

func (w *stressWorker) opHostOut() {
	a, h, s := w.anyArray(), w.liveHost(), w.stream()
	if h == nil {
		return
	}
	w.enqueue(fmt.Sprintf("%s.CopyToHostOn(%s)", a.name, h.name), s, []*pArray{a}, []*pHost{h},
		func() error { return a.a.CopyToHostOn(s.s, h.h) },
		func() { copy(h.want, a.want); h.known = a.known })
}

// opHostData reads a host array's memory, waiting for its copies, and
// sometimes writes it.
func (w *stressWorker) opHostData() {
	h := w.liveHost()
	if h == nil {
		return
	}
	d, err := h.h.Data()
	if h.closed {
		w.expect("Data of closed "+h.name, err, ErrClosed)
		return
	}
	if !w.expect("Data of "+h.name, err) {
		return
	}
	w.same("Data of "+h.name, d, h.want, h.known)
	if w.pick(2) == 0 {
		for i := range d {
			d[i] = w.value()
		}
		copy(h.want, d)
		h.known = true
	}
}

func (w *stressWorker) opCloseHost() {
	if h := w.liveHost(); h != nil && w.expect("Close "+h.name, h.h.Close()) {
		h.closed = true
	}
}

func (w *stressWorker) opNewStream() {
	var opts []StreamOption
	if w.pick(3) == 0 {
		opts = append(opts, WithPriority(-1))
	}
	s, err := w.r.p.NewStream(opts...)
	if w.expect("NewStream", err) {
		w.streams = append(w.streams, &pStream{name: w.name("s"), s: s})
	}
}

func (w *stressWorker) opCloseStream() {
	if s := w.own(nil); s != nil && w.expect("Close "+s.name, w.closeStream(s.s)) {
		s.closed = true
	}
}

// opSyncStream waits for a stream. Only this worker enqueues on its own
// streams (but those that joined a capture on S: stress_shared_test.go),
// so one is idle after the wait; others keep the default stream and the
// victims busy, which SynchronizeContext would chase.
func (w *stressWorker) opSyncStream() {
	s := w.stream()
	if s.def || s.victim || s.closed || w.pick(2) == 0 {
		w.outcome("Synchronize", s, false, s.s.Synchronize())
		return
	}
	if w.pick(2) == 0 {
		w.outcome("SynchronizeContext", s, false, s.s.SynchronizeContext(context.Background()))
	} else if !w.outcome("Synchronize", s, false, s.s.Synchronize()) {
		return
	}
	done, err := s.s.Query()
	if w.expect("Query of "+s.name+" after a wait", err) && !done && !s.forked {
		w.fail("Query of %s after a wait: not done, and only this worker enqueues on it", s.name)
	}
}

func (w *stressWorker) opNewEvent() {
	timing := w.pick(2) == 0
	var opts []EventOption
	if timing {
		opts = append(opts, WithTiming())
	}
	e, err := w.r.p.NewEvent(opts...)
	if w.expect("NewEvent", err) {
		w.events = append(w.events, &pEvent{name: w.name("e"), e: e, timing: timing})
	}
}

// openEvent is an open event, made if there is none; nil if none can be
// made (the Program is closing).
func (w *stressWorker) openEvent() *pEvent {
	for _, i := range w.rng.Perm(len(w.events)) {
		if !w.events[i].closed {
			return w.events[i]
		}
	}
	n := len(w.events)
	if w.opNewEvent(); len(w.events) > n {
		return w.events[n]
	}
	return nil
}

// opEvent records an event and waits for it, on the host or on a stream,
// or times two timing events.
func (w *stressWorker) opEvent() {
	e, s := w.openEvent(), w.stream()
	if e == nil {
		return
	}
	if w.pick(4) == 0 {
		e = w.events[w.pick(len(w.events))] // maybe closed
	}
	switch w.pick(4) {
	case 0, 1:
		err := e.e.Record(s.s)
		if !w.outcome(e.name+".Record", s, e.closed, err) {
			return
		}
		e.recorded = false
		// SynchronizeContext racing an early Program.Close deadlocks
		// (defect 107).
		if w.pick(2) == 0 || w.r.closeEarly && !w.r.enabled(107) {
			err = e.e.Synchronize()
		} else {
			err = e.e.SynchronizeContext(context.Background())
		}
		if w.expect(e.name+".Synchronize", err) {
			e.recorded = true
			done, err := e.e.Query()
			if w.expect(e.name+".Query", err) && !done {
				w.fail("%s.Query after Synchronize: not done", e.name)
			}
		}
	case 2:
		w.outcome(s.name+".WaitEvent("+e.name+")", s, e.closed, s.s.WaitEvent(e.e))
	case 3:
		w.opElapsed()
	}
}

// opElapsed records two timing events on a stream of the worker's and
// times them.
func (w *stressWorker) opElapsed() {
	var timed []*pEvent
	for _, e := range w.events {
		if e.timing && !e.closed {
			timed = append(timed, e)
		}
	}
	if len(timed) < 2 {
		w.opNewEvent()
		return
	}
	a, b, s := timed[0], timed[1], w.streams[w.pick(len(w.streams))]
	err := errors.Join(a.e.Record(s.s), b.e.Record(s.s))
	if !w.outcome(fmt.Sprintf("%s, %s.Record", a.name, b.name), s, false, err) {
		return
	}
	a.recorded, b.recorded = false, false
	if !w.expect(b.name+".Synchronize", b.e.Synchronize()) {
		return
	}
	a.recorded, b.recorded = true, true
	d, err := Elapsed(a.e, b.e)
	if w.expect(fmt.Sprintf("Elapsed(%s, %s)", a.name, b.name), err) && d < 0 {
		w.fail("Elapsed(%s, %s) = %v, recorded in this order on one stream", a.name, b.name, d)
	}
}

// opRows fills a view of some rows of an array and reads it back.
func (w *stressWorker) opRows() {
	a := w.anyArray()
	lo := w.pick(w.n)
	hi := lo + 1 + w.pick(w.n-lo)
	view, err := a.a.Rows(lo, hi)
	if a.closed {
		w.expect(fmt.Sprintf("%s.Rows(%d, %d) of a closed array", a.name, lo, hi), err, ErrClosed)
		return
	}
	if !w.expect(fmt.Sprintf("%s.Rows(%d, %d)", a.name, lo, hi), err) {
		return
	}
	s, v := w.stream(), w.value()
	call := fmt.Sprintf("%s.Rows(%d, %d).FillOn(%d)", a.name, lo, hi, v)
	w.enqueue(call, s, []*pArray{a}, nil,
		func() error { return view.FillOn(s.s, v) },
		func() {
			w.kernel(func() {
				for i := lo; i < hi; i++ {
					a.want[i] = v
				}
			}, a)
		})
	got, err := view.ToSlice()
	if w.expect("ToSlice of "+call, err) {
		w.same("ToSlice of "+call, got, a.want[lo:hi], a.known)
	}
	w.expect("Close of "+call, view.Close())
}

func (w *stressWorker) opCloseEvent() {
	if len(w.events) > 0 {
		e := w.events[w.pick(len(w.events))]
		if w.expect("Close "+e.name, e.e.Close()) {
			e.closed = true
		}
	}
}

// finish checks every open private object and closes them all.
func (w *stressWorker) finish() {
	strict := !w.stopped && w.checking()
	closeAll := func(call string, err error) {
		if strict {
			w.expect(call, err)
		} else {
			w.expect(call, err, ErrClosed)
		}
	}
	for _, a := range w.arrays {
		if !a.closed && strict {
			got, err := a.a.ToSlice()
			if w.expect("final ToSlice of "+a.name, err) {
				w.same("final ToSlice of "+a.name, got, a.want, a.known)
			}
		}
	}
	for _, h := range w.hosts {
		if !h.closed && strict {
			d, err := h.h.Data()
			if w.expect("final Data of "+h.name, err) {
				w.same("final Data of "+h.name, d, h.want, h.known)
			}
		}
	}
	for _, g := range w.graphs {
		closeAll("final Close "+g.name, g.g.Close())
	}
	for _, a := range w.arrays {
		closeAll("final Close "+a.name, a.a.Close())
	}
	for _, h := range w.hosts {
		closeAll("final Close "+h.name, h.h.Close())
	}
	for _, e := range w.events {
		closeAll("final Close "+e.name, e.e.Close())
	}
	for _, s := range w.streams[1:] {
		closeAll("final Close "+s.name, w.closeStream(s.s))
	}
	w.finishShared(closeAll)
}
