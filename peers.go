package qd

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// Work between Programs (docs/semantics.md#devices).
//
// A Program drives one device, and a process may open several Programs of
// one backend: one per GPU (WithDevice), or more than one on a device.
// Streams of such Programs are ordered with each other by events
// (Stream.WaitEvent with another Program's event, Stream.WaitStream with
// another Program's stream) and Ndarray.CopyFromOn copies between their
// arrays, a peer copy between two GPUs. Objects of Programs of different
// backends stay foreign (ErrForeign).
//
// No operation takes another Program's lifetime lock: two goroutines working
// across two Programs in opposite directions would otherwise deadlock as
// soon as either Program began to close (a pending writer stops new
// readers). An operation holds the other Program's objects instead: a
// stream by its in-flight count (streamCore.hold), an event likewise, an
// array by a pin. The other Program's Close waits for those holds before it
// releases the object (its Close releases streams, events and arrays before
// the device and the event pool), so what is held, and the event pool of its
// Program, stay alive for the operation. The other Program's Close also
// waits, before freeing an array, for the work of this Program's streams
// that uses it (ndCore.release).

// peerOf checks that an object of q may be used with p's objects in
// operation what: q is p, or a Program of the same backend, which can
// order and copy across its devices. obj names the object for the error.
func (p *Program) peerOf(q *Program, what, obj string) error {
	if q == p {
		return nil
	}
	if q.arch != p.arch {
		return fmt.Errorf("%w: %s: %s belongs to a Program of the %s backend, not %s", ErrForeign, what, obj, q.arch, p.arch)
	}
	if _, ok := p.dev.(backend.Peer); !ok {
		return fmt.Errorf("qd: %s: %s belongs to another Program, and the %s backend cannot order or copy across Programs: %w", what, obj, p.arch, ErrUnsupported)
	}
	return nil
}

// waitEventOf makes work enqueued later on s wait for e, an event of
// Program q: s's own Program, or a Program of the same backend. The caller
// holds s and keeps e alive.
func (sc *streamCore) waitEventOf(e backend.Event, q *Program) error {
	if q == sc.p {
		return sc.b.WaitEvent(e)
	}
	pd, ok := sc.p.dev.(backend.Peer)
	if !ok {
		return fmt.Errorf("qd: the %s backend cannot order a stream after another Program's work: %w", sc.p.arch, ErrUnsupported)
	}
	return pd.WaitPeerEvent(sc.b, e)
}

// hostWaitFor blocks until the work enqueued so far on s is done, for a
// host access named call to the memory t tracks (or for no access: call
// empty); a closed stream is waited for through its Close, which waits for
// its work. For a stream that is capturing it
// waits for the stream's work from before the capture, or, when the
// capture's work uses that memory, refuses call: the data is the graph's,
// and exists only once it runs.
func (sc *streamCore) hostWaitFor(t *tracker, call string) error {
	if !sc.hold() {
		<-sc.gone
		return nil
	}
	defer sc.inflight.leave()
	sc.gate.RLock()
	if c := sc.cap.Load(); c != nil {
		defer sc.gate.RUnlock()
		if call != "" && t != nil && c.usedTracker(t) {
			return c.refuse(call, "the array is used by the capture's work, which runs only when the graph is launched; access it after Capture returns")
		}
		return syncPre(c, sc)
	}
	q := sc.p
	e, err := q.evpool.Get()
	if err != nil {
		sc.gate.RUnlock()
		return err
	}
	defer q.evpool.Put(e)
	err = e.Record(sc.b)
	sc.gate.RUnlock()
	if err != nil {
		return err
	}
	return e.Synchronize()
}

// refuseAcross refuses, with [ErrCapturing], operation what on s that
// involves another Program, when s is capturing (cs, read under s's gate)
// or other (the capture the other side is a point of, if any) is: graphs do
// not span Programs yet (docs/multigpu.md). A capture in progress fails
// with the refusal.
func refuseAcross(s *streamCore, cs, other *capture, what string) error {
	if cs != nil {
		return cs.refuse(what, "it involves another Program, and graphs do not span Programs yet")
	}
	if other == nil {
		return nil
	}
	if other.isEnded() {
		return fmt.Errorf("qd: %w: %s: the event was last recorded inside a capture that has ended (on %s): it marks a point of a graph, not of a stream; record it again", ErrCapturing, what, other.origin.describe())
	}
	return other.refuse(what, s.describe()+", a stream of another Program, would join the capture, and graphs do not span Programs yet")
}

