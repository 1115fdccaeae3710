package cpu

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Block tasks (ir.Blocks). A block runs on one goroutine, start to end:
// the rules of a block body (lower/blocks.go) make running its thread
// loops one after another give what its threads give running at once, so
// no barrier is needed. Blocks are what a Run call's range counts, and
// the backend deals them to its workers in chunks as it deals the
// iterations of a parallel task.
//
// A block is a batch whose lanes are its threads. A thread loop runs its
// body over the threads as batches of up to Batch lanes, lane k of the
// batch at [t0, t0+Batch) being thread t0+k: the thread index is the
// contiguous index of a row batch (modeRow), so shared and global
// accesses by it take the copy and in-place paths, and comparisons of it
// are lane sets. The block level (statements outside thread loops) is
// uniform, the same for every thread: it runs once, as lane 0 of a batch
// of one, its locals in scalar slots.
//
// Per-thread locals (Blocks.PerThread) are ordinary lane registers,
// which keep their values from one statement to the next, so they need
// no storage of their own: when a block may have more threads than a
// batch has lanes, every register of the task spans blockRegs batches
// (compiler.wide), and the thread loop's batch at t0 views the registers
// from lane t0 (frame.off) — register r's thread t is at lane t of the
// span whatever the batch. The collectives (BlockReduce, BlockScan) and a
// per-thread declaration at the block level read or write all the
// block's lanes of a register at once.
//
// Shared arrays live in one buffer per frame (so per worker, as frames
// are pooled), zeroed at the start of every block, and are arrays of the
// frame's own copy of the launch's Args, after the parameters: loads,
// stores, atomics and their index checks (which name the array) are the
// array parameters' own code.

// blockRegs is how many Batch-lane registers a register of a block task
// spans when its blocks may have ir.MaxBlockDim threads.
const blockRegs = (ir.MaxBlockDim + Batch - 1) / Batch

// blockFrame is a frame's block state.
type blockFrame struct {
	args   Args     // the launch's, with the shared arrays after the parameters
	arrays []Array  // args.Arrays' storage: the parameters, then the shared arrays
	shared []uint64 // the shared arrays' memory, 8-byte aligned
	index  int64    // the block running
	size   int      // its threads
}

// blockPool hands out the frames of one block task.
type blockPool struct {
	p       sync.Pool
	size    frameSize
	nparams int
	shared  []sharedArray
	words   int // of shared memory
}

// sharedArray is the place and shape of one shared array in the buffer.
type sharedArray struct {
	off   int // bytes from the buffer's start
	shape [4]int
}

func newBlockPool(size frameSize, plan *lower.Plan, b *ir.Blocks) *blockPool {
	bp := &blockPool{size: size, nparams: len(plan.Kernel.Params)}
	// The layout of SharedBytes: each array at its alignment, in order.
	n := 0
	for _, a := range b.Shared {
		al := a.SharedAlign()
		n = (n + al - 1) / al * al
		sa := sharedArray{off: n, shape: [4]int{1, 1, 1, 1}}
		copy(sa.shape[:], a.Shared)
		bp.shared = append(bp.shared, sa)
		n += a.SharedBytes()
	}
	bp.words = (n + 7) / 8
	bp.p.New = func() any {
		f := newFrame(bp.size)
		bf := &blockFrame{
			arrays: make([]Array, bp.nparams+len(bp.shared)),
			shared: make([]uint64, max(bp.words, 1)),
		}
		base := unsafe.Pointer(unsafe.SliceData(bf.shared))
		for k, sa := range bp.shared {
			bf.arrays[bp.nparams+k] = Array{Data: unsafe.Add(base, sa.off), Shape: sa.shape}
		}
		f.blk = bf
		return f
	}
	return bp
}

// get is a frame whose Args are a's, with the frame's shared arrays.
func (bp *blockPool) get(a *Args) *frame {
	f := bp.p.Get().(*frame)
	bf := f.blk
	params := bf.arrays[:bp.nparams]
	clear(params[copy(params, a.Arrays):]) // arguments that do not match the kernel fail their index checks
	bf.args = *a
	bf.args.Arrays = bf.arrays
	f.a, f.err, f.off = &bf.args, nil, 0
	return f
}

