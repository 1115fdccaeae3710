package qd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/quadrants-go/qd/internal/backend"
)

// A stream's capture state and the work enqueued on it.
//
// A stream's capture state (streamCore.cap: the capture it records into,
// or nil) changes only with its gate held exclusively: when a capture
// begins on it, when it joins one (by waiting for a point of the capture),
// when the capture ends, and when the stream closes. Every operation that
// reads the state and then enqueues work on the stream holds the gate
// shared from the read through the enqueue (enter and exit), so its work
// is wholly inside the capture it read, or wholly outside every capture:
// qd's record of the stream and the backend's stream change together. (A
// launch that read "no capture" while another goroutine began one was
// recorded into the graph by the backend but not by qd, and its replays
// ran on freed memory.)
//
// An operation holds at most one stream's gate at a time. The exception is
// a stream-parallel launch: it holds its launch stream's gate while the
// pooled streams it borrowed, which nothing else uses, join its capture.
// So the end of a capture, which holds the gates of all its streams at once
// while the backend ends it (capture.end), cannot deadlock with an
// operation: an operation waits for at most one gate, and holds none that
// the end waits for while it does.
//
// An operation that involves two streams (one stream waiting for another's
// work, a free ordered after the streams that used the memory) takes the
// other stream's point under that stream's gate (pointOn: an event
// recorded there, and the capture state it marks), lets the gate go, then
// waits for the point under its own stream's gate (waitPoint), as
// Event.Record and Stream.WaitEvent do for the user.

// enter holds sc for an operation that enqueues work on it, as above, and
// returns the capture sc records into (nil outside every capture); ok is
// false when sc is closed. exit ends the hold; Close waits for the holds
// in progress.
func (sc *streamCore) enter() (cp *capture, ok bool) {
	sc.gate.RLock()
	if sc.closed.Load() {
		sc.gate.RUnlock()
		return nil, false
	}
	return sc.cap.Load(), true
}

func (sc *streamCore) exit() { sc.gate.RUnlock() }

// enterAlone is enter for an operation that enqueues several pieces of work
// that must follow each other with nothing between them (the tasks of one
// launch): it holds the gate exclusively, so no other operation enqueues on
// sc meanwhile. exitAlone ends the hold.
func (sc *streamCore) enterAlone() (cp *capture, ok bool) {
	sc.gate.Lock()
	if sc.closed.Load() {
		sc.gate.Unlock()
		return nil, false
	}
	return sc.cap.Load(), true
}

func (sc *streamCore) exitAlone() { sc.gate.Unlock() }

// pointOn records a pooled event of o's Program on o, marking the work
// enqueued on o so far, under o's gate. The caller gives the event back
// with o.p.putEvent(e, m.capture()) once its wait is enqueued.
func (o *streamCore) pointOn() (e backend.Event, m *capMark, err error) {
	cp, ok := o.enter()
	if !ok {
		return nil, nil, closedErr("stream")
	}
	defer o.exit()
	return o.pointHeld(cp)
}

// pointHeld is pointOn for a caller that holds o's gate (o in capture cp),
// or that owns o (a stream-parallel launch's pooled stream).
func (o *streamCore) pointHeld(cp *capture) (backend.Event, *capMark, error) {
	e, err := o.p.evpool.Get()
	if err != nil {
		return nil, nil, err
	}
	m := o.mark()
	if err := e.Record(o.b); err != nil {
		o.p.evpool.Put(e)
		return nil, nil, failed(cp, err)
	}
	return e, m, nil
}

// waitPoint enqueues on sc a wait for e, an event of sc's Program at a
// point that m marks (nil: a point outside every capture), with sc's capture state settled: sc is
// outside every capture, or ordered within the capture m marks, or it
// joins that capture (its gate held exclusively, with the wait inside, so that
// qd's record of sc and the backend's stream change together), or the wait
// is refused because it would cross a capture's boundary. call names the
// user's call for messages.
func (sc *streamCore) waitPoint(m *capMark, call string, e backend.Event) error {
	cs, ok := sc.enter()
	if !ok {
		return closedErr("stream")
	}
	if cs == nil && m != nil && !m.c.isEnded() {
		sc.exit()
		return m.c.join(sc, m.clock, call, e)
	}
	defer sc.exit()
	return sc.waitHeld(cs, m, call, e)
}

// waitHeld is waitPoint for a caller that holds sc's gate and found sc in
// capture cs, where sc does not join a capture: it is in one (cs), or m
// marks a point outside every capture or of a capture that has ended.
func (sc *streamCore) waitHeld(cs *capture, m *capMark, call string, e backend.Event) error {
	switch {
	case m == nil && cs == nil:
		return sc.b.WaitEvent(e)
	case m == nil:
		return cs.refuse(call, fmt.Sprintf("%s would wait for work outside the capture; a graph can only wait for its own work: order the streams before Capture, or record the event inside it", sc.describe()))
	case m.c.isEnded():
		return fmt.Errorf("qd: %w: %s: the event was last recorded inside a capture that has ended (on %s): it marks a point of a graph, not of a stream; record it again", ErrCapturing, call, m.c.origin.describe())
	case cs == m.c:
		m.c.merge(sc, m.clock)
		return failed(cs, sc.b.WaitEvent(e))
	}
	cs.refuse(call, fmt.Sprintf("%s would wait for an event recorded in another capture (on %s)", sc.describe(), m.c.origin.describe()))
	return m.c.refuse(call, fmt.Sprintf("%s, which captures on %s, would wait for an event of this capture", sc.describe(), cs.origin.describe()))
}

