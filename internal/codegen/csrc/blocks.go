package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
)

// Block tasks (qd.Blocks, ir.Blocks): one GPU block of exactly Size
// threads per qd block, the launcher's blockDim being the loop's size
// (kabi.Task.BlockDim, or BlockSize from the launch's scalars), so a
// thread loop's index is the thread's own and needs no guard. The
// launcher's grid is min(count, cap) blocks, so the entry strides over
// the blocks:
//
//	if (count <= 0) return;
//	for (b = blockIdx; b < count; b += gridDim) {
//		zero the shared arrays, all threads together; barrier
//		body: block-level statements run by every thread alike (uniform);
//		      a thread loop's body once per thread, then a barrier
//		barrier (unless the body ends with a thread loop's)
//	}
//
// The last barrier keeps the next block's zeroing from overwriting what a
// slow thread still reads. Every thread runs the same barriers: the
// block-level control flow is uniform (lowering's rules, lower/blocks.go).
//
// The shared arrays live in one __shared__ buffer of 8-byte words, each
// array at its alignment (ir.Param.SharedAlign) in declaration order, as
// ir.Blocks.SharedBytes counts them; zeroing it is one strided loop of
// 8-byte stores. An array is addressed as a parameter's is (values.go),
// from its offset in the buffer, with its constant extents for lengths,
// offsets and index checks.
//
// The collectives (BlockReduce, BlockScan) work in two levels: within a
// warp by shuffles (blockprims.go), then across the warps through a small
// scratch array of 8-byte entries, one per warp, after one barrier. For a
// reduction every thread then folds the warps' partials itself, in the
// same order (a pairwise tree when the size is a constant), so the result
// has the same bits in every thread, as a uniform value must; for a scan
// each thread adds the totals of the warps before its own. The scratch is
// double-buffered, the two halves taken in turn (bk_par), so that one
// barrier per collective suffices: a collective writes the half the one
// before it did not, and the one before that finished reading this half
// before the barrier of the one in between. A block of one warp or less
// (a constant size) needs neither scratch nor barrier: lane 0's result is
// broadcast by a shuffle.

// blockState is what the writer of a block task knows of its loop.
type blockState struct {
	loop    *ir.Blocks
	offset  map[*ir.Param]int // byte offset of each shared array in bk_shm
	size    int               // threads per block, 0 when set at launch
	wave    int               // the target's warp (wavefront) width
	warps   int               // scratch entries per half: the most warps a block has
	double  bool              // the scratch has two halves (one barrier per collective)
	threads bool              // inside a thread loop
}

// oneWarp reports whether the block is one warp at most (a constant size).
func (b *blockState) oneWarp() bool { return b.size > 0 && b.size <= b.wave }

// blockTask writes the entry of a block task.
func (f *fn) blockTask(b *ir.Blocks) {
	f.pos = b.Pos
	if b.Var == nil || b.Count == nil || b.Size == nil || b.Count.Type() != ir.I64 {
		f.fail("block loop without an i64 count, a size and a block variable")
	}
	bs := &blockState{loop: b, offset: map[*ir.Param]int{}, wave: f.u.t.WaveSize}
	f.blk = bs
	if c, ok := b.Size.(*ir.Const); ok {
		bs.size = int(c.Int())
		if bs.size != f.info.BlockDim {
			f.fail("internal error: block size %d, the layout's %d", bs.size, f.info.BlockDim)
		}
	}
	bytes := f.layoutShared(b)
	collectives := false
	ir.Inspect(b.Body, func(n ir.Node) bool {
		switch n.(type) {
		case *ir.BlockReduce, *ir.BlockScan:
			collectives = true
		}
		return !collectives
	})

	count := f.index64(b.Count) // once, in every thread: a uniform value
	f.line("if (%s <= 0)", count)
	f.line("\treturn;")
	f.declare("qd_u32", "bk_tid")
	f.line("bk_tid = qd_tid();")
	threads := fmt.Sprintf("%du", bs.size)
	if bs.size == 0 {
		threads = f.declare("qd_u32", "bk_size")
		f.line("bk_size = qd_bdim();")
	}
	if collectives {
		f.setupCollectives(bytes)
	}
	blk := f.local(b.Var, true)
	f.declare("qd_u64", "bk_b")
	f.line("for (bk_b = qd_bid(); bk_b < (qd_u64)%s; bk_b += qd_gdim()) {", count)
	f.indent++
	f.line("%s = (qd_i64)bk_b;", blk)
	if bytes > 0 {
		words := (bytes + 7) / 8
		f.declare("qd_u32", "bk_i")
		f.line("for (bk_i = bk_tid; bk_i < %du; bk_i += %s)", words, threads)
		f.line("\tbk_shm[bk_i] = 0ULL;")
		f.line("QD_BARRIER();")
	}
	f.stmts(b.Body)
	f.pos = b.Pos
	if _, last := lastStmt(b.Body).(*ir.Threads); bytes > 0 && !last {
		f.line("QD_BARRIER(); // before the next block zeroes the shared arrays")
	}
	f.indent--
	f.line("}")
}

