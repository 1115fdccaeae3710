package cpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	cg "github.com/quadrants-go/qd/internal/codegen/cpu"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/native"
)

type module struct {
	dev  *Device
	prog *cg.Program
	pool sync.Pool // *launch
	// sizes are the block sizes of the block tasks (qd.Blocks), from the
	// scalars: Begin refuses one outside 1..1024, as a GPU launch does,
	// rather than the task failing later on its stream.
	sizes []blockSize
	// native is the kernel as qd gen generated it (lower.Plan.Native):
	// its task 0 runs the whole kernel, the other tasks nothing
	// (native.go).
	native     native.Func
	nativeFile string
	pick       pathPick // native.go: which of the two runs this kernel
	// cost is, per task, the time per iteration (ns) its last short run
	// took: a later launch of a short heavy loop splits without timing
	// its first iteration again (shortSplit).
	cost []atomic.Int64
}

type blockSize struct {
	size   kabi.TotalFunc
	pos    ir.Pos
	kernel string
}

// launch holds one call's arguments and temporaries: per call, so the same
// kernel can run on several streams at once with different arguments.
type launch struct {
	m    *module
	args cg.Args
	err  atomic.Pointer[error] // the first error a task raised
	ctx  context.Context       // the launch's context, if any
	// unstop releases a launch's own stop flag (launches with a context).
	unstop func()
	// native: this launch runs the generated kernel (module.native);
	// busy is the time its tasks ran and units its arrays' elements, for
	// the module's choice of path (native.go), made per workers, the
	// GOMAXPROCS it was launched at.
	native  bool
	busy    atomic.Int64
	units   int64
	workers int32
}

// fail keeps the first error a task of the launch raised. Tasks of
// stream-parallel groups run on pooled streams; keeping their errors here,
// not on those streams, lets End report them once on the launch stream
// (which runs End after joining every group) and returns the pooled
// streams to the pool clean.
func (l *launch) fail(err error) { l.err.CompareAndSwap(nil, &err) }

// takeErr returns the launch's error and forgets it, for End.
func (l *launch) takeErr() error {
	if p := l.err.Swap(nil); p != nil {
		return *p
	}
	return nil
}

func (m *module) Begin(bs backend.Stream, a *backend.Args) (backend.Launch, error) {
	l, _ := m.pool.Get().(*launch)
	if l == nil {
		l = &launch{m: m}
	}
	for _, bs := range m.sizes {
		if s := bs.size(a.Scalars, nil); s < 1 || s > ir.MaxBlockDim {
			m.pool.Put(l)
			return nil, ir.Errorf(bs.pos, bs.kernel, "qd.Blocks block size %d is outside 1..%d: a block has at most %d threads", s, ir.MaxBlockDim, ir.MaxBlockDim)
		}
	}
	n := len(a.Scalars)
	l.args.Scalars = append(l.args.Scalars[:0], a.Scalars...)
	if cap(l.args.Arrays) < n {
		l.args.Arrays = make([]cg.Array, n)
	}
	l.args.Arrays = l.args.Arrays[:n]
	for i, arr := range a.Arrays {
		if arr.Buf == nil {
			l.args.Arrays[i] = cg.Array{}
			continue
		}
		b, ok := arr.Buf.(*buffer)
		if !ok {
			m.pool.Put(l)
			return nil, fmt.Errorf("cpu backend: argument %d is a %T, not a CPU buffer", i, arr.Buf)
		}
		l.args.Arrays[i] = cg.Array{Data: b.ptr, Shape: arr.Shape, Rows: &b.rows}
	}
	nt := m.prog.NumTemps
	if cap(l.args.Temps) < nt {
		l.args.Temps = make([]uint64, nt)
	}
	l.args.Temps = l.args.Temps[:nt]
	clear(l.args.Temps)
	l.ctx = a.Ctx
	l.args.Stop, l.unstop = m.dev.stopFlag(a.Ctx)
	l.native = false
	if m.native != nil {
		l.workers = int32(runtime.GOMAXPROCS(0))
		l.native = m.pick.next(l.workers)
	}
	if m.native != nil && m.pick.timing() {
		l.busy.Store(0)
		l.units = 1
		for _, arr := range l.args.Arrays {
			if arr.Data != nil {
				l.units += int64(arr.Shape[0]) * int64(arr.Shape[1]) * int64(arr.Shape[2]) * int64(arr.Shape[3])
			}
		}
	}
	return l, nil
}

