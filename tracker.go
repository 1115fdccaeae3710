package qd

import (
	"errors"
	"sync"
)

// tracker is the use tracking of a piece of memory (an Ndarray's, a
// HostArray's, shared by their Rows views): which streams enqueued work
// on it since the host last waited for them, and the launches or copies
// being enqueued with it right now.
//
// Enqueueing only notes its stream here (no driver call). A host read, or
// a Close, then waits for just those streams; a stream-ordered free makes
// its stream wait for them instead.
type tracker struct {
	// pins counts launches and copies between argument binding and the
	// enqueue of their work; Close waits for it to drop to zero so that it
	// never frees memory an enqueue is about to use.
	pins busy

	mu    sync.Mutex
	users []use
	notes uint64 // numbers every note, so no two notes look alike
}

type use struct {
	s   *streamCore
	seq uint64 // the note's number: a wait removes only the notes it saw
}

// noteUse records that work enqueued on s uses the memory. It is on the
// launch path, so it only appends to a short list.
func (t *tracker) noteUse(s *streamCore) {
	t.mu.Lock()
	t.notes++
	for i := range t.users {
		if t.users[i].s == s {
			t.users[i].seq = t.notes
			t.mu.Unlock()
			return
		}
	}
	t.users = append(t.users, use{s: s, seq: t.notes})
	t.mu.Unlock()
}

// snapshot returns the uses noted so far.
func (t *tracker) snapshot() []use {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]use(nil), t.users...)
}

// forget drops the uses in seen (a later note of the same stream stays).
func (t *tracker) forget(seen []use) {
	t.mu.Lock()
	kept := t.users[:0]
	for _, u := range t.users {
		if !containsUse(seen, u) {
			kept = append(kept, u)
		}
	}
	clear(t.users[len(kept):])
	t.users = kept
	t.mu.Unlock()
}

func containsUse(list []use, u use) bool {
	for _, x := range list {
		if x == u {
			return true
		}
	}
	return false
}

// waitUses blocks until the work enqueued so far on the streams that used
// the memory is done, then forgets those uses. Work a graph capture
// recorded is not work yet: for a stream that is capturing, waitUses waits
// for its work from before the capture.
func (p *Program) waitUses(t *tracker) error { return p.waitUsesFor(t, "") }

// waitUsesFor is waitUses for a host access named call (a read or write
// of the memory), which a capture whose work uses the memory refuses: the
// data the call wants is the graph's, and exists only once it runs.
func (p *Program) waitUsesFor(t *tracker, call string) error {
	seen := t.snapshot()
	if len(seen) == 0 {
		return nil
	}
	var errs []error
	for _, u := range seen {
		if u.s.closed.Load() {
			<-u.s.gone // its Close waits for its work
			continue
		}
		if err := p.waitStream(u.s, t, call); err != nil {
			if errors.Is(err, ErrCapturing) {
				return err // refused: nothing was waited for
			}
			errs = append(errs, err)
		}
	}
	t.forget(seen)
	return errors.Join(errs...)
}

// waitStream blocks until the work enqueued so far on s is done; for a
// capturing stream, its work from before the capture, unless call is set
// and the capture's work uses t's memory (see waitUsesFor).
func (p *Program) waitStream(s *streamCore, t *tracker, call string) error {
	s.gate.RLock()
	if c := s.cap.Load(); c != nil {
		defer s.gate.RUnlock()
		if call != "" && c.usedTracker(t) {
			return c.refuse(call, "the array is used by the capture's work, which runs only when the graph is launched; access it after Capture returns")
		}
		return syncPre(c, s)
	}
	e, err := p.evpool.Get()
	if err != nil {
		s.gate.RUnlock()
		return err
	}
	defer p.evpool.Put(e)
	err = e.Record(s.b)
	s.gate.RUnlock()
	if err != nil {
		return err
	}
	return e.Synchronize()
}

// syncStream waits for all work enqueued on s (Program.Sync); for a
// capturing stream, its work from before the capture.
func (p *Program) syncStream(s *streamCore) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if c := s.cap.Load(); c != nil {
		return syncPre(c, s)
	}
	return s.b.Synchronize()
}

// syncPre waits for member s's work from before it joined capture c; the
// caller holds s's gate.
func syncPre(c *capture, s *streamCore) error {
	if pre := c.preOf(s); pre != nil {
		return pre.Synchronize()
	}
	return nil
}

// orderAfterUses makes stream on wait, without blocking the host, for the
// work enqueued so far on the other streams that used the memory, and
// forgets those uses: what on enqueues next (a free) comes after all of it.
func (p *Program) orderAfterUses(t *tracker, on *streamCore) error {
	seen := t.snapshot()
	var errs []error
	for _, u := range seen {
		if u.s == on {
			continue
		}
		if u.s.closed.Load() {
			<-u.s.gone
			continue
		}
		if err := p.orderAfter(on, u.s); err != nil {
			errs = append(errs, err)
		}
	}
	t.forget(seen)
	return errors.Join(errs...)
}

// orderAfter makes on wait for the work enqueued so far on s: through an
// event recorded now, or, when s captures and on is outside its capture,
// for s's work from before the capture.
func (p *Program) orderAfter(on, s *streamCore) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if c := s.cap.Load(); c != nil && on.cap.Load() != c {
		if pre := c.preOf(s); pre != nil {
			return on.b.WaitEvent(pre)
		}
		return nil
	}
	e, err := p.evpool.Get()
	if err != nil {
		return err
	}
	defer p.evpool.Put(e)
	m := s.mark()
	if err := e.Record(s.b); err != nil {
		return err
	}
	if err := p.admitWait(on, m, "Ndarray.Close"); err != nil {
		return err
	}
	return on.b.WaitEvent(e)
}
