package qd

import (
	"sync"
	"sync/atomic"
)

// busy counts operations in progress on an object (launches enqueueing on
// a stream, launches that pinned an array, launches holding a trace) so
// that a Close can wait for them to end. The operations pay two atomic adds
// and one load; the waiter sleeps on a condition and is woken by the last
// operation to leave, instead of polling (which cost about a tenth of a
// core while it waited).
type busy struct {
	n       atomic.Int32
	waiters atomic.Int32
	mu      sync.Mutex
	cond    sync.Cond // L is mu, set by the first wait
}

func (b *busy) enter() { b.n.Add(1) }

// leave ends an operation. The waiter announces itself before it reads the
// count and leave reads the waiters after it lowers the count, so one of the
// two always sees the other: either the waiter sees zero, or leave wakes it
// (under mu, which the waiter holds from its check until it sleeps).
func (b *busy) leave() {
	if b.n.Add(-1) == 0 && b.waiters.Load() > 0 {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// wait blocks until no operation is in progress. The object is already
// marked closed, so operations that start later see the mark and leave at
// once; they may keep the count above zero briefly, never for long.
func (b *busy) wait() {
	b.mu.Lock()
	if b.cond.L == nil {
		b.cond.L = &b.mu
	}
	b.waiters.Add(1)
	for b.n.Load() > 0 {
		b.cond.Wait()
	}
	b.waiters.Add(-1)
	b.mu.Unlock()
}