func (bp *blockPool) put(f *frame) {
	bf := f.blk
	clear(bf.arrays[:bp.nparams]) // drop references to user memory
	bf.args = Args{}
	f.a, f.err, f.m = nil, nil, mask{}
	bp.p.Put(f)
}

// compileBlocks compiles block task t into task.
func compileBlocks(plan *lower.Plan, t *lower.Task, task *Task) error {
	b, name := t.Blocks, plan.Kernel.Name
	if b == nil {
		return ir.Errorf(t.Pos, name, "block task has no block loop")
	}
	c := newCompiler(plan, t, modeRow)
	limit := Batch
	if k, ok := b.Size.(*ir.Const); !ok || k.Int() > Batch {
		c.wide, limit = blockRegs, blockRegs*Batch
	}
	cd, err := c.compileBody(b.Body)
	if err != nil {
		return err
	}
	ce := newCompiler(plan, t, modeSerial)
	count, size, err := ce.blockExtents(b)
	if err != nil {
		return err
	}
	pool := newBlockPool(cd.size.max(frameSize{regs: ce.maxRegs, masks: ce.nmasks}), plan, b)
	pos := b.Pos
	task.Prepare = func(a *Args) (Range, error) {
		f := pool.get(a)
		f.n = 1
		f.m = f.allMask()
		n, s := count(f), size(f)
		err := f.err
		pool.put(f)
		if err != nil {
			return Range{}, err
		}
		if s < 1 || s > ir.MaxBlockDim {
			return Range{}, ir.Errorf(pos, name, "qd.Blocks block size %d is outside 1..%d: a block has at most %d threads", s, ir.MaxBlockDim, ir.MaxBlockDim)
		}
		n = max(n, 0)
		return Range{Ext: [3]int64{n, 1, 1}, Dims: 1, Total: n, Threads: s}, nil
	}
	task.Run = func(a *Args, r Range, lo, hi int64) error {
		if r.Dims != 1 || r.Threads < 1 || r.Threads > int64(limit) || lo < 0 || hi > r.Total || lo > hi {
			return ir.Errorf(pos, name, "block run over [%d, %d) of %d blocks of %d threads (the task's blocks have 1 to %d)", lo, hi, r.Total, r.Threads, limit)
		}
		if lo == hi {
			return nil
		}
		return runBlocks(pool, cd, a, int(r.Threads), lo, hi)
	}
	return nil
}

// blockExtents compiles a block loop's count and size as launch-time
// closures.
func (c *compiler) blockExtents(b *ir.Blocks) (count, size func(*frame) int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(compileError)
			if !ok {
				panic(r)
			}
			count, size, err = nil, nil, ce.err
		}
	}()
	c.pos = b.Pos
	one := func(e ir.Expr, what string) func(*frame) int64 {
		x, ok := c.expr(e).(*ev[int64])
		if !ok || x.u == nil {
			c.failf("the block %s must be an i64 known before the blocks run", what)
		}
		return x.u
	}
	return one(b.Count, "count"), one(b.Size, "size"), nil
}

// runBlocks runs blocks [lo, hi) of size threads on one frame.
func runBlocks(pool *blockPool, cd *code, a *Args, size int, lo, hi int64) (err error) {
	f := pool.get(a)
	defer func() {
		if r := recover(); r != nil {
			err = internalError(r)
		}
	}()
	bf := f.blk
	bf.size = size
	f.ext, f.dims = [3]int64{int64(size), 1, 1}, 1
	clear(f.red)
	if cd.exitR >= 0 {
		// Loops leave their lanes' exit codes at zero; a run starts so.
		clear(lanesOf[int32](f, cd.exitR, size))
	}
	// The block level is lane 0 of a batch of one; thread loops and
	// control flow give the batch back as they found it.
	f.n, f.off, f.ix = 1, 0, [3]int64{}
	f.m = f.allMask()
	shared, stop := bf.shared[:pool.words], a.Stop
	for b := lo; b < hi; b++ {
		// A block has no loop of its own to check in (forStmt's check).
		if stop != nil && stop.Load() {
			f.fail(ErrStopped)
			break
		}
		if len(shared) > 0 {
			clear(shared)
		}
		bf.index = b
		if cd.body(f); f.err != nil {
			break
		}
	}
	// Totals of reductions held back go to memory, after an error too.
	for _, fl := range cd.flush {
		fl(f)
	}
	err = f.err
	pool.put(f)
	return err
}

