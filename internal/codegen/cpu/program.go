package cpu

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/native"
)

// Array is one array argument: Data points at the product of Shape's
// elements of the parameter's element type (ir.Bool: 1 byte each, Go bool
// layout; a record: Rec.Size bytes each, Go's layout), row-major; unused
// dims are 1.
type Array = native.Array

// Args are one launch's arguments, indexed by ir.Param.Index.
type Args struct {
	Scalars []uint64 // scalar params as ir.Const bit patterns
	Arrays  []Array  // array params
	Temps   []uint64 // per-launch temporaries, slot = plan.TempSlot[v], same encoding
	// Stop, when set, is read at every iteration of every loop in the
	// kernel's code: once it is true, Run returns ErrStopped. It is how the
	// CPU backend stops a kernel whose loop never ends (a launch's context,
	// Program.Close); the backend checks it between chunks of a parallel
	// range itself.
	Stop *atomic.Bool
}

// ErrStopped is returned by Task.Run when Args.Stop was set while it ran.
var ErrStopped = errors.New("cpu: kernel stopped")

// Program is a compiled plan.
type Program struct {
	Plan     *lower.Plan
	Tasks    []*Task
	NumTemps int
}

// Range is the iteration space of a parallel task, evaluated once per launch.
type Range struct {
	Ext   [3]int64
	Dims  int
	Total int64 // product of Ext[:Dims], 0 if any extent <= 0
	// Threads is a block task's threads per block (its Size), 1 to
	// ir.MaxBlockDim; 0 in other tasks. A block task's Total counts
	// blocks, so a block is Threads iterations of work.
	Threads int64
}

// Task is one compiled task of the plan.
type Task struct {
	Kind  lower.TaskKind
	Group int
	// Prepare evaluates the extents of a parallel task (serial task: Total
	// 1), or a block task's count of blocks (Total) and their size
	// (Threads).
	Prepare func(a *Args) (Range, error)
	// Run runs flattened iterations [lo, hi) (row-major over Ext) of a
	// parallel task, blocks [lo, hi) of a block task, or the whole serial
	// task for lo=0, hi=1. Safe to call concurrently from several
	// goroutines on disjoint ranges with one Args.
	Run func(a *Args, r Range, lo, hi int64) error
}

// rowMin is the shortest innermost extent for which batches are aligned to
// rows (so outer indices are uniform and the inner one contiguous); shorter
// rows use flat batches that span rows. Flat batches rebuild every index
// vector per reference, which costs far more than the closure calls of a
// short row batch: a 64×64 heat step ran 7× faster in row mode, and 8, 16
// and 32 lanes measured alike, so rows go flat only when very short.
const rowMin = 16

// code is one compiled body and the frame size it needs.
type code struct {
	body  func(*frame)
	size  frameSize
	exitR int // register of per-lane loop exit codes, -1 if unused
	// flush writes the totals reductions hold back to memory, at the end
	// of a run (reduce.go).
	flush []func(*frame)
	// eager fill the parallel index variables that the body assigns to:
	// those are ordinary per-lane variables, set at the start of a batch.
	eager []func(*frame)
}

// Compile compiles every task of plan.
func Compile(plan *lower.Plan) (prog *Program, err error) {
	if plan == nil || plan.Kernel == nil {
		return nil, &ir.Error{Msg: "cpu: nil plan"}
	}
	k := plan.Kernel
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, ir.Errorf(k.Pos, k.Name, "cpu code generator: internal error: %v", r)
		}
	}()
	prog = &Program{Plan: plan, NumTemps: len(plan.Temps)}
	for _, t := range plan.Tasks {
		ct, err := compileTask(plan, t)
		if err != nil {
			return nil, err
		}
		prog.Tasks = append(prog.Tasks, ct)
	}
	return prog, nil
}

