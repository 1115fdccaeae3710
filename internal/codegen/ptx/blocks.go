package ptx

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Block tasks (ir.Blocks, qd.Blocks). One CUDA block of exactly the
// loop's size runs each block of the loop; the entry strides over blocks
// when the grid is smaller than the loop's count. Every thread runs the
// block-level statements (they are uniform), a Threads loop is its body
// with t = %tid.x followed by bar.sync, and the shared arrays are .shared
// variables, zeroed by the block's threads together at the start of every
// block. Per-thread locals are registers, as every local is.
//
// The block collectives (BlockReduce, BlockScan) work in two levels over
// one scratch array of 33 slots: shuffles within each warp, the warps'
// values in the scratch, then warp 0 combines those (it has a lane for
// each warp) and leaves the result there for every thread.

// collScratch is the name of the collectives' shared scratch.
const collScratch = "qdcoll"

// blockLoop writes the task of block loop s.
func (f *fnWriter) blockLoop(s *ir.Blocks, exit string) {
	f.pos = s.Pos
	f.blockPrologue(s)
	count := f.index64(s.Count)
	bv := f.declare(s.Var)
	ctaid, nctaid := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%ctaid.x", ctaid)
	f.emit("mov.u32 %s, %%nctaid.x", nctaid)
	step := f.reg(ir.I64)
	f.emit("cvt.u64.u32 %s, %s", bv, ctaid)
	f.emit("cvt.u64.u32 %s, %s", step, nctaid)
	top := f.label()
	f.place(top)
	done := f.reg(ir.Bool)
	f.emit("setp.ge.s64 %s, %s, %s", done, bv, count) // the same in every thread of the block
	f.braIf(done, false, exit)
	f.zeroShared(s)
	f.emit("bar.sync 0")
	f.stmts(s.Body)
	// The next block's zeroing must wait for this one's last reads.
	f.emit("bar.sync 0")
	f.emit("add.s64 %s, %s, %s", bv, bv, step)
	f.bra(top)
}

// blockPrologue declares s's shared arrays and gives each its address and
// extents in registers set before the loop, where every later use sees
// them (f.array and f.dim find them as a parameter's).
func (f *fnWriter) blockPrologue(s *ir.Blocks) {
	for _, a := range s.Shared {
		name := sharedName(a)
		f.shared = append(f.shared, fmt.Sprintf(".shared .align %d .b8 %s[%d];", a.SharedAlign(), name, roundUp(a.SharedBytes(), 4)))
		r := f.reg(ir.I64)
		f.emit("mov.u64 %s, %s", r, name)
		f.arrays[a.Index] = r
		for d, n := range a.Shared {
			dr := f.reg(ir.I64)
			f.emit("mov.s64 %s, %d", dr, n)
			f.dims[[2]int{a.Index, d}] = dr
		}
	}
	if hasCollectives(s.Body) {
		f.shared = append(f.shared, fmt.Sprintf(".shared .align 8 .b8 %s[%d];", collScratch, 8*(maxWarps+1)))
	}
}

func sharedName(a *ir.Param) string { return fmt.Sprintf("qdsh%d", -a.Index) }

func roundUp(n, m int) int { return (n + m - 1) / m * m }

func hasCollectives(body []ir.Stmt) bool {
	found := false
	ir.Inspect(body, func(n ir.Node) bool {
		switch n.(type) {
		case *ir.BlockReduce, *ir.BlockScan:
			found = true
		}
		return !found
	})
	return found
}