// lanesOf views the first n lanes of register r as values of T, whatever
// the batch: the block's threads 0..n-1 of a per-thread local.
func lanesOf[T scalar](f *frame, r, n int) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(&f.regs[r*Batch])), n)
}

// blockIndex compiles a read of the block index.
func (c *compiler) blockIndex() value {
	if c.task.Blocks.Var.Type != ir.I64 {
		c.failf("block index %s has type %v, want i64", c.task.Blocks.Var.Name, c.task.Blocks.Var.Type)
	}
	return uni(func(f *frame) int64 { return f.blk.index })
}

// threadVars marks the index variables of the thread loops of the block
// body as parallel index variables of dimension d (-1: to be set up).
func (c *compiler) threadVars(d int) {
	ir.Inspect(c.task.Blocks.Body, func(n ir.Node) bool {
		if s, ok := n.(*ir.Threads); ok && s.Var != nil {
			if s.Var.Type != ir.I64 {
				c.pos = s.Pos
				c.failf("thread index %s has type %v, want i64", s.Var.Name, s.Var.Type)
			}
			c.index[s.Var] = d
		}
		return true
	})
}

// arraySlot is the index in Args.Arrays of array p: a parameter's own,
// or, for a shared array of the block loop, one after the parameters.
func (c *compiler) arraySlot(p *ir.Param) int {
	if p == nil || !p.IsShared() {
		c.arrayParam(p)
		return p.Index
	}
	b := c.task.Blocks
	k := -1
	if b != nil && c.mode != modeSerial {
		k = slices.Index(b.Shared, p)
	}
	if k < 0 {
		c.failf("shared array %s is used outside its block loop", p.Name)
	}
	if p.Dims != len(p.Shared) || p.Dims < 1 || p.Dims > ir.MaxDims {
		c.failf("shared array %s has %d dimensions and %d extents", p.Name, p.Dims, len(p.Shared))
	}
	return len(c.plan.Kernel.Params) + k
}

// sharedLen is the length of a shared array: its constant extent.
func (c *compiler) sharedLen(e *ir.Len) value {
	c.arraySlot(e.Array)
	if e.Dim < 0 || e.Dim >= e.Array.Dims {
		c.failf("len of dimension %d of %d-dimensional array %s", e.Dim, e.Array.Dims, e.Array.Name)
	}
	return known(int64(e.Array.Shared[e.Dim]))
}

// blockStmt compiles the statements that block tasks add or treat apart:
// thread loops, the collectives and block-level declarations; ok is
// false for the rest.
func (c *compiler) blockStmt(s ir.Stmt) (fn func(*frame), ok bool) {
	if c.mode == modeSerial {
		return nil, false
	}
	switch s := s.(type) {
	case *ir.Threads:
		return c.threadsStmt(s), true
	case *ir.BlockReduce:
		c.levelOnly("a block reduction")
		return c.blockReduce(s), true
	case *ir.BlockScan:
		c.levelOnly("a block scan")
		return c.blockScan(s), true
	case *ir.Decl:
		if c.inThreads || s.Var == nil {
			return nil, false
		}
		if _, temp := c.isTemp(s.Var); temp {
			return nil, false
		}
		if slices.Contains(c.task.Blocks.PerThread, s.Var) {
			return c.perThreadDecl(s), true
		}
		if _, uniform := c.uvars[s.Var]; !uniform {
			// Lane 0 alone would hold it: a thread loop reading it
			// would see garbage in its other lanes.
			c.failf("cpu code generator: block-level local %s is not uniform", s.Var.Name)
		}
	}
	return nil, false
}

func (c *compiler) levelOnly(what string) {
	if c.inThreads {
		c.failf("%s inside a thread loop: it is a statement of the block, between thread loops", what)
	}
}

