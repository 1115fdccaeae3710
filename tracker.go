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
// the memory is done, then forgets those uses.
func (p *Program) waitUses(t *tracker) error {
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
		e, err := p.evpool.Get()
		if err != nil {
			return err
		}
		if err := e.Record(u.s.b); err != nil {
			errs = append(errs, err)
		} else if err := e.Synchronize(); err != nil {
			errs = append(errs, err)
		}
		p.evpool.Put(e)
	}
	t.forget(seen)
	return errors.Join(errs...)
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
		e, err := p.evpool.Get()
		if err != nil {
			return err
		}
		if err := e.Record(u.s.b); err != nil {
			errs = append(errs, err)
		} else if err := on.b.WaitEvent(e); err != nil {
			errs = append(errs, err)
		}
		p.evpool.Put(e)
	}
	t.forget(seen)
	return errors.Join(errs...)
}