func compileTask(plan *lower.Plan, t *lower.Task) (*Task, error) {
	task := &Task{Kind: t.Kind, Group: t.Group}
	switch t.Kind {
	case lower.Serial:
		c := newCompiler(plan, t, modeSerial)
		cd, err := c.compileBody(t.Body)
		if err != nil {
			return nil, err
		}
		pool := newFramePool(cd.size)
		task.Prepare = func(*Args) (Range, error) {
			return Range{Ext: [3]int64{1, 1, 1}, Dims: 1, Total: 1}, nil
		}
		task.Run = func(a *Args, r Range, lo, hi int64) error {
			if lo != 0 || hi != 1 {
				return ir.Errorf(t.Pos, plan.Kernel.Name, "serial task run over [%d, %d), want [0, 1)", lo, hi)
			}
			return runSerial(pool, cd, a)
		}
	case lower.Parallel:
		loop := t.Loop
		if loop == nil || len(loop.Extents) < 1 || len(loop.Extents) > 3 || len(loop.Vars) != len(loop.Extents) {
			return nil, ir.Errorf(t.Pos, plan.Kernel.Name, "parallel loop must have 1 to 3 extents, one variable each")
		}
		dims := len(loop.Extents)
		cr := newCompiler(plan, t, modeRow)
		row, err := cr.compileBody(loop.Body)
		if err != nil {
			return nil, err
		}
		flat := row
		if dims > 1 {
			cf := newCompiler(plan, t, modeFlat)
			if flat, err = cf.compileBody(loop.Body); err != nil {
				return nil, err
			}
		}
		ce := newCompiler(plan, t, modeSerial)
		ext, err := ce.extents(loop)
		if err != nil {
			return nil, err
		}
		pool := newFramePool(row.size.max(flat.size).max(frameSize{regs: ce.maxRegs, masks: ce.nmasks}))
		name, pos := plan.Kernel.Name, loop.Pos
		task.Prepare = func(a *Args) (Range, error) {
			f := pool.get(a)
			f.n = 1
			f.m = f.allMask()
			r := Range{Ext: [3]int64{1, 1, 1}, Dims: dims, Total: 1}
			for d, e := range ext {
				r.Ext[d] = e(f)
			}
			err := f.err
			pool.put(f)
			if err != nil {
				return Range{}, err
			}
			for d := range dims {
				if r.Ext[d] <= 0 {
					r.Total = 0
					return r, nil
				}
			}
			for d := range dims {
				hi, lo := bits.Mul64(uint64(r.Total), uint64(r.Ext[d]))
				if hi != 0 || lo > 1<<62 {
					// A copy: slicing r itself would move r to the heap on
					// every launch, not just this one.
					ext := r.Ext
					return Range{}, ir.Errorf(pos, name, "iteration space %v is too large", ext[:dims])
				}
				r.Total = int64(lo)
			}
			return r, nil
		}
		task.Run = func(a *Args, r Range, lo, hi int64) error {
			if r.Dims != dims || lo < 0 || hi > r.Total || lo > hi {
				return ir.Errorf(pos, name, "run over [%d, %d) of a %d-dimensional range of %d iterations (task has %d dimensions)", lo, hi, r.Dims, r.Total, dims)
			}
			if lo == hi {
				return nil
			}
			if dims > 1 && r.Ext[dims-1] < rowMin {
				return runParallel(pool, flat, a, &r, lo, hi, false)
			}
			return runParallel(pool, row, a, &r, lo, hi, true)
		}
	case lower.Block:
		if err := compileBlocks(plan, t, task); err != nil {
			return nil, err
		}
	default:
		return nil, ir.Errorf(t.Pos, plan.Kernel.Name, "unknown task kind %v", t.Kind)
	}
	return task, nil
}

// framePool hands out frames of one task's size.
type framePool struct {
	p    sync.Pool
	size frameSize
}

func newFramePool(size frameSize) *framePool {
	fp := &framePool{size: size}
	fp.p.New = func() any { return newFrame(fp.size) }
	return fp
}

func (fp *framePool) get(a *Args) *frame {
	f := fp.p.Get().(*frame)
	f.a, f.err, f.off = a, nil, 0
	return f
}

func (fp *framePool) put(f *frame) {
	f.a, f.err, f.m = nil, nil, mask{}
	fp.p.Put(f)
}

// internalError turns a panic (a code generator bug, or arguments that do
// not match the kernel) into an error so that Run never panics.
func internalError(r any) error {
	return fmt.Errorf("cpu: kernel run failed: %v (arguments do not match the kernel, or a code generator bug)", r)
}

func runSerial(pool *framePool, cd *code, a *Args) (err error) {
	f := pool.get(a)
	defer func() {
		if r := recover(); r != nil {
			err = internalError(r)
		}
	}()
	f.n = 1
	f.m = f.allMask()
	f.ix, f.ext, f.dims = [3]int64{}, [3]int64{1, 1, 1}, 1
	if cd.exitR >= 0 {
		reg[int32](f, cd.exitR)[0] = 0
	}
	cd.body(f)
	err = f.err
	pool.put(f)
	return err
}

func runParallel(pool *framePool, cd *code, a *Args, r *Range, lo, hi int64, rowAligned bool) (err error) {
	f := pool.get(a)
	defer func() {
		if r := recover(); r != nil {
			err = internalError(r)
		}
	}()
	dims := r.Dims
	last := dims - 1
	f.ext, f.dims = r.Ext, dims
	clear(f.red)
	var ix [3]int64
	rem := lo
	for d := last; d >= 0; d-- {
		ix[d] = rem % r.Ext[d]
		rem /= r.Ext[d]
	}
	for pos := lo; pos < hi; {
		n := min(int64(Batch), hi-pos)
		if rowAligned {
			n = min(n, r.Ext[last]-ix[last])
		}
		f.n = int(n)
		f.ix = ix
		f.m = f.allMask()
		if cd.exitR >= 0 {
			clear(reg[int32](f, cd.exitR))
		}
		for _, e := range cd.eager {
			e(f)
		}
		cd.body(f)
		if f.err != nil {
			break
		}
		pos += n
		// Advance the multi-index of lane 0 by n.
		ix[last] += n
		for d := last; d > 0 && ix[d] >= r.Ext[d]; d-- {
			carry := ix[d] / r.Ext[d]
			ix[d] -= carry * r.Ext[d]
			ix[d-1] += carry
		}
	}
	// Totals of reductions held back go to memory, after an error too:
	// the batches before it did their work.
	for _, fl := range cd.flush {
		fl(f)
	}
	err = f.err
	pool.put(f)
	return err
}