func lastStmt(ss []ir.Stmt) ir.Stmt {
	if len(ss) == 0 {
		return nil
	}
	return ss[len(ss)-1]
}

// layoutShared places the block's shared arrays in bk_shm and declares
// it; it returns the bytes they take.
func (f *fn) layoutShared(b *ir.Blocks) int {
	n, align := 0, 8
	for _, a := range b.Shared {
		if a == nil || !a.IsShared() || a.Dims != len(a.Shared) {
			f.fail("malformed shared array in the block loop")
		}
		al := a.SharedAlign()
		n = (n + al - 1) / al * al
		f.blk.offset[a] = n
		n += a.SharedBytes()
		align = max(align, al)
	}
	if n != b.SharedBytes() {
		f.fail("internal error: shared arrays of %d bytes, the IR counts %d", n, b.SharedBytes())
	}
	if n > 0 {
		ct := "QD_SHARED qd_u64"
		if align > 8 {
			ct = fmt.Sprintf("QD_SHARED __attribute__((aligned(%d))) qd_u64", align)
		}
		f.declare(ct, fmt.Sprintf("bk_shm[%d]", (n+7)/8))
	}
	return n
}

// sharedBase is the address of shared array a, typed as an array
// parameter's (arrayType).
func (f *fn) sharedBase(a *ir.Param) string {
	off, ok := 0, false
	if f.blk != nil {
		off, ok = f.blk.offset[a]
	}
	if !ok {
		f.fail("shared array %s is not one of this block loop's", a.Name)
	}
	return fmt.Sprintf("((%s *)((unsigned char *)bk_shm + %d))", arrayType(a), off)
}

// setupCollectives declares what the collectives share: the thread's lane
// and warp, the lanes its warp has and their mask, and the scratch.
func (f *fn) setupCollectives(bytes int) {
	bs := f.blk
	w := bs.wave
	for _, name := range []string{"bk_lane", "bk_warp", "bk_lanes", "bk_mask"} {
		f.declare("qd_u32", name)
	}
	f.line("bk_lane = bk_tid & %du;", w-1)
	f.line("bk_warp = bk_tid / %du;", w)
	switch {
	case bs.size > 0 && bs.size%w == 0:
		f.line("bk_lanes = %du;", w)
	case bs.size > 0:
		f.line("bk_lanes = bk_warp == %du ? %du : %du; // the last warp is partial", bs.size/w, bs.size%w, w)
	default:
		f.line("bk_lanes = bk_size - bk_warp * %du < %du ? bk_size - bk_warp * %du : %du;", w, w, w, w)
	}
	f.line("bk_mask = bk_lanes >= 32u ? 0xFFFFFFFFu : (1u << bk_lanes) - 1u;")
	if bs.oneWarp() {
		return
	}
	bs.warps = kabi.MaxBlockDim / w
	if bs.size > 0 {
		bs.warps = (bs.size + w - 1) / w
	} else {
		f.declare("qd_u32", "bk_nw")
		f.line("bk_nw = (bk_size + %du) / %du;", w-1, w)
	}
	f.declare("qd_u32", "bk_j")
	used := (bytes + 7) / 8 * 8
	switch {
	case used+16*bs.warps <= ir.MaxSharedBytes:
		bs.double = true
	case used+8*bs.warps <= ir.MaxSharedBytes:
		bs.double = false // a second barrier per collective instead
	default:
		f.fail("the block's shared arrays take %d bytes, which leaves no room under the %d-byte limit for the %d bytes of scratch its block reductions and scans need: make the arrays smaller",
			bytes, ir.MaxSharedBytes, 8*bs.warps)
	}
	entries := bs.warps
	if bs.double {
		entries *= 2
		f.declare("qd_u32", "bk_par")
		f.line("bk_par = 0u;")
	}
	f.declare("QD_SHARED qd_u64", fmt.Sprintf("bk_scr[%d]", entries))
}

