package vulkan

import (
	"bytes"
	"testing"
	"time"
)

// TestEventAcrossStreams records an event on one stream after a fill and
// makes another wait for it before copying the filled buffer: the copy
// sees the fill, round after round.
func TestEventAcrossStreams(t *testing.T) {
	d := openTestDevice(t)
	s1, s2 := newStream(t, d), newStream(t, d)
	e := newEvent(t, d, false)
	const n = 8 << 20
	a, b := alloc(t, d, n), alloc(t, d, n)
	for r := range 4 {
		if err := a.Fill(s1, uint32(0x10+r), 1, n); err != nil {
			t.Fatal(err)
		}
		if err := e.Record(s1); err != nil {
			t.Fatal(err)
		}
		if err := s2.WaitEvent(e); err != nil {
			t.Fatal(err)
		}
		if err := b.CopyFrom(s2, a, n); err != nil {
			t.Fatal(err)
		}
		got := read(t, s2, b, n)
		for j, c := range got {
			if c != byte(0x10+r) {
				t.Fatalf("round %d: byte %d is %#x after the wait, want %#x", r, j, c, 0x10+r)
			}
		}
		// s1 must not overwrite a before s2's copy is done.
		if err := e.Record(s2); err != nil {
			t.Fatal(err)
		}
		if err := s1.WaitEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	syncStream(t, s1)
}

// TestWaitEventOrders makes a stream wait for a point the host reaches
// later: its copy out of a host buffer must read what the host wrote
// before reaching it, not what was there when the copy was enqueued.
func TestWaitEventOrders(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	const n = 4096
	h := allocHost(t, d, n)
	b := alloc(t, d, n)
	e, signal := hostEvent(t, d)
	if err := s.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	if len(s.waits) != 1 {
		t.Fatalf("%d waits pending after WaitEvent of an unreached event", len(s.waits))
	}
	if err := b.CopyFromHost(s, h.Pointer(), n); err != nil {
		t.Fatal(err)
	}
	if len(s.waits) != 0 {
		t.Fatalf("%d waits pending after a submit", len(s.waits))
	}
	time.Sleep(5 * time.Millisecond) // a copy not waiting would run now
	want := pattern(n, 3)
	copy(hostBytes(h.Pointer(), n), want)
	signal()
	if got := read(t, s, b, n); !bytes.Equal(got, want) {
		t.Fatalf("the copy ran before the event's point: byte 0 is %#x, want %#x", got[0], want[0])
	}
}

// TestEventWaitsBeforeRecord checks that a Record after a WaitEvent, with
// no work between, comes after the waited-for point.
func TestEventWaitsBeforeRecord(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	held, signal := hostEvent(t, d)
	e := newEvent(t, d, false)
	if err := s.WaitEvent(held); err != nil {
		t.Fatal(err)
	}
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	if done, err := e.Query(); err != nil || done {
		t.Fatalf("Query of an event recorded after a pending wait: %v, %v", done, err)
	}
	signal()
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done, err := e.Query(); err != nil || !done {
		t.Fatalf("Query after Synchronize: %v, %v", done, err)
	}
}

func TestEventNeverRecorded(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	for _, timing := range []bool{false, true} {
		e := newEvent(t, d, timing)
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("timing %v: Query %v, %v", timing, done, err)
		}
		if err := e.Synchronize(); err != nil {
			t.Error(err)
		}
		if err := s.WaitEvent(e); err != nil || len(s.waits) != 0 {
			t.Errorf("WaitEvent: %v, %d waits", err, len(s.waits))
		}
		// Recorded on a stream with nothing submitted: complete, once
		// the timestamp a timing event's Record submits is written.
		if err := e.Record(newStream(t, d)); err != nil {
			t.Fatal(err)
		}
		if timing {
			if err := e.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("timing %v, recorded on an empty stream: Query %v, %v", timing, done, err)
		}
	}
}

func TestTimingEvents(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	start, end := newEvent(t, d, true), newEvent(t, d, true)
	plain := newEvent(t, d, false)
	if _, err := start.Elapsed(end); err == nil {
		t.Error("Elapsed of events never recorded succeeded")
	}
	const n = 32 << 20
	b := alloc(t, d, n)
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := b.Fill(s, 0xabcd, 2, n/2); err != nil {
			t.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := plain.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	el, err := start.Elapsed(end)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("4 fills of %d MiB: %v", n>>20, el)
	if el <= 0 || el > time.Minute {
		t.Errorf("Elapsed %v", el)
	}
	if back, err := end.Elapsed(start); err != nil || back != -el {
		t.Errorf("Elapsed backwards: %v, %v; want %v", back, err, -el)
	}
	for _, pair := range [][2]*Event{{start, plain}, {plain, end}} {
		if _, err := pair[0].Elapsed(pair[1]); err == nil {
			t.Error("Elapsed with an event that does not time succeeded")
		}
	}
	// Recording again replaces the point.
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	syncStream(t, s)
	if el2, err := end.Elapsed(start); err != nil || el2 < 0 {
		t.Errorf("Elapsed after a new start Record: %v, %v", el2, err)
	}
}