// stagedStores writes a run of stores to shared arrays whose values read
// global memory (a tile's loads, tile[ty][tx] = in[i][j]), with the
// declarations and assignments among them, holding the stores back to
// the run's end, and returns how many statements it wrote (0 when ss does
// not start such a run with two stores or more). ptxas keeps a global
// load and a shared store after it in order, so each load of the run
// would otherwise wait for the one before it to arrive; with the stores
// last, the loads are in flight together, as nvcc issues them. Each
// store's address and value are computed where the store stands, so the
// reorder is invisible: the loads read array parameters, which no shared
// store can alias, and nothing in the run reads a shared array. With index
// checks the run is written in order, so that the first index out of
// range is the one Go would meet first.
func (f *fnWriter) stagedStores(ss []ir.Stmt) int {
	if f.bounds() {
		return 0
	}
	n, stores := 0, 0
	for _, st := range ss {
		ok := false
		switch s := st.(type) {
		case *ir.Store:
			ok = s.Array.IsShared() && stageable(s.Index, s.Value)
			if ok {
				stores++
			}
		case *ir.Decl:
			ok = stageable(nil, s.Init)
		case *ir.Assign:
			ok = stageable(nil, s.Value)
		}
		if !ok {
			break
		}
		n++
	}
	for n > 0 { // the run ends at its last store
		if _, ok := ss[n-1].(*ir.Store); ok {
			break
		}
		n--
	}
	if stores < 2 {
		return 0
	}
	type pending struct {
		t           ir.Type
		addr, value string
		a           *ir.Param
	}
	var held []pending
	for _, st := range ss[:n] {
		s, ok := st.(*ir.Store)
		if !ok {
			f.stmt(st)
			continue
		}
		f.pos = s.Pos
		t := s.Array.LeafType(s.Leaf)
		if s.Value.Type() != t {
			f.fail("store to %s of a value that is not %v", s.Array.Name, t)
		}
		addr, _ := f.memAddr(s.Array, s.Index, s.Leaf)
		v := f.expr(s.Value)
		if _, isVar := s.Value.(*ir.VarRef); isVar {
			// A local's register may be assigned before the store is
			// written: hold a copy.
			c := f.reg(t)
			f.mov(t, c, v)
			v = c
		}
		held = append(held, pending{t, addr, v, s.Array})
	}
	for _, h := range held {
		f.in(h.a, func() { f.store(h.t, "["+h.addr+"]", h.value) })
	}
	return n
}

