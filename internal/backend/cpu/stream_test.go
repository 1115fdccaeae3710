package cpu

import (
	"testing"
)

// TestQueryAgreesWithEvents: once the host has waited for an event
// recorded last on a stream, the stream's Query says its work is done; and
// once Synchronize of the stream returns, every event recorded on it is
// complete. A stress loop, since the window it guards is a few instructions
// of the stream's goroutine; it failed about once in 20,000 rounds when the
// marker op completed its event before the stream counted the op as done.
func TestQueryAgreesWithEvents(t *testing.T) {
	rounds := 200_000
	if testing.Short() {
		rounds = 20_000
	}
	d := New()
	s := newStream(d)
	e, _ := d.NewEvent(false)
	nop := op{kind: opFunc, fn: func() error { return nil }}
	for r := range rounds {
		if err := s.enqueue(nop); err != nil {
			t.Fatal(err)
		}
		if err := e.Record(s); err != nil {
			t.Fatal(err)
		}
		if r%2 == 0 {
			if err := e.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if done, _ := s.Query(); !done {
				t.Fatalf("round %d: the event recorded last is reached, but the stream's Query says its work is not done", r)
			}
		} else {
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if done, _ := e.Query(); !done {
				t.Fatalf("round %d: Synchronize returned, but the event recorded before it is not reached", r)
			}
		}
	}
}
