package qd

import "testing"

// TestTrackerNotes checks the bookkeeping behind the launch's fast note
// (tracker.noteUse): a stream that has the last note is not noted again
// while no wait is in progress; during a wait, notes are fresh and the
// wait's forget keeps them; a forgotten stream is noted afresh.
func TestTrackerNotes(t *testing.T) {
	var tr tracker
	s1, s2 := &streamCore{}, &streamCore{}
	seqOf := func(s *streamCore) uint64 {
		t.Helper()
		for _, u := range tr.users {
			if u.s == s {
				return u.seq
			}
		}
		return 0
	}
	tr.noteUse(s1)
	first := seqOf(s1)
	tr.noteUse(s1)
	if got := seqOf(s1); got != first || len(tr.users) != 1 {
		t.Fatalf("a repeated note with no wait changed the notes: seq %d -> %d, %d users", first, got, len(tr.users))
	}

	// A wait in progress: the same stream's next note is fresh and
	// survives the wait's forget.
	seen := tr.snapshot()
	tr.noteUse(s1)
	if seqOf(s1) == first {
		t.Fatal("a note during a wait kept the old number")
	}
	tr.forget(seen)
	if seqOf(s1) == 0 || tr.last.Load() != s1 || tr.waiting.Load() != 0 {
		t.Fatalf("after the wait: s1 seq %d, last %p, waiting %d", seqOf(s1), tr.last.Load(), tr.waiting.Load())
	}

	// Another stream takes the last note; s1's note stays in the list.
	tr.noteUse(s2)
	if tr.last.Load() != s2 || seqOf(s1) == 0 || len(tr.users) != 2 {
		t.Fatalf("after s2: last %p, %d users", tr.last.Load(), len(tr.users))
	}
	tr.noteUse(s1) // not the last: noted
	if tr.last.Load() != s1 {
		t.Fatal("s1's note after s2's did not make it the last")
	}

	// A wait that forgets everything clears last, so the next note adds
	// the stream back.
	tr.forget(tr.snapshot())
	if len(tr.users) != 0 || tr.last.Load() != nil {
		t.Fatalf("after a full forget: %d users, last %p", len(tr.users), tr.last.Load())
	}
	tr.noteUse(s1)
	if seqOf(s1) == 0 {
		t.Fatal("a note after the forget was lost")
	}

	// Waits that end without forgetting (nothing to wait for, or only
	// streams of a Program left out) leave the count at zero.
	var empty tracker
	if err := empty.waitUses(); err != nil || empty.waiting.Load() != 0 {
		t.Fatalf("a wait with no uses: %v, waiting %d", err, empty.waiting.Load())
	}
	skipped := &Program{}
	s1.p = skipped
	if err := tr.waitUsesBut(skipped, ""); err != nil || tr.waiting.Load() != 0 {
		t.Fatalf("a wait leaving out every use: %v, waiting %d", err, tr.waiting.Load())
	}
}
