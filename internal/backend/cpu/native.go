package cpu

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/native"
)

// The native path: a kernel that `qd gen` generated (package native) is Go
// code compiled into the program. Its task 0 runs the whole kernel on the
// stream's goroutine, which hands each top-level parallel loop to
// nativeRunner; the plan's other tasks are part of it and run nothing.
// Arguments, stop flags and errors are the closure path's.

// runNative runs the launch's generated kernel.
func (l *launch) runNative() error {
	nl := native.NewLaunch(l.m.prog.Plan.Kernel.Name, l.m.nativeFile, l.args.Scalars, l.args.Arrays, l.args.Stop, nativeRunner{})
	err := nl.Run(l.m.native)
	if errors.Is(err, native.ErrStopped) {
		return l.stopErr()
	}
	return err
}

// heavyLoop is the time above which a loop of fewer iterations than two
// chunks is worth splitting: well above what waking the helpers costs
// (a few µs when they are spinning, tens when parked).
const heavyLoop = 50 * time.Microsecond

// nativeRunner splits a generated kernel's parallel loops over the helper
// goroutines (helpers.go), as run splits a closure task: chunks taken from
// both ends, four per worker.
type nativeRunner struct{}

func (nativeRunner) Parallel(n, weight int64, chunk func(lo, hi int64)) {
	workers := int64(runtime.GOMAXPROCS(0))
	if workers == 1 || n == 1 {
		chunk(0, n)
		return
	}
	work := n * weight
	if work/weight != n {
		work = math.MaxInt64
	}
	lo, chunks, _ := split(n, work, workers, func(lo, hi int64) error { chunk(lo, hi); return nil })
	if chunks == 0 {
		return
	}
	np, _ := nativePars.Get().(*nativePar)
	if np == nil {
		np = new(nativePar)
		np.work = np.run
	}
	np.chunk, np.lo, np.hi = chunk, lo, n
	np.size = (n - lo + chunks - 1) / chunks
	np.ends.reset(chunks)
	pool.lend(int(min(workers, chunks))-1, np.work)
	np.chunk = nil
	nativePars.Put(np)
}

// split says how to cut a parallel range of n iterations (work units of
// work in all) over workers: chunks from iteration lo on, four per worker
// and none under minChunk units. A range of fewer units than two chunks
// says nothing of its cost by its count (an n-body step over 3000
// bodies): run times its first iteration, and runs the rest too (chunks
// 0) unless they would take over heavyLoop. Both paths, run's closure
// tasks and nativeRunner's loops, cut their ranges here.
func split(n, work, workers int64, run func(lo, hi int64) error) (lo, chunks int64, err error) {
	if work >= 2*minChunk {
		return 0, min(workers*4, work/minChunk, n), nil
	}
	start := time.Now()
	if err := run(0, 1); err != nil {
		return 0, 0, err
	}
	if time.Since(start)*time.Duration(n-1) < heavyLoop {
		return 0, 0, run(1, n)
	}
	return 1, min(workers*4, n-1), nil
}

// nativePar is one parallel loop lent to helpers.
type nativePar struct {
	chunk  func(lo, hi int64)
	lo, hi int64 // the iterations to split
	size   int64 // per chunk
	ends   chunkEnds
	work   func(helper bool) // run, bound once
}

var nativePars sync.Pool // *nativePar

func (np *nativePar) run(helper bool) {
	for {
		c, ok := np.ends.take(helper)
		if !ok {
			return
		}
		lo := np.lo + c*np.size
		np.chunk(lo, min(lo+np.size, np.hi))
	}
}

// pathPick chooses, per kernel and worker count, between its generated
// code and the closures, by measuring both: neither wins everywhere. The
// closures' SSE2 passes beat plain Go on float streams (saxpy, stencils,
// short rows), and the generated code, which is plain Go, beats the
// closures on control flow, serial loops, scatters and data-dependent
// loops (docs/cpu.md has the figures); and the faster on one core may
// not be the faster on several (a 1×4-blocked matrix product's closures
// ran 2× slower on two cores than on one). The first launches of a kernel
// at a GOMAXPROCS alternate between the two, each timed on the stream's
// goroutine (the tasks' time over the elements of the launch's arrays);
// after trialsEach launches of each, the faster per element runs every
// later launch at that GOMAXPROCS. Both give the same results (the tests
// compare them bit for bit), except the order in which float reductions
// add up, which no parallel path fixes.
type pathPick struct {
	forced  bool         // WithNative(true): always the generated code
	choice  atomic.Int32 // 0 undecided, 1 native, 2 closures: read without mu on every launch
	workers atomic.Int32 // the GOMAXPROCS choice and trials are for
	mu      sync.Mutex
	trial   pickTrials
	others  map[int32]pickTrials // the state at other worker counts
}

// pickTrials is the state of the choice at one worker count.
type pickTrials struct {
	choice int32
	trials int // launches begun while undecided
	best   [2]float64
	done   [2]int
}

// trialsEach is the number of timed launches of each path.
const trialsEach = 3

// next says whether the next launch, at workers (GOMAXPROCS), runs the
// generated code.
func (p *pathPick) next(workers int32) bool {
	if p.forced {
		return true
	}
	if c := p.choice.Load(); c != 0 && p.workers.Load() == workers {
		return c == 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.workers.Load(); w != workers {
		// A new GOMAXPROCS: keep this count's state, take up that one's.
		if p.others == nil {
			p.others = map[int32]pickTrials{}
		}
		p.trial.choice = p.choice.Load()
		p.others[w] = p.trial
		p.trial = p.others[workers]
		p.workers.Store(workers)
		p.choice.Store(p.trial.choice)
	}
	if c := p.choice.Load(); c != 0 {
		return c == 1
	}
	p.trial.trials++
	return p.trial.trials%2 == 1
}

// timing reports whether launches are still timed.
func (p *pathPick) timing() bool { return p.choice.Load() == 0 }

// record takes a finished launch's time into the choice.
func (p *pathPick) record(l *launch) {
	if l.m.native == nil || !p.timing() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.timing() || l.err.Load() != nil || l.workers != p.workers.Load() {
		return
	}
	i := 1
	if l.native {
		i = 0
	}
	per := float64(l.busy.Load()) / float64(l.units)
	t := &p.trial
	if t.done[i] == 0 || per < t.best[i] {
		t.best[i] = per
	}
	t.done[i]++
	if t.done[0] >= trialsEach && t.done[1] >= trialsEach {
		c := int32(2)
		if t.best[0] <= t.best[1] {
			c = 1
		}
		p.choice.Store(c)
	}
}