// threadsStmt compiles a thread loop: its body runs over the block's
// threads in batches of up to Batch lanes.
func (c *compiler) threadsStmt(s *ir.Threads) func(*frame) {
	if c.inThreads {
		c.failf("thread loop inside a thread loop")
	}
	// The block level's loops are not the body's to leave.
	loops := c.loops
	c.inThreads, c.loops = true, nil
	body, ex := c.block(s.Body)
	c.inThreads, c.loops = false, loops
	if len(ex) > 0 {
		c.failf("break or continue out of a thread loop")
	}
	return func(f *frame) {
		n, off, m, ix := f.n, f.off, f.m, f.ix[0]
		size := f.blk.size
		for t0 := 0; t0 < size; t0 += Batch {
			f.off, f.n, f.ix[0] = t0, min(Batch, size-t0), int64(t0)
			f.m = f.allMask()
			if body(f); f.err != nil {
				break
			}
		}
		f.n, f.off, f.m, f.ix[0] = n, off, m, ix
	}
}

// perThreadReg is the register of per-thread local v.
func (c *compiler) perThreadReg(v *ir.Var) int {
	r, ok := c.vars[v]
	if !ok || !slices.Contains(c.task.Blocks.PerThread, v) {
		c.failf("%s is not a per-thread variable of the block loop", v.Name)
	}
	return r
}

// perThreadDecl compiles a per-thread local's declaration: every thread
// of the block starts with the (uniform) value.
func (c *compiler) perThreadDecl(s *ir.Decl) func(*frame) {
	r := c.perThreadReg(s.Var)
	init := s.Init
	if init == nil {
		init = &ir.Const{T: s.Var.Type}
	}
	x := c.expr(init)
	if x.typ() != s.Var.Type {
		c.failf("declaration of %s of type %v with a value of %v", s.Var.Name, s.Var.Type, x.typ())
	}
	switch x := x.(type) {
	case *ev[bool]:
		return fillThreads(x, r)
	case *ev[int32]:
		return fillThreads(x, r)
	case *ev[int64]:
		return fillThreads(x, r)
	case *ev[uint32]:
		return fillThreads(x, r)
	case *ev[uint64]:
		return fillThreads(x, r)
	case *ev[float32]:
		return fillThreads(x, r)
	case *ev[float64]:
		return fillThreads(x, r)
	case *ev[int8]:
		return fillThreads(x, r)
	case *ev[int16]:
		return fillThreads(x, r)
	case *ev[uint8]:
		return fillThreads(x, r)
	case *ev[uint16]:
		return fillThreads(x, r)
	}
	c.failf("per-thread variable %s has invalid type %v", s.Var.Name, s.Var.Type)
	return nil
}

func fillThreads[T scalar](x *ev[T], r int) func(*frame) {
	if x.u != nil {
		xu := x.u
		return func(f *frame) {
			if v := xu(f); f.err == nil {
				fill(lanesOf[T](f, r, f.blk.size), v)
			}
		}
	}
	// A block-level value is the same in every thread; the block level
	// runs as lane 0.
	xv := x.v
	return func(f *frame) {
		if v := xv(f); f.err == nil {
			fill(lanesOf[T](f, r, f.blk.size), v[0])
		}
	}
}

// blockNumber are the types the collectives combine.
type blockNumber interface{ number | small }