// collective checks that a collective is a statement of the block level
// and registers the primitives it calls.
func (f *fn) collective(what string) {
	switch {
	case f.blk == nil:
		f.fail("%s outside a block loop", what)
	case f.blk.threads:
		f.fail("%s inside a thread loop", what)
	}
	f.useBlockVendor()
	f.u.funcs["qd_block1"] = shuffles64
}

// useBlockVendor adds the vendor's block primitives to the unit.
func (f *fn) useBlockVendor() {
	if _, ok := f.u.funcs["qd_block0"]; !ok {
		f.u.funcs["qd_block0"] = blockVendor(f.u.t)
	}
}

// slot is the scratch entry of warp (a C expression), viewed as a T.
func (b *blockState) slot(t ir.Type, warp string) string {
	idx := warp
	if b.double {
		idx = "bk_par + " + warp
	}
	return fmt.Sprintf("*(%s *)&bk_scr[%s]", cType(t), idx)
}

// publish writes lane src's value v of every warp to the scratch, waits
// for every warp, and returns a function that ends the collective once
// its reads of the scratch are written.
func (f *fn) publish(t ir.Type, src, v string) (done func()) {
	f.line("if (bk_lane == %s)", src)
	f.line("\t%s = %s;", f.blk.slot(t, "bk_warp"), v)
	f.line("QD_BARRIER();")
	return func() {
		if f.blk.double {
			f.line("bk_par ^= %du; // the next collective writes the other half", f.blk.warps)
		} else {
			f.line("QD_BARRIER(); // the next collective may write the scratch")
		}
	}
}

// threadLoop writes a thread loop: the body, run by every thread with its
// index, then the barrier where the threads meet.
func (f *fn) threadLoop(s *ir.Threads) {
	switch {
	case f.blk == nil:
		f.fail("thread loop outside a block loop")
	case f.blk.threads:
		f.fail("thread loop inside a thread loop")
	case s.Var == nil || s.Var.Type != ir.I64:
		f.fail("thread loop without an i64 variable")
	}
	f.line("// thread loop")
	f.line("%s = (qd_i64)bk_tid;", f.local(s.Var, true))
	f.blk.threads = true
	f.stmts(s.Body)
	f.blk.threads = false
	f.pos = s.Pos
	f.line("QD_BARRIER();")
}

// collectiveVars checks a collective's operand and result and returns
// the operand's C name.
func (f *fn) collectiveVars(what string, x, result *ir.Var) string {
	if x == nil || result == nil || x.Type != result.Type || !x.Type.IsNumeric() {
		f.fail("%s of a non-numeric operand, or into a result of another type", what)
	}
	return f.local(x, false)
}

