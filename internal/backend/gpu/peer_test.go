package gpu_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
)

// Work across devices (backend.Peer): a second handle on device 0 (what a
// second Program on one GPU has), and device 1 where the machine has one.

// peerOf opens the peer a test runs against: a second Device on d's own
// ordinal (one context), or device 1.
func peerOf(t *testing.T, d *gpu.Device, second bool) *gpu.Device {
	t.Helper()
	if second {
		return gputest.OpenOrdinal(t, d.Driver(), 1)
	}
	return gputest.OpenOrdinal(t, d.Driver(), 0)
}

var peerCases = []struct {
	name   string
	second bool // device 1 rather than a second handle on device 0
}{{"same device", false}, {"device 1", true}}

// TestPeerWaitAndCopy: a kernel on d, stuck until a flag is written, fills
// x; a stream of the peer waits for an event of d recorded after it, copies
// x over and adds 1. The result is 42 only if the peer's stream waited: the
// flag is written after everything is enqueued.
func TestPeerWaitAndCopy(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		needKernels(t, d)
		for _, pc := range peerCases {
			t.Run(pc.name, func(t *testing.T) {
				peer := peerOf(t, d, pc.second)
				direct, err := d.PeerAccess(peer)
				t.Logf("%s ↔ %s: direct access %v (%v)", d, peer, direct, err)
				spin, add1 := build(t, d, spinKernel()), build(t, peer, add1Kernel())
				s0, s0b, s1 := mustStream(t, d, 0), mustStream(t, d, 0), mustStream(t, peer, 0)
				const n = 1 << 16
				flag, out, x := mustAlloc(t, d, 4), mustAlloc(t, d, 4), mustAlloc(t, d, 4*n)
				x1, y1 := mustAlloc(t, peer, 4*n), mustAlloc(t, peer, 4*n)
				writeU32(t, flag, s0, []uint32{0})
				e, err := d.NewEvent(false)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				launch(t, spin, s0, spinArgs(flag, out, x, n, 41))
				if err := e.Record(s0); err != nil {
					t.Fatal(err)
				}
				if err := peer.WaitPeerEvent(s1, e); err != nil {
					t.Fatal(err)
				}
				if err := peer.CopyPeer(s1, x1, x, 4*n); err != nil {
					t.Fatal(err)
				}
				launch(t, add1, s1, &backend.Args{Arrays: []backend.ArrayArg{arr(x1, n), arr(y1, n)}})
				writeU32(t, flag, s0b, []uint32{1})
				for i, v := range readU32(t, y1, s1, n) {
					if v != 42 {
						t.Fatalf("y[%d] = %d: the peer's stream did not wait for the event", i, v)
					}
				}
				if got := readU32(t, out, s0, 1)[0]; got != 1 {
					t.Fatalf("spin kernel ended with %d (2: it never saw the flag)", got)
				}
			})
		}
	})
}

// TestPeerCopies: copies both ways between d and a peer, of buffers from
// Alloc and from the stream-ordered pool, whole and through views, on a
// stream of either device.
func TestPeerCopies(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		for _, pc := range peerCases {
			t.Run(pc.name, func(t *testing.T) {
				peer := peerOf(t, d, pc.second)
				s0, s1 := mustStream(t, d, 0), mustStream(t, peer, 0)
				const n = 1<<20 + 5
				for _, c := range []struct {
					name     string
					from, to *gpu.Device
					fs, ts   backend.Stream
					on       *gpu.Device
					os       backend.Stream
				}{
					{"d to peer on peer", d, peer, s0, s1, peer, s1},
					{"d to peer on d", d, peer, s0, s1, d, s0},
					{"peer to d on d", peer, d, s1, s0, d, s0},
				} {
					for _, pooled := range []bool{false, true} {
						t.Run(fmt.Sprintf("%s/pooled=%v", c.name, pooled), func(t *testing.T) {
							alloc := func(dv *gpu.Device, s backend.Stream) backend.Buffer {
								if !pooled {
									return mustAlloc(t, dv, 4*n)
								}
								b, err := dv.AllocOn(s, 4*n)
								if err != nil {
									t.Fatal(err)
								}
								t.Cleanup(func() { b.FreeOn(s); s.Synchronize() })
								return b
							}
							src, dst := alloc(c.from, c.fs), alloc(c.to, c.ts)
							want := make([]uint32, n)
							for i := range want {
								want[i] = uint32(i*2654435761) ^ 0xa5
							}
							writeU32(t, src, c.fs, want)
							writeU32(t, dst, c.ts, make([]uint32, n))
							for _, s := range []backend.Stream{c.fs, c.ts} {
								if err := s.Synchronize(); err != nil {
									t.Fatal(err)
								}
							}
							if err := c.on.CopyPeer(c.os, dst, src, 4*n); err != nil {
								t.Fatal(err)
							}
							// The last 1000 elements again through views, shifted by one.
							sv, _ := src.View(4*(n-1001), 4*1000)
							dv, _ := dst.View(4*(n-1000), 4*1000)
							if err := c.on.CopyPeer(c.os, dv, sv, 4*1000); err != nil {
								t.Fatal(err)
							}
							copy(want[n-1000:], append([]uint32(nil), want[n-1001:n-1]...))
							if err := c.os.Synchronize(); err != nil {
								t.Fatal(err)
							}
							got := readU32(t, dst, c.ts, n)
							for i := range got {
								if got[i] != want[i] {
									t.Fatalf("element %d = %#x, want %#x", i, got[i], want[i])
								}
							}
						})
					}
				}
			})
		}
	})
}