// blockReduce compiles a block reduction: the per-thread values folded in
// thread order, as a Go loop over them would (integers wrap; a float sum
// is the sequential one, from zero).
func (c *compiler) blockReduce(s *ir.BlockReduce) func(*frame) {
	xr := c.perThreadReg(s.X)
	slot, ok := c.uvars[s.Result]
	if !ok || !c.declared[s.Result] || slices.Contains(c.task.Blocks.PerThread, s.Result) {
		c.failf("block reduction into %s, which is not a uniform local of the block", s.Result.Name)
	}
	if s.X.Type != s.Result.Type {
		c.failf("block reduction of %v %s into %v %s", s.X.Type, s.X.Name, s.Result.Type, s.Result.Name)
	}
	switch s.Op {
	case ir.Add, ir.Min, ir.Max:
	default:
		c.failf("block reduction with operator %d", s.Op)
	}
	switch s.X.Type {
	case ir.I32:
		return reduceThreads[int32](s.Op, xr, slot)
	case ir.I64:
		return reduceThreads[int64](s.Op, xr, slot)
	case ir.U32:
		return reduceThreads[uint32](s.Op, xr, slot)
	case ir.U64:
		return reduceThreads[uint64](s.Op, xr, slot)
	case ir.F32:
		return reduceThreads[float32](s.Op, xr, slot)
	case ir.F64:
		return reduceThreads[float64](s.Op, xr, slot)
	case ir.I8:
		return reduceThreads[int8](s.Op, xr, slot)
	case ir.I16:
		return reduceThreads[int16](s.Op, xr, slot)
	case ir.U8:
		return reduceThreads[uint8](s.Op, xr, slot)
	case ir.U16:
		return reduceThreads[uint16](s.Op, xr, slot)
	}
	c.failf("block reduction of %v %s: it takes numbers", s.X.Type, s.X.Name)
	return nil
}

func reduceThreads[T blockNumber](op ir.BinOp, xr, slot int) func(*frame) {
	switch op {
	case ir.Min:
		return func(f *frame) {
			x := lanesOf[T](f, xr, f.blk.size)
			acc := x[0]
			for _, v := range x[1:] {
				acc = min(acc, v)
			}
			*scal[T](f, slot) = acc
		}
	case ir.Max:
		return func(f *frame) {
			x := lanesOf[T](f, xr, f.blk.size)
			acc := x[0]
			for _, v := range x[1:] {
				acc = max(acc, v)
			}
			*scal[T](f, slot) = acc
		}
	}
	return func(f *frame) {
		var acc T
		for _, v := range lanesOf[T](f, xr, f.blk.size) {
			acc += v
		}
		*scal[T](f, slot) = acc
	}
}

// blockScan compiles a block scan: prefix sums in thread order, from zero.
func (c *compiler) blockScan(s *ir.BlockScan) func(*frame) {
	xr, rr := c.perThreadReg(s.X), c.perThreadReg(s.Result)
	if s.X.Type != s.Result.Type {
		c.failf("block scan of %v %s into %v %s", s.X.Type, s.X.Name, s.Result.Type, s.Result.Name)
	}
	switch s.X.Type {
	case ir.I32:
		return scanThreads[int32](s.Inclusive, xr, rr)
	case ir.I64:
		return scanThreads[int64](s.Inclusive, xr, rr)
	case ir.U32:
		return scanThreads[uint32](s.Inclusive, xr, rr)
	case ir.U64:
		return scanThreads[uint64](s.Inclusive, xr, rr)
	case ir.F32:
		return scanThreads[float32](s.Inclusive, xr, rr)
	case ir.F64:
		return scanThreads[float64](s.Inclusive, xr, rr)
	case ir.I8:
		return scanThreads[int8](s.Inclusive, xr, rr)
	case ir.I16:
		return scanThreads[int16](s.Inclusive, xr, rr)
	case ir.U8:
		return scanThreads[uint8](s.Inclusive, xr, rr)
	case ir.U16:
		return scanThreads[uint16](s.Inclusive, xr, rr)
	}
	c.failf("block scan of %v %s: it takes numbers", s.X.Type, s.X.Name)
	return nil
}

// scanThreads reads each thread's value before it writes that thread's
// result, so X and Result may be one variable.
func scanThreads[T blockNumber](inclusive bool, xr, rr int) func(*frame) {
	if inclusive {
		return func(f *frame) {
			n := f.blk.size
			x, out := lanesOf[T](f, xr, n), lanesOf[T](f, rr, n)
			var acc T
			for t := range out {
				acc += x[t]
				out[t] = acc
			}
		}
	}
	return func(f *frame) {
		n := f.blk.size
		x, out := lanesOf[T](f, xr, n), lanesOf[T](f, rr, n)
		var acc T
		for t := range out {
			v := x[t]
			out[t] = acc
			acc += v
		}
	}
}
