// Package pool is the LIFO free list behind qd's stream and event pools:
// values are made on demand by New, lent by Get and given back by Put, the
// most recently returned first (a stream or event that was just used is
// warm in the driver). The pool grows to the most values out at once and
// remembers every value it made, for the owner to release at the end.
//
// Its cost is what a stream-parallel launch pays per borrowed stream, so it
// is one mutex and a slice; `qd bench` measures Get+Put of this type.
package pool

import "sync"

// Pool lends values of type T. The zero value is not usable: set New.
type Pool[T any] struct {
	// New makes a value when none is free.
	New func() (T, error)

	mu   sync.Mutex
	free []T
	all  []T
	out  int
}

// Get returns a free value, or a new one.
func (p *Pool[T]) Get() (T, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free = p.free[:n-1]
		p.out++
		p.mu.Unlock()
		return v, nil
	}
	p.out++
	p.mu.Unlock()
	v, err := p.New()
	p.mu.Lock()
	if err != nil {
		p.out--
	} else {
		p.all = append(p.all, v)
	}
	p.mu.Unlock()
	return v, err
}

// Put gives v back.
func (p *Pool[T]) Put(v T) {
	p.mu.Lock()
	p.free = append(p.free, v)
	p.out--
	p.mu.Unlock()
}

// Free is the number of values made and not lent.
func (p *Pool[T]) Free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Out is the number of values lent and not given back.
func (p *Pool[T]) Out() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out
}

// Drain forgets every value the pool made and returns them, for the owner
// to release.
func (p *Pool[T]) Drain() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := p.all
	p.all, p.free, p.out = nil, nil, 0
	return all
}
