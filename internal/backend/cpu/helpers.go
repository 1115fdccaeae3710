package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Helpers run the chunks of a parallel task beside the stream goroutine
// that launched it. A goroutine started for each launch took a thread
// wake-up to begin: 50 µs and more on a VM, against a heat step of 100 µs
// on one core, so two cores gained little on short launches. The helpers
// here outlive a task: after one they keep looking for the next for
// spinFor (a loop of launches finds them awake), then park, and after
// helperPool.parkFor parked they exit.

const spinFor = 200 * time.Microsecond

// job is one parallel task lent to helpers: work takes chunks until none
// are left, and may run on several goroutines at once.
type job struct {
	work    func(helper bool)
	tickets int // helpers still wanted; under helperPool.mu
	// inside counts the helpers that joined and have not left work yet,
	// plus closed once the lender waits for them: the helper that brings
	// it to exactly closed wakes the lender through done.
	inside atomic.Int32
	done   chan struct{}
}

const closed = 1 << 30

// helperPool is the helper goroutines of the process.
type helperPool struct {
	mu      sync.Mutex
	jobs    []*job
	workers int           // helper goroutines alive
	parked  int           // of which parked on wake
	spin    atomic.Int32  // of which looking for a job without parking
	pending atomic.Int32  // tickets of jobs, read without mu by spinning helpers
	wake    chan struct{} // one token per parked helper woken
	parkFor time.Duration // how long a parked helper waits before it exits
	free    sync.Pool     // *job
}

var pool = &helperPool{wake: make(chan struct{}, 1024), parkFor: time.Second}

// lend runs work on the calling goroutine and on up to n helpers at once,
// and returns once every helper that joined has left work. work must be
// safe to call after the last chunk is taken (it then returns at once).
func (p *helperPool) lend(n int, work func(helper bool)) {
	j, _ := p.free.Get().(*job)
	if j == nil {
		j = &job{done: make(chan struct{}, 1)}
	}
	j.work = work
	j.inside.Store(0)
	p.mu.Lock()
	j.tickets = n
	p.jobs = append(p.jobs, j)
	p.pending.Add(int32(n))
	// Spinning helpers find the job; wake parked ones, or start new ones,
	// for the rest.
	for need := n - int(p.spin.Load()); need > 0; need-- {
		if p.parked > 0 {
			p.parked--
			p.wake <- struct{}{}
		} else if p.workers < max(runtime.GOMAXPROCS(0), n+1) {
			p.workers++
			go p.loop()
		}
	}
	p.mu.Unlock()

	work(false)

	// No helper joins after this; wait for those inside to leave.
	p.mu.Lock()
	for i, x := range p.jobs {
		if x == j {
			p.jobs = append(p.jobs[:i], p.jobs[i+1:]...)
			break
		}
	}
	p.pending.Add(-int32(j.tickets))
	j.tickets = 0
	p.mu.Unlock()
	// Wait spinning, as helpers leave within a chunk's time of each other,
	// but not for long: on a busy machine the core is better spent on a
	// helper the system has descheduled inside its last chunk.
	if j.inside.Or(closed) != 0 {
		for start := time.Now(); j.inside.Load() != closed && time.Since(start) < spinFor; {
			runtime.Gosched()
		}
		<-j.done // sent by the helper that left last, at once if it has
	}
	j.work = nil
	p.free.Put(j)
}

// take gives a helper the first job that wants one, or nil.
func (p *helperPool) take() *job {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, j := range p.jobs {
		if j.tickets > 0 {
			j.tickets--
			p.pending.Add(-1)
			j.inside.Add(1)
			return j
		}
	}
	return nil
}

// loop is a helper goroutine.
func (p *helperPool) loop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		j := p.take()
		if j == nil {
			p.spin.Add(1)
			for start := time.Now(); j == nil && time.Since(start) < spinFor; {
				runtime.Gosched()
				if p.pending.Load() > 0 {
					j = p.take()
				}
			}
			p.spin.Add(-1)
		}
		if j == nil {
			if !p.park(timer) {
				return
			}
			continue
		}
		j.work(true)
		if j.inside.Add(-1) == closed {
			j.done <- struct{}{}
		}
	}
}

// park waits for a wake token; false means the helper timed out and was
// counted out of the pool.
func (p *helperPool) park(timer *time.Timer) bool {
	p.mu.Lock()
	if p.pending.Load() > 0 {
		p.mu.Unlock()
		return true
	}
	p.parked++
	wait := p.parkFor
	p.mu.Unlock()
	timer.Reset(wait)
	select {
	case <-p.wake:
		timer.Stop()
		return true
	case <-timer.C:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.wake: // woken as the timer fired: the token is ours
		return true
	default:
	}
	p.parked--
	p.workers--
	return false
}
