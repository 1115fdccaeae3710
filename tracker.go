package qd

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
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
	// waiting counts the waits between their snapshot and their forget;
	// last is a stream with a note in users (the last one noted), nil
	// when its note is forgotten. With pins, the fields a launch touches.
	waiting atomic.Int32
	last    atomic.Pointer[streamCore]

	mu    sync.Mutex
	users []use
	notes uint64 // numbers every note, so no two notes look alike
}

type use struct {
	s   *streamCore
	seq uint64 // the note's number: a wait removes only the notes it saw
}

// noteUse records that work enqueued on s uses the memory. It is on the
// launch path, so it only appends to a short list, and when s already has
// the last note and no wait is between its snapshot and its forget, it
// does nothing at all: a wait that starts later snapshots s's note and
// waits for all of s's work so far, this launch's included (the launch
// was enqueued before this check, which came before the wait counted
// itself). A wait in progress makes the note fresh, as its forget must
// keep it.
func (t *tracker) noteUse(s *streamCore) {
	if t.waiting.Load() == 0 && t.last.Load() == s {
		return
	}
	t.mu.Lock()
	t.notes++
	i := slices.IndexFunc(t.users, func(u use) bool { return u.s == s })
	if i >= 0 {
		t.users[i].seq = t.notes
	} else {
		t.users = append(t.users, use{s: s, seq: t.notes})
	}
	t.last.Store(s) // after the list has s's note
	t.mu.Unlock()
}

// snapshot returns the uses noted so far, and counts a wait until forget
// or unwait.
func (t *tracker) snapshot() []use {
	t.waiting.Add(1) // before the snapshot: later launches note afresh
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]use(nil), t.users...)
}

// unwait ends a wait that forgets nothing.
func (t *tracker) unwait() { t.waiting.Add(-1) }

// forget drops the uses in seen (a later note of the same stream stays)
// and ends the wait that took seen.
func (t *tracker) forget(seen []use) {
	defer t.unwait()
	t.mu.Lock()
	kept := t.users[:0]
	for _, u := range t.users {
		if !slices.Contains(seen, u) {
			kept = append(kept, u)
		}
	}
	clear(t.users[len(kept):])
	t.users = kept
	if l := t.last.Load(); l != nil && !slices.ContainsFunc(kept, func(u use) bool { return u.s == l }) {
		t.last.Store(nil)
	}
	t.mu.Unlock()
}

// waitUses blocks until the work enqueued so far on the streams that used
// the memory is done, then forgets those uses. Streams of other Programs
// (copies between Programs) are waited for through their own Program's
// events. Work a graph capture recorded is not work yet: for a stream
// that is capturing, waitUses waits for its work from before the capture.
func (t *tracker) waitUses() error { return t.waitUsesBut(nil, "") }

// waitUsesFor is waitUses for a host access named call (a read or write
// of the memory), which a capture whose work uses the memory refuses: the
// data the call wants is the graph's, and exists only once it runs.
func (t *tracker) waitUsesFor(call string) error { return t.waitUsesBut(nil, call) }

// waitUsesBut is waitUsesFor for the streams of Programs other than skip
// (nil: all): at [Program.Close], whose own streams are already
// synchronized.
func (t *tracker) waitUsesBut(skip *Program, call string) error {
	seen := t.snapshot()
	if skip != nil {
		seen = slices.DeleteFunc(seen, func(u use) bool { return u.s.p == skip })
	}
	if len(seen) == 0 {
		t.unwait()
		return nil
	}
	var errs []error
	for _, u := range seen {
		if err := u.s.hostWaitFor(t, call); err != nil {
			if errors.Is(err, ErrCapturing) {
				t.unwait()
				return err // refused: nothing was waited for
			}
			errs = append(errs, err)
		}
	}
	t.forget(seen)
	return errors.Join(errs...)
}

// syncStream waits for all work enqueued on s ([Program.Synchronize]); for a
// capturing stream, its work from before the capture.
func (p *Program) syncStream(s *streamCore) error {
	s.gate.RLock()
	if s.closed.Load() {
		// Closed since the caller listed it: its Close waits for its work.
		s.gate.RUnlock()
		<-s.gone
		return nil
	}
	defer s.gate.RUnlock()
	if c := s.cap.Load(); c != nil {
		return syncPre(c, s)
	}
	return s.withCommErrs(s.b.Synchronize())
}

// syncPre waits for member s's work from before it joined capture c; the
// caller holds s's gate.
func syncPre(c *capture, s *streamCore) error {
	if pre := c.preOf(s); pre != nil {
		return pre.Synchronize()
	}
	return nil
}