// TestPeerErrors: what CopyPeer and WaitPeerEvent refuse, on one device.
func TestPeerErrors(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		peer := peerOf(t, d, false)
		s := mustStream(t, d, 0)
		a, b := mustAlloc(t, d, 64), mustAlloc(t, peer, 32)
		if err := d.CopyPeer(s, a, b, 64); err == nil {
			t.Error("CopyPeer of more bytes than the source has succeeded")
		}
		if err := d.CopyPeer(s, a, nil, 8); err == nil {
			t.Error("CopyPeer from nil succeeded")
		}
		closed := mustAlloc(t, peer, 64)
		closed.Close()
		if err := d.CopyPeer(s, a, closed, 8); err == nil {
			t.Error("CopyPeer from a closed buffer succeeded")
		}
		if err := d.CopyPeer(s, a, b, 0); err != nil {
			t.Errorf("CopyPeer of 0 bytes: %v", err)
		}
		e, err := peer.NewEvent(false)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.WaitPeerEvent(s, e); err != nil {
			t.Errorf("waiting for an event never recorded: %v", err)
		}
		e.Close()
		if err := d.WaitPeerEvent(s, e); err == nil {
			t.Error("waiting for a closed event succeeded")
		}
		if _, err := d.PeerAccess(nil); err == nil {
			t.Error("PeerAccess(nil) succeeded")
		}
	})
}

// TestPeerFaults, over every real driver wrapped (faultTargets), between
// devices 0 and 1: a failed enabling of peer access leaves PeerAccess
// naming the failed function and copies working (the driver stages them),
// and is not tried again by later copies (once per pair, each way);
// a failed peer copy returns an error naming its function and loses
// neither device, whose next copy is right. The fake has one device, so
// it skips, as does a machine with one GPU.
//
//	QD_GPU_RUN=1 QD_GPU_COUNT=2 go test ./internal/backend/gpu -run 'TestPeerFaults' -v
func TestPeerFaults(t *testing.T) {
	for _, tg := range faultTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			if tg.exact {
				t.Skip("the fake driver has one device: peer calls need two")
			}
			failed, ok := fakedriver.CodeFor(tg.drv, gpu.Failed)
			if !ok {
				t.Fatal("the driver has no code of class failed")
			}
			tg.in.Reset()
			defer tg.in.Reset()
			d0 := gputest.Open(t, tg.drv)
			d1 := gputest.OpenOrdinal(t, tg.drv, 1)
			s0 := mustStream(t, d0, 0)
			const n = 1 << 16
			b0, b1 := mustAlloc(t, d0, 4*n), mustAlloc(t, d1, 4*n)
			want := make([]uint32, n)
			for i := range want {
				want[i] = uint32(i) * 7
			}
			writeU32(t, b0, s0, want)
			copied := func(what string) {
				t.Helper()
				if err := d0.CopyPeer(s0, b1, b0, 4*n); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if err := s0.Synchronize(); err != nil {
					t.Fatal(err)
				}
				got := readU32(t, b1, mustStream(t, d1, 0), n)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: element %d = %d, want %d", what, i, got[i], want[i])
					}
				}
			}

			tg.in.Inject(fakedriver.Fault{Call: "EnablePeerAccess", N: 1, Code: failed})
			direct, err := d0.PeerAccess(d1)
			switch {
			case tg.in.Count("EnablePeerAccess") == 0:
				t.Logf("no EnablePeerAccess call (no direct path, or the pair was enabled earlier in this process): %v, %v", direct, err)
			case direct || err == nil || !strings.Contains(err.Error(), tg.in.Name("EnablePeerAccess")):
				t.Errorf("PeerAccess after a failed %s: direct %v, %v", tg.in.Name("EnablePeerAccess"), direct, err)
			}
			copied("copy after a failed enabling")
			copied("second copy")
			if n := tg.in.Count("EnablePeerAccess"); n > 2 {
				t.Errorf("%d EnablePeerAccess calls for one pair: access is enabled once per pair, each way", n)
			}

			tg.in.Inject(fakedriver.Fault{Call: "CopyPeerAsync", N: 1, Code: failed})
			err = d0.CopyPeer(s0, b1, b0, 4*n)
			var de *gpu.DriverError
			if !errors.As(err, &de) || de.Op != tg.in.Name("CopyPeerAsync") || de.Code != failed {
				t.Errorf("a failed peer copy: %v, want a DriverError of %s", err, tg.in.Name("CopyPeerAsync"))
			}
			if errors.Is(err, backend.ErrDeviceLost) || d0.Lost() || d1.Lost() {
				t.Errorf("a failed peer copy lost a device: %v", err)
			}
			tg.in.Reset()
			copied("copy after a failed copy")
		})
	}
}
