package qd

import (
	"errors"
	"testing"
)

// The zero fill of NewNdarrayOn (zerofill.go) and graphs: an array made
// outside a capture and first used inside it is zeroed once, outside the
// capture, never by the graph's replays.

// TestGraphZeroFillOutsideCapture: on every backend (the CPU through
// lazyDevice, whose stream-ordered memory needs a fill), an array whose
// first use is captured reads as zeros after the capture, the replays
// work on it, and what is written between replays is not zeroed again.
func TestGraphZeroFillOutsideCapture(t *testing.T) {
	const n = 500
	cases := []struct {
		name string
		// before runs before the capture on s and s2 (nil: nothing);
		// base is a's value once it has run.
		before func(t *testing.T, addOne *Kernel, s, s2 *Stream, a *Ndarray[float32])
		base   float32
		fills  int // fills enqueued by the end, where counted
	}{
		{"first use in the capture", nil, 0, 1},
		{"fill enqueued on another stream before", func(t *testing.T, addOne *Kernel, s, s2 *Stream, a *Ndarray[float32]) {
			check(t, s2.WaitStream(s))
			check(t, addOne.LaunchOn(s2, a))
			check(t, s.WaitStream(s2))
		}, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachLazy(t, func(t *testing.T, p *Program, fills func() int) {
				m := compileModule(t, p, addOneSrc)
				addOne := kernelOf(t, m, "addOne")
				s := newStream(t, p)
				s2 := newStream(t, p)
				a := newNdarrayOn[float32](t, s, n)
				if tc.before != nil {
					tc.before(t, addOne, s, s2, a)
				}
				g := captureGraph(t, s, func() error { return addOne.LaunchOn(s, a) })
				defer g.Close()
				wantAll(t, "after the capture", a, tc.base)
				check(t, g.LaunchOn(s))
				wantAll(t, "after a replay", a, tc.base+1)
				for r := range 3 {
					check(t, a.CopyFromHost(slicesOf(n, float32(10*r))))
					check(t, g.LaunchOn(s2))
					wantAll(t, "written between replays", a, float32(10*r+1))
				}
				if got := fills(); got >= 0 && got != tc.fills {
					t.Errorf("%d fills enqueued, want %d", got, tc.fills)
				}
				check(t, a.Close())
			})
		})
	}
}

// TestGraphZeroFillOverwrittenInCapture: a first use that overwrites the
// whole array runs only at the replay, so the array is still zeroed for
// the reads before it.
func TestGraphZeroFillOverwrittenInCapture(t *testing.T) {
	forEachLazy(t, func(t *testing.T, p *Program, fills func() int) {
		s := newStream(t, p)
		a := newNdarrayOn[float32](t, s, 300)
		g := captureGraph(t, s, func() error { return a.FillOn(s, 4) })
		defer g.Close()
		wantAll(t, "before the replay", a, 0)
		check(t, g.LaunchOn(s))
		wantAll(t, "after the replay", a, 4)
		check(t, a.Close())
	})
}

// TestGraphZeroFillFake: the same on the fake GPU driver, whose copies
// run (its kernels do not): a replay of a captured copy out of the array
// carries what was written between replays, not zeros, and the runtime
// never waits across the capture's boundary (a misuse on the fake).
func TestGraphZeroFillFake(t *testing.T) {
	e, fake := openFake(t)
	misuses := len(fake.Misuses())
	const n = 256
	a := newNdarrayOn[float32](t, e.s, n)
	h := newHostArray[float32](t, e.p, n)
	g := captureGraph(t, e.s, func() error { return a.CopyToHostOn(e.s, h) })
	wantAll(t, "after the capture", a, 0)
	for r := range 3 {
		check(t, a.CopyFromHost(slicesOf(n, float32(r+7))))
		check(t, g.LaunchOn(e.s))
		hs := hostData(t, h)
		for i, v := range hs {
			if v != float32(r+7) {
				t.Fatalf("replay %d: host[%d] = %v, want %v (zeroed by the replay?)", r, i, v, float32(r+7))
			}
		}
	}
	check(t, errors.Join(g.Close(), a.Close(), h.Close()))
	for _, m := range fake.Misuses()[misuses:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}
