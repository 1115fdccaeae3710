package cpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
)

// backendEvent is backend.Event; the alias keeps signatures short.
type backendEvent = backend.Event

// signal is one recorded point of an event: it completes when its marker op
// runs on the stream. A new signal per Record keeps earlier waiters tied to
// the point they waited for, as CUDA does.
type signal struct {
	done  chan struct{}
	state atomic.Bool
	at    time.Time // completion time, set before done closes (timing events)
	timed bool
	// cap is the capture the signal was recorded in (nil outside one),
	// idx its number there: a point of a graph, which never completes
	// (capture.go).
	cap *capture
	idx int
}

func (g *signal) complete() {
	if g.timed {
		g.at = time.Now()
	}
	g.state.Store(true)
	close(g.done)
}

func (g *signal) isDone() bool { return g.state.Load() }

type event struct {
	timing bool
	mu     sync.Mutex
	sig    *signal // last recorded point; nil if never recorded
}

func (e *event) last() *signal {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sig
}

func (e *event) Record(bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: cannot record on a %T", bs)
	}
	g := &signal{done: make(chan struct{}), timed: e.timing}
	if err := s.enqueue(op{kind: opSignal, sig: g}); err != nil {
		return err
	}
	e.mu.Lock()
	e.sig = g
	e.mu.Unlock()
	return nil
}

func (e *event) Synchronize() error {
	if g := e.last(); g != nil {
		if g.cap != nil {
			return errCapturedSig
		}
		<-g.done
	}
	return nil
}

func (e *event) Query() (bool, error) {
	g := e.last()
	if g != nil && g.cap != nil {
		return false, errCapturedSig
	}
	return g == nil || g.isDone(), nil
}

var errNotTiming = errors.New("cpu backend: Elapsed needs two timing events")

func (e *event) Elapsed(end backend.Event) (time.Duration, error) {
	other, ok := end.(*event)
	if !ok {
		return 0, fmt.Errorf("cpu backend: Elapsed with a %T", end)
	}
	if !e.timing || !other.timing {
		return 0, errNotTiming
	}
	a, b := e.last(), other.last()
	if a == nil || b == nil {
		return 0, errors.New("cpu backend: Elapsed needs two recorded events")
	}
	if a.cap != nil || b.cap != nil {
		return 0, errCapturedSig
	}
	if !a.isDone() || !b.isDone() {
		return 0, errors.New("cpu backend: Elapsed: an event is not complete yet")
	}
	return b.at.Sub(a.at), nil
}

func (e *event) Close() error { return nil }