// join makes s wait for the work enqueued so far on o, a stream of s's
// Program ([Stream.WaitStream]): o's point, then s's wait for it.
func (p *Program) join(s, o *streamCore, call string) error {
	e, m, err := o.pointOn()
	if err != nil {
		return err
	}
	defer p.putEvent(e, m.capture())
	return failed(m.capture(), s.waitPoint(m, call, e))
}

// joinHeld is join for a stream-parallel launch: s is its launch stream,
// whose gate it holds (s in capture cs), and o a stream it borrowed, which
// nothing else uses (so o's point needs no gate).
func (p *Program) joinHeld(s *streamCore, cs *capture, o *streamCore, call string) error {
	e, m, err := o.pointHeld(o.cap.Load())
	if err != nil {
		return err
	}
	defer p.putEvent(e, m.capture())
	return failed(m.capture(), s.waitHeld(cs, m, call, e))
}

// usePoint is the point a free of memory that u used must come after: an
// event recorded on u, or, while u captures, u's work from before the
// capture (the captured work runs only at replays, which refuse memory
// that is closed). A closed u has none: its Close waits for its work. The
// point holds u (and so the event pool of u's Program, which may be
// another Program) until release.
type usePoint struct {
	s  *streamCore
	e  backend.Event // nil: no point
	cp *capture      // e is cp's pre event of s (retained), else pooled
}

// pointOfUse takes u's point. closing reports that u is being closed
// (or is closed): it has no point, and the caller waits for u.gone,
// which its Close closes once u's work is done.
func pointOfUse(u *streamCore) (pt usePoint, closing bool, err error) {
	if !u.hold() {
		return usePoint{}, true, nil
	}
	cs, ok := u.enter()
	if !ok {
		u.inflight.leave()
		return usePoint{}, true, nil
	}
	defer u.exit()
	if cs != nil {
		return usePoint{s: u, e: cs.retainPre(u), cp: cs}, false, nil
	}
	e, _, err := u.pointHeld(nil)
	if err != nil {
		u.inflight.leave()
		return usePoint{}, false, err
	}
	return usePoint{s: u, e: e}, false, nil
}

// pointsOf takes the points of the streams us, each on its own stream
// (pointOfUse). A stream being closed has none; it is waited for holding
// no point, since each point holds its stream and so that stream's Close:
// two array Closes racing the Closes of two streams they both used would
// otherwise each wait for a stream the other holds.
func pointsOf(us []*streamCore) ([]usePoint, error) {
	for {
		var pts []usePoint
		var errs []error
		var gone *streamCore
		for _, u := range us {
			pt, closing, err := pointOfUse(u)
			if closing {
				gone = u
				break
			}
			if err != nil {
				errs = append(errs, err)
			} else if pt.e != nil {
				pts = append(pts, pt)
			}
		}
		if gone == nil {
			return pts, errors.Join(errs...)
		}
		for _, pt := range pts {
			pt.release()
		}
		<-gone.gone
		us = slices.DeleteFunc(slices.Clone(us), func(u *streamCore) bool { return u == gone })
	}
}

// release gives the point's event back and lets u go.
func (pt usePoint) release() {
	if pt.s == nil {
		return
	}
	if pt.cp != nil {
		pt.cp.unretainPre()
	} else {
		pt.s.p.evpool.Put(pt.e)
	}
	pt.s.inflight.leave()
}

// waitHost blocks until the point is reached.
func (pt usePoint) waitHost() error {
	if pt.e == nil {
		return nil
	}
	return pt.e.Synchronize()
}

// usePoints are the points of the streams that used st's memory, other
// than skip, and the uses they stand for (forget them once the points are
// waited for, or unwait).
func (st *storage) usePoints(skip *streamCore) ([]usePoint, []use, error) {
	seen := st.snapshot()
	var us []*streamCore
	for _, u := range seen {
		if u.s != skip {
			us = append(us, u.s)
		}
	}
	pts, err := pointsOf(us)
	return pts, seen, err
}

// freeAfter frees st's memory on sc, after every point of pts, if sc is
// open and outside every capture; done is false, and nothing enqueued,
// otherwise. home is the stream whose point pts left out: sc orders
// itself after it by stream order when sc is home, and waits for it
// otherwise.
func (sc *streamCore) freeAfter(st *storage, pts []usePoint) (done bool, err error) {
	cs, ok := sc.enter()
	if !ok {
		return false, nil
	}
	defer sc.exit()
	if cs != nil {
		return false, nil
	}
	var errs []error
	for _, pt := range pts {
		if pt.s != sc {
			errs = append(errs, sc.waitEventOf(pt.e, pt.s.p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return true, st.buf.FreeOn(sc.b)
}