func (l *launch) Run(task int, bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: launch on a %T", bs)
	}
	if task < 0 || task >= len(l.m.prog.Tasks) {
		return fmt.Errorf("cpu backend: no task %d", task)
	}
	if l.native && task > 0 {
		return nil // task 0 ran them
	}
	return s.enqueue(op{kind: opRun, l: l, task: task})
}

func (l *launch) End(bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: launch end on a %T", bs)
	}
	return s.enqueue(op{kind: opEnd, l: l})
}

func (l *launch) release() {
	clear(l.args.Arrays) // drop references to user memory
	if l.unstop != nil {
		l.unstop()
		l.unstop = nil
	}
	l.ctx, l.args.Stop = nil, nil
	l.m.pool.Put(l)
}

// stopped reports whether the launch must stop.
func (l *launch) stopped() bool { return l.args.Stop.Load() }

// stopErr is the error of a stopped launch, naming the kernel and wrapping
// the cause (the context's, or Program.Close's).
func (l *launch) stopErr() error {
	return fmt.Errorf("kernel %s: stopped: %w", l.m.prog.Plan.Kernel.Name, l.m.dev.stopCause(l.ctx))
}

// runRange runs iterations [lo, hi) of task t in steps of at most
// stepIters, checking between steps whether the launch must stop: loops
// inside the kernel check on their own (cg.Args.Stop), but a long
// parallel range of loop-free iterations has no loop to check in.
func (l *launch) runRange(t *cg.Task, r cg.Range, lo, hi int64) error {
	step := int64(stepIters)
	if r.Threads > 0 {
		step = max(1, step/r.Threads) // a block task's blocks are Threads iterations each
	}
	for lo < hi {
		if l.stopped() {
			return l.stopErr()
		}
		end := min(hi, lo+step)
		if err := t.Run(&l.args, r, lo, end); err != nil {
			if errors.Is(err, cg.ErrStopped) {
				return l.stopErr()
			}
			return err
		}
		lo = end
	}
	return nil
}

func (m *module) Close() error { return nil }

// minChunk is the fewest iterations worth handing to another goroutine:
// below it, starting the goroutine costs more than the work.
const minChunk = 2048

// stepIters is the most iterations of a parallel range run between two
// checks of the stop flag: one Task.Run call per step costs well under
// 1 % of the step's work, and a stop takes effect within one step.
const stepIters = 1 << 16

