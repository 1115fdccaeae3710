package vulkan

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
)

// openTwo opens device 0 twice: two logical devices, as two Programs of
// one GPU have.
func openTwo(t *testing.T) (a, b *Device) {
	t.Helper()
	return openTestDevice(t), openTestDevice(t)
}

// TestCopyPeer copies between buffers of two devices on a stream of
// either, and between two buffers of the other device, for sizes around
// the staging boundaries; each copy reads what the stream's earlier work
// wrote and the stream's later work sees what it wrote.
func TestCopyPeer(t *testing.T) {
	a, b := openTwo(t)
	sizes := []int{1, 4, 1000, stagingSmall + 3, 1<<20 + 5}
	if !testing.Short() {
		sizes = append(sizes, a.staging.chunk()+7)
	}
	type dev struct {
		name string
		d    *Device
	}
	devs := []dev{{"a", a}, {"b", b}}
	for _, n := range sizes {
		for _, on := range devs {
			for _, from := range devs {
				for _, to := range devs {
					if from.d == on.d && to.d == on.d {
						continue
					}
					t.Run(fmt.Sprintf("%d/on %s/%s to %s", n, on.name, from.name, to.name), func(t *testing.T) {
						s := newStream(t, on.d)
						fs, ts := newStream(t, from.d), newStream(t, to.d)
						src, dst := alloc(t, from.d, n), alloc(t, to.d, n)
						want := pattern(n, byte(n+len(on.name)))
						write(t, fs, src, want)
						syncStream(t, fs)
						if err := on.d.CopyPeer(s, dst, src, n); err != nil {
							t.Fatal(err)
						}
						syncStream(t, s)
						if got := read(t, ts, dst, n); firstDiff(got, want) >= 0 {
							t.Fatalf("byte %d differs", firstDiff(got, want))
						}
					})
				}
			}
		}
	}
}

// TestCopyPeerOrder: a copy enqueued on a stream after a write of its
// source on that stream reads the write; a copy of a write into the
// stream's own buffer comes before the stream's later work (a copy back).
func TestCopyPeerOrder(t *testing.T) {
	a, b := openTwo(t)
	const n = 64 << 10
	s := newStream(t, a)
	x, y, z := alloc(t, a, n), alloc(t, b, n), alloc(t, a, n)
	bs := newStream(t, b)
	for round := range 4 {
		want := pattern(n, byte(round))
		write(t, s, x, want) // staged, asynchronous
		if err := a.CopyPeer(s, y, x, n); err != nil {
			t.Fatal(err)
		}
		if err := a.CopyPeer(s, z, y, n); err != nil {
			t.Fatal(err)
		}
		if got := read(t, s, z, n); firstDiff(got, want) >= 0 {
			t.Fatalf("round %d: byte %d of the copy back differs", round, firstDiff(got, want))
		}
		if got := read(t, bs, y, n); firstDiff(got, want) >= 0 {
			t.Fatalf("round %d: byte %d of the other device's copy differs", round, firstDiff(got, want))
		}
	}
}

// TestWaitPeerEvent: a stream waiting for another device's event does not
// pass it before it is reached: the event's point waits for the host
// (hostEvent), so the waiting stream's later work must not run until the
// host signals, and must run after.
func TestWaitPeerEvent(t *testing.T) {
	a, b := openTwo(t)
	bs := newStream(t, b)
	gate, open := hostEvent(t, b)
	if err := bs.WaitEvent(gate); err != nil {
		t.Fatal(err)
	}
	e := newEvent(t, b, false)
	if err := e.Record(bs); err != nil {
		t.Fatal(err)
	}
	s := newStream(t, a)
	if err := a.WaitPeerEvent(s, e); err != nil {
		t.Fatal(err)
	}
	done := newEvent(t, a, false)
	if err := done.Record(s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if ok, err := done.Query(); err != nil || ok {
		t.Fatalf("the waiting stream passed an event not reached (Query %v, %v)", ok, err)
	}
	open()
	if err := done.Synchronize(); err != nil {
		t.Fatal(err)
	}
	// Reached, never recorded, and own events need no relay.
	for name, ev := range map[string]*Event{"reached": e, "never recorded": newEvent(t, b, false), "own": done} {
		if err := a.WaitPeerEvent(s, ev); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	syncStream(t, s)
}

// TestPeerClose: relays hold the devices they use, so that a device
// closed while another's stream waits for its event, or copies from its
// buffer, stays alive until the relay is done; once closed, a wait for
// its event, or a copy from its buffer, is refused with ErrClosed.
func TestPeerClose(t *testing.T) {
	a := openTestDevice(t)
	b := openOrSkip(t)
	bs := newStream(t, b)
	src := alloc(t, b, 4096)
	want := pattern(4096, 9)
	write(t, bs, src, want)
	e := newEvent(t, b, false)
	if err := e.Record(bs); err != nil {
		t.Fatal(err)
	}
	s := newStream(t, a)
	dst := alloc(t, a, 4096)
	if err := a.WaitPeerEvent(s, e); err != nil {
		t.Fatal(err)
	}
	if err := a.CopyPeer(s, dst, src, 4096); err != nil {
		t.Fatal(err)
	}
	syncStream(t, s)
	if got := read(t, s, dst, 4096); firstDiff(got, want) >= 0 {
		t.Fatalf("byte %d differs", firstDiff(got, want))
	}
	bs.Close()
	src.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.WaitPeerEvent(s, e); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("WaitPeerEvent with an event of a closed device: %v, want ErrClosed", err)
	}
	if err := a.CopyPeer(s, dst, src, 4096); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("CopyPeer from a buffer of a closed device: %v, want ErrClosed", err)
	}
}