// waitPeerEvent is [Stream.WaitEvent] with an event of another Program; the
// caller holds s's Program. The event's mutex orders the wait with the
// event's Records, as for an event of s's own Program.
func (sc *streamCore) waitPeerEvent(e *eventCore) error {
	if err := sc.p.peerOf(e.p, "WaitEvent", "the event"); err != nil {
		return err
	}
	if !e.hold() {
		return fmt.Errorf("qd: WaitEvent: %w", closedErr("event"))
	}
	defer e.inflight.leave()
	e.mu.Lock()
	defer e.mu.Unlock()
	cs, ok := sc.enter()
	if !ok {
		return closedErr("stream")
	}
	defer sc.exit()
	if err := refuseAcross(sc, cs, e.mark.capture(), "Stream.WaitEvent"); err != nil {
		return err
	}
	return sc.waitEventOf(e.b, e.p)
}

// waitPeerStream is [Stream.WaitStream] with a stream of another Program;
// the caller holds s's Program: o's point, under o's gate, then s's wait
// for it under its own (gate.go).
func (sc *streamCore) waitPeerStream(o *streamCore) error {
	if err := sc.p.peerOf(o.p, "WaitStream", "the stream waited for"); err != nil {
		return err
	}
	if !o.hold() { // keeps o's Program's event pool for the point
		return fmt.Errorf("qd: WaitStream: %w", closedErr("stream waited for"))
	}
	defer o.inflight.leave()
	ocs, ok := o.enter()
	if !ok {
		return fmt.Errorf("qd: WaitStream: %w", closedErr("stream waited for"))
	}
	if ocs != nil {
		o.exit()
		return refuseAcross(sc, nil, ocs, "Stream.WaitStream")
	}
	e, _, err := o.pointHeld(nil)
	o.exit()
	if err != nil {
		return err
	}
	defer o.p.evpool.Put(e)
	cs, ok := sc.enter()
	if !ok {
		return closedErr("stream")
	}
	defer sc.exit()
	if err := refuseAcross(sc, cs, nil, "Stream.WaitStream"); err != nil {
		return err
	}
	return sc.waitEventOf(e, o.p)
}

// copyBetween is CopyFromOn between arrays of two Programs of one backend
// (a peer copy between GPUs, or a copy between two Programs of one device)
// on s, a stream of either Program. The caller holds dst's Program and has
// checked both arrays.
func copyBetween(s *Stream, what string, dst, src *ndCore) error {
	if err := dst.p.peerOf(src.p, what, "the source Ndarray"); err != nil {
		return err
	}
	switch {
	case s == nil || s.c == nil:
		return fmt.Errorf("%w: %s: nil stream", ErrInvalidArgument, what)
	case s.c.p != dst.p && s.c.p != src.p:
		return fmt.Errorf("%w: %s: the stream belongs to neither the array's Program nor the source's", ErrForeign, what)
	}
	pd := s.c.p.dev.(backend.Peer) // peerOf: both Programs' devices are of one backend, which has it
	bytes := dst.n * dst.lay.size
	// The fill of the other Program's array, if pending, goes on a stream
	// of its own Program, before s's gate is taken (zerofill.go).
	for _, a := range []*ndCore{src, dst} {
		if a.p == s.c.p || a == dst && !dst.view {
			continue
		}
		if !a.pin() {
			return fmt.Errorf("qd: %s: %w", what, closedErr("array"))
		}
		err := a.st.fillOwn()
		a.unpin()
		if err != nil {
			return fmt.Errorf("qd: %s: %w", what, err)
		}
	}
	return enqueueGated(s.c, what, true, []operand{{core: dst}, {core: src}}, func(bs backend.Stream) error {
		if bytes == 0 {
			return nil
		}
		return pd.CopyPeer(bs, dst.buf, src.buf, bytes)
	}, zeroUse{st: src.st}, zeroUse{dst.st, !dst.view})
}