// run runs one task of the launch on the calling (stream) goroutine, with
// helper goroutines (helpers.go) for large parallel tasks.
func (l *launch) run(task int) error {
	if l.stopped() {
		return l.stopErr() // tasks queued behind a stop do not start
	}
	if l.m.native != nil && l.m.pick.timing() {
		start := time.Now()
		defer func() { l.busy.Add(int64(time.Since(start))) }()
	}
	if l.native {
		return l.runNative()
	}
	t := l.m.prog.Tasks[task]
	r, err := t.Prepare(&l.args)
	if err != nil || r.Total <= 0 {
		return err
	}
	workers := int(l.workers) // read at Begin for a kernel with generated code
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	work := r.Total // iterations
	if r.Threads > 0 {
		// A block task counts blocks, each a thread loop's iterations.
		work = r.Total * r.Threads
		if work/r.Threads != r.Total {
			work = math.MaxInt64
		}
	}
	if workers == 1 || r.Total == 1 {
		return l.runRange(t, r, 0, r.Total)
	}
	// Several chunks per worker balance uneven iterations. The stream's
	// goroutine takes them from the front, helpers from the back, so that
	// each core works on the same part of the arrays launch after launch
	// and finds it in its own cache.
	var lo, chunks int64
	short := work < 2*minChunk
	if short {
		lo, chunks, err = l.shortSplit(task, t, r, int64(workers))
	} else {
		lo, chunks, err = split(r.Total, work, int64(workers), func(lo, hi int64) error { return l.runRange(t, r, lo, hi) })
	}
	if chunks == 0 || err != nil {
		return err
	}
	var start time.Time
	if short {
		start = time.Now()
	}
	pt, _ := parallels.Get().(*parallel)
	if pt == nil {
		pt = new(parallel)
		pt.work = pt.run // bound once: lending it allocates nothing
	}
	pt.l, pt.t, pt.r, pt.lo = l, t, r, lo
	pt.size = (r.Total - lo + chunks - 1) / chunks
	pt.ends.reset(chunks)
	pool.lend(min(workers, int(chunks))-1, pt.work)
	if short {
		// The time per iteration of the split part, on min(workers, chunks) cores.
		l.m.cost[task].Store(int64(time.Since(start)) * min(int64(workers), chunks) / (r.Total - lo))
	}
	err = nil
	if p := pt.firstErr.Swap(nil); p != nil {
		err = *p
	}
	// lend returned once every helper had left: nothing refers to pt.
	pt.l, pt.t = nil, nil
	parallels.Put(pt)
	return err
}

// shortSplit is split for a closure task of fewer iterations than two
// chunks. A batch of the closures costs a fixed time per statement
// whatever its lanes, so that a loop split into more batches than it
// needs does more work in all (an n-body step over 3000 bodies did 25 %
// more on two cores than on one), and timing a first iteration alone
// costs a whole batch. So the task's time per iteration is kept from its
// last launch: once known, a heavy loop is cut into whole batches from
// its start (as few as give every worker a share), a light one runs on
// the stream's goroutine; the first launch times its first iteration, as
// split does.
func (l *launch) shortSplit(task int, t *cg.Task, r cg.Range, workers int64) (lo, chunks int64, err error) {
	n := r.Total
	run := func(lo, hi int64) error {
		start := time.Now()
		err := l.runRange(t, r, lo, hi)
		l.m.cost[task].Store(int64(time.Since(start)) / (hi - lo))
		return err
	}
	per := l.m.cost[task].Load()
	if per == 0 {
		return split(n, n, workers, run)
	}
	if time.Duration(per*n) < heavyLoop {
		return 0, 0, run(0, n)
	}
	size := (n + workers*4 - 1) / (workers * 4)
	if r.Threads == 0 { // iterations are lanes of batches; a block task's blocks are not
		size = max(size, min(cg.Batch, (n+workers-1)/workers))
	}
	return 0, (n + size - 1) / size, nil
}

// parallel is what the stream's goroutine and its helpers share while
// they run one parallel task's chunks; pooled, so that a launch allocates
// none of it.
type parallel struct {
	l        *launch
	t        *cg.Task
	r        cg.Range
	lo       int64 // the first iteration to split (the rest ran already)
	size     int64 // iterations per chunk
	ends     chunkEnds
	firstErr atomic.Pointer[error]
	work     func(helper bool) // run, bound once
}

var parallels sync.Pool // *parallel

// run takes chunks until none is left or one has failed.
func (pt *parallel) run(helper bool) {
	defer func() {
		if p := recover(); p != nil {
			e := fmt.Errorf("cpu backend: internal error in a parallel task: %v", p)
			pt.firstErr.CompareAndSwap(nil, &e)
		}
	}()
	for pt.firstErr.Load() == nil {
		c, ok := pt.ends.take(helper)
		if !ok {
			return
		}
		lo := pt.lo + c*pt.size
		if err := pt.l.runRange(pt.t, pt.r, lo, min(lo+pt.size, pt.r.Total)); err != nil {
			kept := err // a copy made only here: &err would cost every chunk a heap word
			pt.firstErr.CompareAndSwap(nil, &kept)
			return
		}
	}
}
