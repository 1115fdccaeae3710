package spirv

import (
	"github.com/quadrants-go/qd/internal/ir"
)

// Block tasks (ir.Blocks, qd.Blocks). A work group of exactly the loop's
// size runs each block of the loop, and strides over blocks when the
// dispatch has fewer groups than the loop has blocks. Every invocation
// runs the block-level statements (they are uniform, so every barrier is
// in uniform control flow, as SPIR-V requires); a Threads loop is its body
// with t = LocalInvocationId.x, then a work-group barrier. Shared arrays
// are Workgroup variables, one per leaf of a record, zeroed by the group's
// invocations together when each block starts. Per-thread locals are
// Function variables, as every local is.
//
// Shared memory belongs to the kernel alone, so its layout is qd's: the
// 8- and 16-bit integers and bools take a 32-bit word each there (their
// canonical register values), which needs no 8- or 16-bit storage
// capability.
//
// The collectives (BlockReduce, BlockScan) use two levels through a
// scratch array of the group's size: every invocation writes its value;
// invocation c folds chunk c of 32 values in order; then each invocation
// folds what it needs of the chunks' totals. The order of every fold is
// fixed, so every invocation of a block gets the same bits, and the
// result does not depend on the device's subgroup size (8 on lavapipe, 32
// on NVIDIA).

const collChunk = 32

// sharedVar is a shared array's Workgroup variables, one per leaf.
type sharedVar struct {
	leaves []ID
	n      int // elements
}

// sharedTyp is the type a value of t has in shared memory.
func (g *gen) sharedTyp(t ir.Type) ID {
	if t == ir.Bool {
		return g.m.Int(32)
	}
	return g.typ(t) // the 8- and 16-bit integers are 32-bit values already
}

// blockTask writes the task of block loop s, whose blocks have local
// threads.
func (g *gen) blockTask(s *ir.Blocks, local int) {
	m, f := g.m, g.f
	g.pos = s.Pos
	i64, b := m.Int(64), m.Bool()
	g.local64 = local
	count := g.index64(s.Count)
	for _, a := range s.Shared {
		g.declareShared(a)
	}
	bv := g.local(s.Var, true)
	f.Void(OpStore, bv, f.Op(OpUConvert, i64, g.builtinX(g.wgID)))
	step := f.Op(OpUConvert, i64, g.builtinX(g.numWG))
	g.loop(nil, func() ID {
		return f.Op(OpSLessThan, b, f.Op(OpLoad, i64, bv), count)
	}, func() {
		g.zeroShared(s)
		g.barrier()
		g.stmts(s.Body)
		g.pos = s.Pos
		// The next block's zeroing must wait for this one's last reads.
		g.barrier()
	}, func() {
		f.Void(OpStore, bv, f.Op(OpIAdd, i64, f.Op(OpLoad, i64, bv), step))
	})
}

func (g *gen) declareShared(a *ir.Param) {
	m := g.m
	n := 1
	for _, e := range a.Shared {
		n *= e
	}
	sv := &sharedVar{n: n}
	leaves := 1
	if a.Rec != nil {
		leaves = len(a.Rec.Leaves)
	}
	for l := range leaves {
		arr := m.ArrayOf(g.sharedTyp(a.LeafType(l)), max(n, 1))
		v := m.Global(m.Pointer(StorageClassWorkgroup, arr), StorageClassWorkgroup)
		m.Name(v, a.Name)
		g.interfaces = append(g.interfaces, v)
		sv.leaves = append(sv.leaves, v)
	}
	if g.shared == nil {
		g.shared = map[*ir.Param]*sharedVar{}
	}
	g.shared[a] = sv
}

// sharedElement is a Workgroup pointer to leaf of shared array a at flat
// element off (i64).
func (g *gen) sharedElement(a *ir.Param, off ID, leaf int) ID {
	sv := g.shared[a]
	if sv == nil {
		g.fail("shared array %s used outside its block loop", a.Name)
	}
	ptr := g.f.Op(OpAccessChain, g.m.Pointer(StorageClassWorkgroup, g.sharedTyp(a.LeafType(leaf))), sv.leaves[leaf], off)
	if g.sharedPtrs == nil {
		g.sharedPtrs = map[ID]bool{}
	}
	g.sharedPtrs[ptr] = true
	return ptr
}

