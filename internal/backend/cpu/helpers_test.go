package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor spins until cond holds, failing after a generous bound: a
// rendezvous, not a timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// TestLendRunsBeside: a helper runs work while the lending goroutine is
// still inside it.
func TestLendRunsBeside(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var arrived atomic.Int32
	pool.lend(1, func(bool) {
		arrived.Add(1)
		waitFor(t, "a helper inside work", func() bool { return arrived.Load() >= 2 })
	})
}

// TestLendWaitsForHelpers: jobs lent from several goroutines at once, each
// split into chunks taken by whoever comes; when lend returns every chunk
// is done and no helper is still inside that job's work.
func TestLendWaitsForHelpers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 200 {
				const chunks = 16
				var next, done, inside atomic.Int32
				work := func(bool) {
					inside.Add(1)
					defer inside.Add(-1)
					for next.Add(1) <= chunks {
						done.Add(1)
					}
				}
				pool.lend(1+(g+round)%3, work)
				if done.Load() != chunks || inside.Load() != 0 {
					t.Errorf("goroutine %d round %d: %d chunks done, %d helpers inside after lend", g, round, done.Load(), inside.Load())
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestHelpersExit: parked helpers leave the pool after parkFor.
func TestHelpersExit(t *testing.T) {
	pool.mu.Lock()
	old := pool.parkFor
	pool.parkFor = 10 * time.Millisecond
	pool.mu.Unlock()
	defer func() {
		pool.mu.Lock()
		pool.parkFor = old
		pool.mu.Unlock()
	}()
	pool.lend(1, func(bool) {})
	waitFor(t, "the helpers to exit", func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return pool.workers == 0
	})
}