// stageable reports whether a statement with these indices and value may
// join a staged run: pure indices, and a value (nil for a declaration to
// zero) that is pure but for loads of array parameters.
func stageable(index []ir.Expr, value ir.Expr) bool {
	for _, x := range index {
		if !pureExpr(x) {
			return false
		}
	}
	ok := true
	ir.InspectExpr(value, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Load:
			ok = ok && !n.Array.IsShared()
		case *ir.Const, *ir.ParamRef, *ir.VarRef, *ir.Len, *ir.Unary, *ir.Binary, *ir.Convert, *ir.Bitcast, *ir.Select:
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// sharedAddress is the shared-space address of a[index...], in 32 bits:
// a block's shared memory is a few KiB, and 64-bit index arithmetic
// would cost two or three instructions for each one of 32 bits in the
// loops that read shared arrays most (a tiled matrix product's). An index
// out of range addresses other shared memory, as one of an array
// parameter addresses other memory; qd.WithDebug checks them.
func (f *fnWriter) sharedAddress(a *ir.Param, index []ir.Expr) string {
	off := f.index32(index[0])
	for d := 1; d < len(index); d++ {
		n := f.reg(ir.U32)
		f.emit("mad.lo.u32 %s, %s, %d, %s", n, off, a.Shared[d], f.index32(index[d]))
		off = n
	}
	base, addr := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %s", base, sharedName(a))
	f.emit("mad.lo.u32 %s, %s, %d, %s", addr, off, a.ElemSize(), base)
	return addr
}

// index32 is index e in a 32-bit register (its low bits).
func (f *fnWriter) index32(e ir.Expr) string {
	t := e.Type()
	if !t.IsInteger() {
		f.fail("index of type %v", t)
	}
	x := f.expr(e)
	switch {
	case t.Size() == 4:
		return x
	case t.Size() == 8:
		r := f.reg(ir.U32)
		f.emit("cvt.u32.u64 %s, %s", r, x)
		return r
	}
	return f.convert(ir.U32, t, x)
}

// zeroShared clears every shared array of s, 4 bytes per thread at a time.
func (f *fnWriter) zeroShared(s *ir.Blocks) {
	if len(s.Shared) == 0 {
		return
	}
	tid, ntid := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ntid.x", ntid)
	for _, a := range s.Shared {
		words := roundUp(a.SharedBytes(), 4) / 4
		i, off, base := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
		f.emit("mov.u32 %s, %s", base, sharedName(a))
		f.emit("mov.u32 %s, %s", i, tid)
		loop, end := f.label(), f.label()
		f.place(loop)
		out := f.reg(ir.Bool)
		f.emit("setp.ge.u32 %s, %s, %d", out, i, words)
		f.braIf(out, false, end)
		f.emit("shl.b32 %s, %s, 2", off, i)
		f.emit("add.u32 %s, %s, %s", off, off, base)
		f.emit("st.shared.u32 [%s], 0", off)
		f.emit("add.u32 %s, %s, %s", i, i, ntid)
		f.bra(loop)
		f.place(end)
	}
}

// threadsLoop writes a thread loop: its body once, with t this thread's
// index, then the block's barrier.
func (f *fnWriter) threadsLoop(s *ir.Threads) {
	tv := f.declare(s.Var)
	tid := f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("cvt.u64.u32 %s, %s", tv, tid)
	saved := f.loops
	f.loops = nil // a break or continue of the body stays inside it (Verify)
	f.stmts(s.Body)
	f.loops = saved
	f.pos = s.Pos
	f.emit("bar.sync 0")
}

// laneInfo is what the collectives know of this thread's warp.
type laneInfo struct {
	lane, warp, nwarps string // u32
	here, mask         string // lanes of this warp that exist, and their mask
	first              string // pred: lane 0
}

func (f *fnWriter) lanes() laneInfo {
	tid, ntid := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ntid.x", ntid)
	l := laneInfo{lane: f.reg(ir.U32), warp: f.reg(ir.U32), nwarps: f.reg(ir.U32), here: f.reg(ir.U32), mask: f.reg(ir.U32), first: f.reg(ir.Bool)}
	f.emit("and.b32 %s, %s, 31", l.lane, tid)
	f.emit("shr.u32 %s, %s, 5", l.warp, tid)
	f.emit("add.u32 %s, %s, 31", l.nwarps, ntid)
	f.emit("shr.u32 %s, %s, 5", l.nwarps, l.nwarps)
	f.emit("shl.b32 %s, %s, 5", l.here, l.warp)
	f.emit("sub.u32 %s, %s, %s", l.here, ntid, l.here)
	f.emit("min.u32 %s, %s, 32", l.here, l.here)
	f.emit("shl.b32 %s, 1, %s", l.mask, l.here) // 1 << 32 is 0 (clamped shift)
	f.emit("sub.u32 %s, %s, 1", l.mask, l.mask)
	f.emit("setp.eq.u32 %s, %s, 0", l.first, l.lane)
	return l
}

// identity is op's (add, min, max) neutral value for t: the
// reductions' (lower.Identity; -0 for float sums, so that a lane that
// adds nothing keeps a sum's bits).
func identity(op ir.BinOp, t ir.Type) uint64 {
	return lower.Identity(map[ir.BinOp]ir.AtomicOp{ir.Add: ir.AtomicAdd, ir.Min: ir.AtomicMin, ir.Max: ir.AtomicMax}[op], t)
}

// fold returns op(x, y) with Go's semantics (min and max of floats: NaN
// wins, -0 < +0).
func (f *fnWriter) fold(op ir.BinOp, t ir.Type, x, y string) string {
	if t.IsFloat() {
		return f.floatOp(op, t, x, y)
	}
	return f.intOp(op, t, x, y)
}

// warpFold folds x over the existing lanes of the warp; lane 0 ends with
// the warp's value.
func (f *fnWriter) warpFold(op ir.BinOp, t ir.Type, x string, l laneInfo) string {
	acc := f.reg(t)
	f.mov(t, acc, x)
	for off := 16; off >= 1; off /= 2 {
		other := f.shuffle("down", t, acc, fmt.Sprint(off), l.mask)
		valid, src := f.reg(ir.Bool), f.reg(ir.U32)
		f.emit("add.u32 %s, %s, %d", src, l.lane, off)
		f.emit("setp.lt.u32 %s, %s, %s", valid, src, l.here)
		id := f.constant(t, identity(op, t))
		f.emit("selp.%s %s, %s, %s, %s", opType(t), other, other, id, valid)
		f.mov(t, acc, f.fold(op, t, acc, other))
	}
	return acc
}

// shuffle is x of another lane of the warp: with mode "idx" of lane
// src, "up" of the lane src below (lanes below src keep their own), "down"
// of the lane src above (shfl.sync), for 32- and 64-bit values of any
// type.
func (f *fnWriter) shuffle(mode string, t ir.Type, x, lane, mask string) string {
	c := 31
	if mode == "up" {
		c = 0
	}
	r := f.reg(t)
	in := f.bits(t, x)
	if t.Size() == 4 {
		out := f.reg(ir.U32)
		f.emit("shfl.sync.%s.b32 %s, %s, %s, %d, %s", mode, out, in, lane, c, mask)
		f.emit("mov.b32 %s, %s", r, out)
		return r
	}
	lo, hi := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.b64 {%s, %s}, %s", lo, hi, in)
	f.emit("shfl.sync.%s.b32 %s, %s, %s, %d, %s", mode, lo, lo, lane, c, mask)
	f.emit("shfl.sync.%s.b32 %s, %s, %s, %d, %s", mode, hi, hi, lane, c, mask)
	out := f.reg(ir.U64)
	f.emit("mov.b64 %s, {%s, %s}", out, lo, hi)
	f.emit("mov.b64 %s, %s", r, out)
	return r
}

// scratchSlot is the shared address of slot idx of the collectives'
// scratch.
func (f *fnWriter) scratchSlot(idx string) string {
	base, off := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %s", base, collScratch)
	f.emit("shl.b32 %s, %s, 3", off, idx)
	f.emit("add.u32 %s, %s, %s", off, off, base)
	return off
}

func checkCollective(f *fnWriter, t ir.Type) {
	if t.IsSmall() || t == ir.Bool || !t.Valid() {
		f.fail("block collective over %v values: they take 32- and 64-bit integers and floats", t)
	}
}

// blockReduce writes s: every thread ends with the block's value. Warp 0
// combines the warps' values (it has a lane for each) and hands the total
// to the others through the scratch, so that every thread gets the same
// bits.
func (f *fnWriter) blockReduce(s *ir.BlockReduce) {
	t := s.X.Type
	checkCollective(f, t)
	l := f.lanes()
	w := f.warpFold(s.Op, t, f.varReg(s.X), l)
	skip := f.label()
	f.braIf(l.first, true, skip)
	f.emit("st.shared.%s [%s], %s", opType(t), f.scratchSlot(l.warp), w)
	f.place(skip)
	f.emit("bar.sync 0")
	notWarp0 := f.label()
	f.braIf(f.isWarp0(l), true, notWarp0)
	v, has := f.constant(t, identity(s.Op, t)), f.reg(ir.Bool)
	f.emit("setp.lt.u32 %s, %s, %s", has, l.lane, l.nwarps)
	f.emit("@%s ld.shared.%s %s, [%s]", has, opType(t), v, f.scratchSlot(l.lane))
	total := f.warpFold(s.Op, t, v, l)
	f.emit("@%s st.shared.%s [%s], %s", l.first, opType(t), f.scratchSlot(fmt.Sprint(maxWarps)), total)
	f.place(notWarp0)
	f.emit("bar.sync 0")
	r := f.declare(s.Result)
	f.emit("ld.shared.%s %s, [%s]", opType(t), r, f.scratchSlot(fmt.Sprint(maxWarps)))
	if t.IsFloat() && s.Op == ir.Add {
		// Go's sum starts at 0, so a block of -0s sums to +0; the tree
		// would keep -0.
		f.mov(t, r, f.fold(ir.Add, t, r, f.constant(t, 0)))
	}
	f.emit("bar.sync 0") // the scratch is free for the next collective
}

func (f *fnWriter) isWarp0(l laneInfo) string {
	p := f.reg(ir.Bool)
	f.emit("setp.eq.u32 %s, %s, 0", p, l.warp)
	return p
}

// warpScan is the inclusive scan of x over the warp's lanes
// (Hillis–Steele by shuffles).
func (f *fnWriter) warpScan(t ir.Type, x string, l laneInfo) string {
	inc := f.reg(t)
	f.mov(t, inc, x)
	for off := 1; off < 32; off *= 2 {
		y := f.shuffle("up", t, inc, fmt.Sprint(off), l.mask)
		ok := f.reg(ir.Bool)
		f.emit("setp.ge.u32 %s, %s, %d", ok, l.lane, off)
		sum := f.fold(ir.Add, t, inc, y)
		f.emit("selp.%s %s, %s, %s, %s", opType(t), inc, sum, inc, ok)
	}
	return inc
}

// exclusiveOf is the lane below's value of the inclusive scan inc, 0 in
// lane 0: an exclusive scan with the same additions as the inclusive one.
func (f *fnWriter) exclusiveOf(t ir.Type, inc string, l laneInfo) string {
	below := f.shuffle("up", t, inc, "1", l.mask)
	zero := f.constant(t, 0)
	f.emit("selp.%s %s, %s, %s, %s", opType(t), below, zero, below, l.first)
	return below
}

// blockScan writes s: each thread's prefix sum, in thread order. Each warp
// scans its lanes; warp 0 turns the warps' totals into each warp's offset
// in the scratch.
func (f *fnWriter) blockScan(s *ir.BlockScan) {
	t := s.X.Type
	checkCollective(f, t)
	l := f.lanes()
	inc := f.warpScan(t, f.varReg(s.X), l)
	last, lastLane, skip := f.reg(ir.Bool), f.reg(ir.U32), f.label()
	f.emit("sub.u32 %s, %s, 1", lastLane, l.here)
	f.emit("setp.eq.u32 %s, %s, %s", last, l.lane, lastLane)
	f.braIf(last, true, skip)
	f.emit("st.shared.%s [%s], %s", opType(t), f.scratchSlot(l.warp), inc)
	f.place(skip)
	f.emit("bar.sync 0")
	notWarp0 := f.label()
	f.braIf(f.isWarp0(l), true, notWarp0)
	tot, has := f.constant(t, 0), f.reg(ir.Bool)
	f.emit("setp.lt.u32 %s, %s, %s", has, l.lane, l.nwarps)
	f.emit("@%s ld.shared.%s %s, [%s]", has, opType(t), tot, f.scratchSlot(l.lane))
	offset := f.exclusiveOf(t, f.warpScan(t, tot, l), l)
	f.emit("@%s st.shared.%s [%s], %s", has, opType(t), f.scratchSlot(l.lane), offset)
	f.place(notWarp0)
	f.emit("bar.sync 0")
	before := f.reg(t)
	f.emit("ld.shared.%s %s, [%s]", opType(t), before, f.scratchSlot(l.warp))
	r := f.declare(s.Result)
	if s.Inclusive {
		f.mov(t, r, f.fold(ir.Add, t, before, inc))
	} else {
		f.mov(t, r, f.fold(ir.Add, t, before, f.exclusiveOf(t, inc, l)))
	}
	f.emit("bar.sync 0")
}