// zeroShared clears every shared array of s, the group's invocations
// taking every local-th element each.
func (g *gen) zeroShared(s *ir.Blocks) {
	m, f := g.m, g.f
	for _, a := range s.Shared {
		sv := g.shared[a]
		for l, v := range sv.leaves {
			t := a.LeafType(l)
			st := g.sharedTyp(t)
			zero := g.zero(t)
			if t == ir.Bool {
				zero = m.ConstInt(32, 0)
			}
			g.strided(uint32(sv.n), func(i ID) {
				f.Void(OpStore, f.Op(OpAccessChain, m.Pointer(StorageClassWorkgroup, st), v, i), zero)
			})
		}
	}
}

// strided runs body for i = LocalInvocationId.x, + local, ... below n
// (u32 values).
func (g *gen) strided(n uint32, body func(i ID)) {
	m, f := g.m, g.f
	u32, b := m.Int(32), m.Bool()
	i := f.Var(u32)
	f.Void(OpStore, i, g.builtinX(g.localID))
	g.loop(nil, func() ID {
		return f.Op(OpULessThan, b, f.Op(OpLoad, u32, i), m.ConstInt(32, uint64(n)))
	}, func() {
		body(f.Op(OpLoad, u32, i))
	}, func() {
		f.Void(OpStore, i, f.Op(OpIAdd, u32, f.Op(OpLoad, u32, i), m.ConstInt(32, uint64(g.local64))))
	})
}

// barrier is the work group's barrier, with its shared memory made
// visible across it.
func (g *gen) barrier() {
	m := g.m
	wg := m.ConstInt(32, ScopeWorkgroup)
	g.f.Void(OpControlBarrier, wg, wg, m.ConstInt(32, MemorySemanticsAcquireRelease|MemorySemanticsWorkgroupMemory))
}

// threadsLoop writes a thread loop: its body once, with t this
// invocation's index, then the barrier.
func (g *gen) threadsLoop(s *ir.Threads) {
	m, f := g.m, g.f
	tv := g.local(s.Var, true)
	f.Void(OpStore, tv, f.Op(OpUConvert, m.Int(64), g.builtinX(g.localID)))
	saved := g.loops
	g.loops = nil // a break or continue of the body stays inside it (Verify)
	g.stmts(s.Body)
	g.loops = saved
	g.pos = s.Pos
	if f.Terminated {
		g.fail("a thread loop's body does not fall through")
	}
	g.barrier()
}

// scratch is the collectives' scratch for values of t: one slot per
// invocation and one per chunk of collChunk invocations.
func (g *gen) scratch(t ir.Type) (vals, chunks ID) {
	if s, ok := g.scratches[t]; ok {
		return s[0], s[1]
	}
	m := g.m
	ty := g.sharedTyp(t)
	mk := func(n int, name string) ID {
		v := m.Global(m.Pointer(StorageClassWorkgroup, m.ArrayOf(ty, n)), StorageClassWorkgroup)
		m.Name(v, name)
		g.interfaces = append(g.interfaces, v)
		return v
	}
	vals = mk(g.local64, "qd_coll_values")
	chunks = mk(g.chunks(), "qd_coll_chunks")
	if g.scratches == nil {
		g.scratches = map[ir.Type][2]ID{}
	}
	g.scratches[t] = [2]ID{vals, chunks}
	return vals, chunks
}

func (g *gen) chunks() int { return (g.local64 + collChunk - 1) / collChunk }

// foldRange folds op over arr[lo, hi) (u32 indices, lo < hi known or
// not: an empty range leaves start) onto start, in index order.
func (g *gen) foldRange(op ir.BinOp, t ir.Type, arr ID, start, lo, hi ID) ID {
	m, f := g.m, g.f
	ty, u32, b := g.typ(t), m.Int(32), m.Bool()
	elem := m.Pointer(StorageClassWorkgroup, ty)
	acc, i := f.Var(ty), f.Var(u32)
	f.Void(OpStore, acc, start)
	f.Void(OpStore, i, lo)
	g.loop(nil, func() ID {
		return f.Op(OpULessThan, b, f.Op(OpLoad, u32, i), hi)
	}, func() {
		x := f.Op(OpLoad, ty, f.Op(OpAccessChain, elem, arr, f.Op(OpLoad, u32, i)))
		f.Void(OpStore, acc, g.combineBin(op, t, f.Op(OpLoad, ty, acc), x))
	}, func() {
		f.Void(OpStore, i, f.Op(OpIAdd, u32, f.Op(OpLoad, u32, i), m.ConstInt(32, 1)))
	})
	return f.Op(OpLoad, ty, acc)
}

