package qd

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/pool"
)

// The Program's pools (internal/pool: LIFO, so the most recently used,
// warm, value goes out first; they grow to the most values out at once).
//
// The stream pool lends streams to stream-parallel launches and host
// transfers. Streams go back while their work may still be in flight:
// stream order serialises any later use, and every launch makes a borrowed
// stream wait for its fork event first. Pooled streams are registered with
// the Program like any other, and [Program.Close] destroys them.
//
// The event pool recycles untimed events for fork/join and host waits. An
// event goes back as soon as the wait on it is enqueued: a wait keeps the
// point recorded at the time it was enqueued, so recording the event again
// later does not disturb it.
type (
	streamPool = pool.Pool[*streamCore]
	eventPool  = pool.Pool[backend.Event]
)

// initPools sets how the Program's pools make their values.
func (p *Program) initPools() {
	p.pool.New = func() (*streamCore, error) {
		least, _ := p.dev.PriorityRange()
		bs, err := p.dev.NewStream(least)
		if err != nil {
			return nil, fmt.Errorf("qd: creating a pooled stream: %w", err)
		}
		return p.registerStream(bs, streamPooled), nil
	}
	p.evpool.New = func() (backend.Event, error) {
		e, err := p.dev.NewEvent(false)
		if err != nil {
			return nil, fmt.Errorf("qd: creating a pooled event: %w", err)
		}
		return e, nil
	}
}

// closeEvents destroys every event the event pool made.
func (p *Program) closeEvents() error {
	var errs []error
	for _, e := range p.evpool.Drain() {
		errs = append(errs, e.Close())
	}
	return errors.Join(errs...)
}
