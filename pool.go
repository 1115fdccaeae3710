package qd

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/benchsuite/probe"
)

// The benchmark suite measures the pool through this hook (the pool is not
// part of the API).
func init() {
	probe.PoolCycle = func(prog any, n int) (time.Duration, error) {
		p, ok := prog.(*Program)
		if !ok || n <= 0 {
			return 0, fmt.Errorf("%w: PoolCycle(%T, %d)", ErrInvalidArgument, prog, n)
		}
		if err := p.enter(); err != nil {
			return 0, err
		}
		defer p.exit()
		s, err := p.pool.acquire() // the first may create the stream
		if err != nil {
			return 0, err
		}
		p.pool.release(s)
		t0 := time.Now()
		for range n {
			s, _ := p.pool.acquire()
			p.pool.release(s)
		}
		return time.Since(t0) / time.Duration(n), nil
	}
}

// streamPool lends streams to stream-parallel launches. It is LIFO so the
// most recently used (warm) stream goes out first, and grows to the largest
// number of streams out at once. Streams go back while their work may still
// be in flight: stream order serialises any later use, and every launch
// makes a borrowed stream wait for its fork event first.
type streamPool struct {
	p    *Program
	mu   sync.Mutex
	free []*streamCore
	out  int // streams lent and not returned; tests check it returns to 0
}

func (sp *streamPool) acquire() (*streamCore, error) {
	sp.mu.Lock()
	if n := len(sp.free); n > 0 {
		s := sp.free[n-1]
		sp.free = sp.free[:n-1]
		sp.out++
		sp.mu.Unlock()
		return s, nil
	}
	sp.out++
	sp.mu.Unlock()
	least, _ := sp.p.dev.PriorityRange()
	bs, err := sp.p.dev.NewStream(least)
	if err != nil {
		sp.mu.Lock()
		sp.out--
		sp.mu.Unlock()
		return nil, fmt.Errorf("qd: creating a pooled stream: %w", err)
	}
	return sp.p.registerStream(bs, streamPooled), nil
}

func (sp *streamPool) release(s *streamCore) {
	sp.mu.Lock()
	sp.free = append(sp.free, s)
	sp.out--
	sp.mu.Unlock()
}

// eventPool recycles untimed events for fork/join and host waits. An event
// goes back as soon as the wait on it is enqueued: a wait keeps the point
// recorded at the time it was enqueued, so recording the event again later
// does not disturb it.
type eventPool struct {
	p    *Program
	mu   sync.Mutex
	free []backend.Event
	all  []backend.Event // for Program.Close
}

func (ep *eventPool) get() (backend.Event, error) {
	ep.mu.Lock()
	if n := len(ep.free); n > 0 {
		e := ep.free[n-1]
		ep.free = ep.free[:n-1]
		ep.mu.Unlock()
		return e, nil
	}
	ep.mu.Unlock()
	e, err := ep.p.dev.NewEvent(false)
	if err != nil {
		return nil, fmt.Errorf("qd: creating a pooled event: %w", err)
	}
	ep.mu.Lock()
	ep.all = append(ep.all, e)
	ep.mu.Unlock()
	return e, nil
}

func (ep *eventPool) put(e backend.Event) {
	ep.mu.Lock()
	ep.free = append(ep.free, e)
	ep.mu.Unlock()
}

func (ep *eventPool) closeAll() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var errs []error
	for _, e := range ep.all {
		errs = append(errs, e.Close())
	}
	ep.all, ep.free = nil, nil
	return errors.Join(errs...)
}
