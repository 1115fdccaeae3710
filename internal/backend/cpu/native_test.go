package cpu

import (
	"testing"
	"time"

	"github.com/quadrants-go/qd/native"
)

// TestPathPick: the first launches alternate between the generated code
// and the closures; once each has run trialsEach times the faster per
// element is kept, and failed launches do not count.
func TestPathPick(t *testing.T) {
	for _, c := range []struct {
		name            string
		native, closure time.Duration
		want            int
	}{
		{"native faster", 10, 20, 1},
		{"closures faster", 30, 20, 2},
		{"a tie keeps native", 20, 20, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &module{native: func(*native.Launch) {}}
			var ran []bool
			for m.pick.choice.Load() == 0 {
				if len(ran) > 2*trialsEach+2 {
					t.Fatalf("no choice after %d launches", len(ran))
				}
				l := &launch{m: m, units: 1, workers: 2}
				l.native = m.pick.next(2)
				ran = append(ran, l.native)
				d := c.closure
				if l.native {
					d = c.native
				}
				l.busy.Store(int64(d))
				if len(ran) == 1 {
					failed := &launch{m: m, units: 1, native: true, workers: 2}
					err := error(native.ErrStopped)
					failed.err.Store(&err)
					failed.busy.Store(1) // would win, but failed
					m.pick.record(failed)
				}
				m.pick.record(l)
			}
			if len(ran) != 2*trialsEach {
				t.Errorf("chose after %d launches (%v), want %d", len(ran), ran, 2*trialsEach)
			}
			for i, n := range ran {
				if n != (i%2 == 0) {
					t.Errorf("launch %d ran native=%v: the trials alternate, native first", i, n)
				}
			}
			if int(m.pick.choice.Load()) != c.want {
				t.Errorf("chose %d, want %d", m.pick.choice.Load(), c.want)
			}
			if got := m.pick.next(2); got != (c.want == 1) {
				t.Errorf("after the choice a launch runs native=%v", got)
			}
		})
	}
}

// TestPathPickPerWorkers: a choice holds for the worker count it was made
// at; at another GOMAXPROCS the trials run again, a launch timed at
// another count does not count, and a return to a count finds its choice,
// or its trials, where they were.
func TestPathPickPerWorkers(t *testing.T) {
	m := &module{native: func(*native.Launch) {}}
	decide := func(workers int32, nat, clo time.Duration) {
		t.Helper()
		for range 2 * trialsEach {
			l := &launch{m: m, units: 1, workers: workers}
			l.native = m.pick.next(workers)
			d := clo
			if l.native {
				d = nat
			}
			l.busy.Store(int64(d))
			stale := &launch{m: m, units: 1, workers: workers + 1, native: !l.native}
			stale.busy.Store(1) // timed at another count: would win
			m.pick.record(stale)
			m.pick.record(l)
		}
		if m.pick.timing() {
			t.Fatalf("no choice at %d workers after %d launches", workers, 2*trialsEach)
		}
	}
	decide(1, 10, 20) // native faster on one worker
	if !m.pick.next(1) {
		t.Error("one worker: the closures run, though the generated code was faster")
	}
	decide(2, 30, 20) // closures faster on two
	if m.pick.next(2) {
		t.Error("two workers: the generated code runs, though the closures were faster")
	}
	if !m.pick.next(1) || m.pick.timing() {
		t.Error("back at one worker: its choice was not kept")
	}
	// Trials cut short by a change of GOMAXPROCS go on where they were.
	trial := func(workers int32) {
		l := &launch{m: m, units: 1, workers: workers}
		l.native = m.pick.next(workers)
		l.busy.Store(5)
		m.pick.record(l)
	}
	trial(3)
	trial(3)
	m.pick.next(1)
	for range 2*trialsEach - 2 {
		trial(3)
	}
	if m.pick.timing() {
		t.Error("three workers: trials interrupted by a change of GOMAXPROCS started over")
	}
	forced := &module{native: func(*native.Launch) {}}
	forced.pick.forced = true
	forced.pick.choice.Store(1)
	if !forced.pick.next(1) || !forced.pick.next(8) {
		t.Error("WithNative(true) ran the closures at a new worker count")
	}
}