// blockReduce writes a BlockReduce: the warps' reductions, then every
// thread's fold of the warps' partials, in one order for all.
func (f *fn) blockReduce(s *ir.BlockReduce) {
	f.collective("block reduction")
	if s.Op != ir.Add && s.Op != ir.Min && s.Op != ir.Max {
		f.fail("block reduction with operator %v", s.Op)
	}
	bs, t := f.blk, s.X.Type
	x := f.collectiveVars("block reduction", s.X, s.Result)
	name, def := warpReduce(f.u.t, s.Op, t)
	f.u.funcs["qd_block2_"+name] = def
	d0 := bs.wave / 2
	if bs.oneWarp() {
		d0 = pow2(bs.size) / 2
	}
	part := f.tmp(t, "%s(%s, bk_lane, bk_lanes, bk_mask, %du)", name, x, d0)
	var r string
	switch {
	case bs.oneWarp() && usesRedux(f.u.t, s.Op, t):
		r = part // every lane has it
	case bs.oneWarp():
		r = f.tmp(t, "%s", shfl("bcast0", t, part, "bk_mask"))
	default:
		done := f.publish(t, "0u", part)
		r = f.foldWarps(s.Op, t)
		done()
	}
	if s.Op == ir.Add && t.IsFloat() {
		// A sum of -0s is -0 in any tree, +0 in Go's (a sum starts at
		// 0): adding +0 changes nothing else.
		r = f.tmp(t, "%s + %s", r, literal(t, 0))
	}
	f.set(s.Result, r, false)
}

// foldWarps combines the warps' partials in the scratch, the same way in
// every thread: a pairwise tree when their number is a constant, else in
// order.
func (f *fn) foldWarps(op ir.BinOp, t ir.Type) string {
	bs := f.blk
	if bs.size == 0 {
		acc := f.tmp(t, "%s", bs.slot(t, "0u"))
		f.line("for (bk_j = 1u; bk_j < bk_nw; bk_j++)")
		f.line("\t%s = %s;", acc, combineOp(op, t, acc, bs.slot(t, "bk_j")))
		return acc
	}
	v := make([]string, bs.warps)
	for j := range v {
		v[j] = f.tmp(t, "%s", bs.slot(t, fmt.Sprintf("%du", j)))
	}
	for stride := 1; stride < len(v); stride *= 2 {
		for j := 0; j+stride < len(v); j += 2 * stride {
			v[j] = f.tmp(t, "%s", combineOp(op, t, v[j], v[j+stride]))
		}
	}
	return v[0]
}

// blockScan writes a BlockScan: the warps' inclusive scans, then each
// thread adds the totals of the warps before its own. An exclusive scan
// subtracts the thread's own value (exact for integers) or, for floats,
// takes the lane below's inclusive sum (0 in lane 0).
func (f *fn) blockScan(s *ir.BlockScan) {
	f.collective("block scan")
	bs, t := f.blk, s.X.Type
	x := f.collectiveVars("block scan", s.X, s.Result)
	name, def := warpScan(t)
	f.u.funcs["qd_block2_"+name] = def
	dn := bs.wave
	if bs.oneWarp() {
		dn = bs.size
	}
	in := f.tmp(t, "%s(%s, bk_lane, bk_mask, %du)", name, x, dn)
	zero := literal(t, 0)
	before := zero
	if !bs.oneWarp() {
		done := f.publish(t, "bk_lanes - 1u", in)
		before = f.tmp(t, "%s", zero)
		f.line("for (bk_j = 0u; bk_j < bk_warp; bk_j++)")
		f.line("\t%s = %s;", before, combineOp(ir.Add, t, before, bs.slot(t, "bk_j")))
		done()
	}
	own := in
	switch {
	case s.Inclusive:
	case t.IsFloat():
		below := f.tmp(t, "%s", shfl("up", t, in, "bk_lane, 1u, bk_mask"))
		own = f.tmp(t, "bk_lane == 0u ? %s : %s", zero, below)
	default:
		own = f.tmp(t, "%s", combineOp(ir.Add, t, in, fmt.Sprintf("(%s)((%s)0 - (%s)%s)", cType(t), unsignedOf(t), unsignedOf(t), x)))
	}
	// The sum before the thread's warp comes first, as in Go's order; for
	// floats it also turns a sum of -0s into Go's +0.
	f.set(s.Result, f.tmp(t, "%s", combineOp(ir.Add, t, before, own)), false)
}

// pow2 is the least power of two ≥ n.
func pow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}