// combineBin is a op b for a collective's op (Add, Min, Max), with Go's
// semantics (reduce.go's combine).
func (g *gen) combineBin(op ir.BinOp, t ir.Type, a, b ID) ID {
	at := map[ir.BinOp]ir.AtomicOp{ir.Add: ir.AtomicAdd, ir.Min: ir.AtomicMin, ir.Max: ir.AtomicMax}[op]
	return g.combine(at, t, a, b)
}

// stageValues writes every invocation's x into the scratch, then has
// invocation c fold chunk c into chunks[c]; it returns the invocation's
// index (u32).
func (g *gen) stageValues(op ir.BinOp, t ir.Type, x ID) (tid ID) {
	m, f := g.m, g.f
	ty, u32, b := g.typ(t), m.Int(32), m.Bool()
	vals, chunks := g.scratch(t)
	elem := m.Pointer(StorageClassWorkgroup, ty)
	tid = g.builtinX(g.localID)
	f.Void(OpStore, f.Op(OpAccessChain, elem, vals, tid), x)
	g.barrier()
	nc := uint32(g.chunks())
	g.ifThen(f.Op(OpULessThan, b, tid, m.ConstInt(32, uint64(nc))), func() {
		lo := f.Op(OpIMul, u32, tid, m.ConstInt(32, collChunk))
		end, n := f.Op(OpIAdd, u32, lo, m.ConstInt(32, collChunk)), m.ConstInt(32, uint64(g.local64))
		hi := f.Op(OpSelect, u32, f.Op(OpULessThan, b, end, n), end, n)
		first := f.Op(OpLoad, ty, f.Op(OpAccessChain, elem, vals, lo))
		total := g.foldRange(op, t, vals, first, f.Op(OpIAdd, u32, lo, m.ConstInt(32, 1)), hi)
		f.Void(OpStore, f.Op(OpAccessChain, elem, chunks, tid), total)
	})
	g.barrier()
	return tid
}

func (g *gen) checkCollective(t ir.Type) {
	if !t.IsNumeric() || t.IsSmall() {
		g.fail("block collective over %v: want a 32- or 64-bit integer or a float", t)
	}
}

// blockReduce writes s: Result, in every invocation, is op over the
// group's X.
func (g *gen) blockReduce(s *ir.BlockReduce) {
	m, f := g.m, g.f
	t := s.X.Type
	g.checkCollective(t)
	ty := g.typ(t)
	x := f.Op(OpLoad, ty, g.local(s.X, false))
	g.stageValues(s.Op, t, x)
	_, chunks := g.scratch(t)
	elem := m.Pointer(StorageClassWorkgroup, ty)
	first := f.Op(OpLoad, ty, f.Op(OpAccessChain, elem, chunks, m.ConstInt(32, 0)))
	r := g.foldRange(s.Op, t, chunks, first, m.ConstInt(32, 1), m.ConstInt(32, uint64(g.chunks())))
	if t.IsFloat() && s.Op == ir.Add {
		// Go's sum starts at 0, so a block of -0s sums to +0; the
		// folds would keep -0.
		r = g.combineBin(ir.Add, t, r, g.zero(t))
	}
	g.set(s.Result, r, true)
	g.barrier() // the scratch is free for the next collective
}

// blockScan writes s: Result, in invocation t, is the sum of X over the
// invocations before t (and t itself when Inclusive): the totals of the
// chunks before t's, then the values of t's chunk before t, in order.
func (g *gen) blockScan(s *ir.BlockScan) {
	m, f := g.m, g.f
	t := s.X.Type
	g.checkCollective(t)
	ty, u32 := g.typ(t), m.Int(32)
	x := f.Op(OpLoad, ty, g.local(s.X, false))
	tid := g.stageValues(ir.Add, t, x)
	vals, chunks := g.scratch(t)
	chunk := f.Op(OpUDiv, u32, tid, m.ConstInt(32, collChunk))
	before := g.foldRange(ir.Add, t, chunks, g.zero(t), m.ConstInt(32, 0), chunk)
	lo := f.Op(OpIMul, u32, chunk, m.ConstInt(32, collChunk))
	hi := tid
	if s.Inclusive {
		hi = f.Op(OpIAdd, u32, tid, m.ConstInt(32, 1))
	}
	r := g.foldRange(ir.Add, t, vals, before, lo, hi)
	g.set(s.Result, r, true)
	g.barrier()
}
