package qd

import (
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Work between Programs on two GPUs (WithDevice(0) and WithDevice(1)): the
// tests of suite_peers_test.go across devices, Warp's multi-GPU ping-pong,
// and a rendezvous of kernels on the two devices. Each skips, with a
// notice, where a GPU backend has fewer than two devices (and where there
// is no GPU); with QD_GPU_COUNT=2 it fails instead. On a two-GPU machine:
//
//	QD_GPU_RUN=1 QD_GPU_COUNT=2 go test -run 'TwoGPUs' -v .

// gpuCount is how many devices the backend of a lists.
func gpuCount(a Arch) int {
	n := 0
	for _, in := range Devices() {
		if in.Arch == a && in.Err == nil {
			n++
		}
	}
	return n
}

// forEachTwoGPUs runs f as a subtest per GPU backend with Programs on its
// devices 0 and 1, closed afterwards.
func forEachTwoGPUs(t *testing.T, f func(t *testing.T, p0, p1 *Program)) {
	t.Helper()
	archs := suiteArchs(t)[1:]
	if len(archs) == 0 {
		gputest.TooFew(t, "GPU", 2, 0)
	}
	for _, a := range archs {
		t.Run(a.String(), func(t *testing.T) {
			if n := gpuCount(a); n < 2 {
				gputest.TooFew(t, a.String(), 2, n)
			}
			p0 := initProgram(t, WithArch(a), WithDevice(0))
			p1 := initProgram(t, WithArch(a), WithDevice(1))
			t.Cleanup(func() {
				check(t, p1.Close())
				check(t, p0.Close())
			})
			f(t, p0, p1)
		})
	}
}

// TestTwoGPUsDevices: each Program drives the device it asked for.
func TestTwoGPUsDevices(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) {
		for i, p := range []*Program{p0, p1} {
			if d := p.Device(); d.Ordinal != i || d.Name == "" {
				t.Errorf("WithDevice(%d): Device() = %v", i, d)
			}
		}
		t.Logf("%v; %v", p0.Device(), p1.Device())
	})
}

// TestTwoGPUsWaits: streams of each device ordered after slow work of the
// other by an event of the other device or WaitStream (crossOrder).
func TestTwoGPUsWaits(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) { crossWaits(t, p0, p1) })
}

// TestTwoGPUsCopies: peer copies of 1-, 2- and 3-D arrays and of Rows
// views, both ways, on a stream of either device (peerCopies).
func TestTwoGPUsCopies(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) {
		t.Logf("peers of device 0: %v", p0.Device().Peers)
		peerCopies[int32](t, p0, p1)
		peerCopies[float64](t, p1, p0)
		peerCopies[uint64](t, p0, p1)
	})
}

// TestTwoGPUsTracking: host reads and Closes wait for peer copies queued
// on the other device's streams (crossTracking; it closes its second
// Program, here one of its own on device 1).
func TestTwoGPUsTracking(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) {
		q := initProgram(t, WithArch(p1.Arch()), WithDevice(1))
		defer q.Close()
		crossTracking(t, p0, q)
	})
}

// TestTwoGPUsConcurrency: copies and waits across the two devices in both
// directions while both Programs close (crossConcurrency).
func TestTwoGPUsConcurrency(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, _ *Program) {
		crossConcurrency(t, func() (*Program, *Program) {
			return initProgram(t, WithArch(p0.Arch()), WithDevice(0)), initProgram(t, WithArch(p0.Arch()), WithDevice(1))
		})
	})
}

// TestTwoGPUsRendezvous: a kernel on each device, each spinning until it
// sees the other's flag (carried over by peer copies), proves that the two
// devices run kernels at once (relayRendezvous).
func TestTwoGPUsRendezvous(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) {
		relayRendezvous(t, p0, p1)
	})
}

// TestTwoGPUsPingPong is the ping-pong of Warp's multi-GPU stream tests:
// an array passes back and forth between the devices, each round adding 1
// on device 0, copying to device 1, adding 1 there and copying back, with
// nothing but cross-device events (or WaitStream) ordering the streams:
// the host enqueues every round before it reads anything. Each add is a
// slow kernel, so a missing wait reads a stale value. After each add the
// array is also copied into a history row on its device; row r must hold
// 2r+1 on device 0 and 2r+2 on device 1.
func TestTwoGPUsPingPong(t *testing.T) {
	forEachTwoGPUs(t, func(t *testing.T, p0, p1 *Program) {
		for _, o := range crossOrders {
			t.Run(o.name, func(t *testing.T) { pingPong(t, p0, p1, o.order) })
		}
	})
}

// pingPong is TestTwoGPUsPingPong with one way of ordering.
func pingPong(t *testing.T, p0, p1 *Program, order func(t *testing.T, from, to *Stream, e *Event) error) {
	const rounds, n = 16, 4096
	type dev struct {
		add         *Kernel
		x           *Ndarray[float32]
		steps       *Ndarray[int64]
		hist        *Ndarray[float32]
		s           *Stream
		e           *Event
		spin        int64
		description string
	}
	mk := func(p *Program) *dev {
		return &dev{
			add:   build(t, p, suitekernels.SlowAdd()),
			x:     newNdarray[float32](t, p, n),
			steps: newNdarray[int64](t, p, 1),
			hist:  newNdarray[float32](t, p, rounds, n),
			s:     newStream(t, p),
			e:     newEvent(t, p),
			spin:  slowSteps(p, 200000), description: p.Device().String(),
		}
	}
	d0, d1 := mk(p0), mk(p1)
	// step adds 1 to a's array, keeps it in history row r, and hands it
	// to b: b's stream waits for a's, then copies it over.
	step := func(a, b *dev, r int) {
		check(t, a.add.LaunchOn(a.s, a.x, a.steps, a.spin))
		check(t, must(a.hist.Rows(r, r+1))(t).CopyFromOn(a.s, a.x))
		check(t, order(t, a.s, b.s, a.e))
		check(t, b.x.CopyFromOn(b.s, a.x))
	}
	for r := range rounds {
		step(d0, d1, r)
		step(d1, d0, r)
	}
	for i, d := range []*dev{d0, d1} {
		got := toSlice(t, d.hist)
		for r := range rounds {
			allEqual(t, fmt.Sprintf("device %d (%s), round %d", i, d.description, r), got[r*n:(r+1)*n], float32(2*r+1+i))
		}
	}
	allEqual(t, "device 0 at the end", toSlice(t, d0.x), float32(2*rounds))
}
