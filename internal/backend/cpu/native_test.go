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
				l := &launch{m: m, units: 1}
				l.native = m.pick.next()
				ran = append(ran, l.native)
				d := c.closure
				if l.native {
					d = c.native
				}
				l.busy.Store(int64(d))
				if len(ran) == 1 {
					failed := &launch{m: m, units: 1, native: true}
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
			if got := m.pick.next(); got != (c.want == 1) {
				t.Errorf("after the choice a launch runs native=%v", got)
			}
		})
	}
}
