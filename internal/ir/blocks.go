package ir

// Block-level kernels (qd.Blocks): a top-level loop over blocks of threads
// that cooperate through shared memory and meet at barriers. The model is
// the hierarchical loop of SYCL's parallel_for_work_group and Kokkos' team
// policy: a Blocks body is written as if one block ran it alone, its
// statements outside Threads loops are the same for every thread of the
// block (uniform), and each Threads loop runs its body once per thread,
// then waits until every thread of the block has finished it. Run in
// order on one core — the Threads loops one after another — a block gives
// the results it gives on a GPU, where its threads run at once.

// MaxSharedBytes is the most shared memory the arrays of one Blocks loop
// may take: the static limit of every GPU qd targets (48 KiB on CUDA and
// HIP).
const MaxSharedBytes = 48 << 10

// Blocks is a block loop: Count blocks of Size threads each, every block
// running Body once, in any order and concurrently. Var, of type I64,
// is the block's index in [0, Count). Count and Size have type I64 and are
// evaluated once, before any block; Size is a constant or an expression of
// scalar parameters and constants, 1 to MaxBlockDim (a launch checks it).
//
// Shared are the block's shared arrays (Param.Shared set): every block
// has its own, zeroed when it starts. PerThread are the locals declared
// at the block level of Body whose value is each thread's own: only
// Threads bodies and the block collectives (BlockReduce, BlockScan) use
// them. Every other local declared at block level is uniform: the same in
// every thread, assigned only outside Threads loops.
//
// A Blocks appears only where a ParallelFor may: at the top level of a
// kernel or of a StreamParallel body.
type Blocks struct {
	Pos       Pos
	Var       *Var
	Count     Expr
	Size      Expr
	Shared    []*Param
	PerThread []*Var
	Body      []Stmt
}

// Threads is a thread loop of the enclosing Blocks: Body runs once per
// thread, with Var (I64) the thread's index in [0, Size); then the threads
// meet at a barrier. It appears at the block level of a Blocks body (under
// uniform ifs and loops too), never inside another Threads loop.
type Threads struct {
	Pos  Pos
	Var  *Var
	Body []Stmt
}

// BlockReduce sets the uniform local Result to the sum (Op Add), minimum
// (Min) or maximum (Max) of the per-thread local X over the block's
// threads. Sums of floats are formed in the order the backend chooses (a
// tree of pairs on GPUs), so their last bits may differ from a serial sum.
// It is a block-level statement: the threads meet inside it.
type BlockReduce struct {
	Pos    Pos
	Op     BinOp
	X      *Var
	Result *Var
}

// BlockScan sets the per-thread local Result of each thread t to the sum
// of X over the threads before t (exclusive) or up to and including t
// (Inclusive). It is a block-level statement.
type BlockScan struct {
	Pos       Pos
	Inclusive bool
	X         *Var
	Result    *Var
}

func (s *Blocks) Position() Pos      { return s.Pos }
func (s *Threads) Position() Pos     { return s.Pos }
func (s *BlockReduce) Position() Pos { return s.Pos }
func (s *BlockScan) Position() Pos   { return s.Pos }

func (*Blocks) stmtNode()      {}
func (*Threads) stmtNode()     {}
func (*BlockReduce) stmtNode() {}
func (*BlockScan) stmtNode()   {}

// SharedBytes is the shared memory s's arrays take, each at its
// alignment (SharedAlign) in declaration order.
func (s *Blocks) SharedBytes() int {
	n := 0
	for _, a := range s.Shared {
		if a == nil {
			continue
		}
		al := a.SharedAlign()
		n = (n+al-1)/al*al + a.SharedBytes()
	}
	return n
}

// LaunchScalar reports whether e reads only constants and scalar
// parameters, combined by operators and conversions: a value a launch can
// compute on the host, as a Blocks loop's size must be.
func LaunchScalar(e Expr) bool {
	ok := e != nil
	InspectExpr(e, func(n Node) bool {
		switch n.(type) {
		case *Const, *ParamRef, *Unary, *Binary, *Convert:
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// IsShared reports whether p is an array of a block's shared memory.
func (p *Param) IsShared() bool { return len(p.Shared) > 0 }

// SharedBytes is the size in bytes of shared array p.
func (p *Param) SharedBytes() int {
	n := p.ElemSize()
	for _, e := range p.Shared {
		n *= e
	}
	return n
}

// SharedAlign is the alignment qd gives shared array p: its element's,
// at least 4 and up to 16 bytes, so that vector accesses may use it.
func (p *Param) SharedAlign() int {
	a := 4
	if p.Rec != nil {
		a = max(a, p.Rec.Align)
	} else {
		a = max(a, p.Elem.Size())
	}
	return min(a, 16)
}
