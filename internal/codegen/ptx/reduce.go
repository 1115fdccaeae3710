package ptx

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Reductions (lower.Reduction with Scope Whole).
//
// An atomic add, min or max whose address is the same for every iteration
// is not issued per iteration: each thread combines its iterations' values
// in a register (starting from the operation's identity), and after the
// grid-stride loop the block combines its threads' values — a shuffle tree
// within each warp, one shared-memory slot per warp, a second shuffle tree
// in warp 0 — and thread 0 issues one atomic per block. A block whose
// threads saw no iteration issues none (its value is the identity, which
// would change nothing). For integers and for min and max the result is
// exactly that of the per-iteration atomics; a float sum is rounded in
// another order (and is not flushed to zero the way atom.add.f32 flushes
// subnormals).
//
// Every thread of the block must reach the bar.sync of the epilogue, so
// the loop's exit leads there rather than to ret; only the uniform "empty
// range" exit, taken by every thread of the grid alike, skips it.

// accumulator is a reduction's per-thread state.
type accumulator struct {
	r      *lower.Reduction
	t      ir.Type
	acc    string // register holding the thread's partial value
	shared string // name of the block's array of per-warp values
}

// maxWarps is the most warps a block has (1024 threads of 32): the size of
// each reduction's shared array.
const maxWarps = 32

// startReductions gives each whole-range reduction of the task its
// accumulator, set to the identity, and its shared array. It returns false
// when the task has none.
func (f *fnWriter) startReductions() bool {
	for _, r := range f.task.Reductions {
		if r.Scope != lower.Whole {
			continue
		}
		t := r.Atomic.Type() // the element's, or the record leaf's
		a := &accumulator{r: r, t: t, acc: f.reg(t), shared: fmt.Sprintf("red%d", len(f.red))}
		f.emit("mov.%s %s, %s", movType(t), a.acc, literal(t, r.Identity()))
		f.shared = append(f.shared, fmt.Sprintf(".shared .align 8 .b8 %s[%d];", a.shared, 8*maxWarps))
		if f.red == nil {
			f.red = map[*ir.ExprStmt]*accumulator{}
		}
		f.red[r.Stmt] = a
		f.redOrder = append(f.redOrder, a)
	}
	return len(f.redOrder) > 0
}

// binOp is the operator of a reduction's atomic (add, min, max).
func (a *accumulator) binOp() ir.BinOp {
	return map[ir.AtomicOp]ir.BinOp{ir.AtomicAdd: ir.Add, ir.AtomicMin: ir.Min, ir.AtomicMax: ir.Max}[a.r.Atomic.Op]
}

// accumulate folds value (a register of the reduction's type) into the
// thread's partial value.
func (f *fnWriter) accumulate(a *accumulator, value string) {
	f.mov(a.t, a.acc, f.fold(a.binOp(), a.t, a.acc, value))
}

// reduceStmt writes the statement of a reduction inside the loop: the
// value is computed (Go evaluates the index first, but a reduction's index
// has no effects, so it is evaluated once, after the loop) and folded in.
func (f *fnWriter) reduceStmt(a *accumulator) {
	e := a.r.Atomic
	if e.Value == nil || e.Value.Type() != a.t {
		f.fail("atomic %v on %s with a value that is not %v", e.Op, e.Array.Name, a.t)
	}
	f.accumulate(a, f.expr(e.Value))
}

// finishReductions writes the block's epilogue: every thread of the block
// runs it once, after the loop.
func (f *fnWriter) finishReductions() {
	l := f.lanes() // blocks.go
	lane, warp, nwarps, first := l.lane, l.warp, l.nwarps, l.first
	isWarp0 := f.isWarp0(l)

	for _, a := range f.redOrder {
		f.mov(a.t, a.acc, f.warpFold(a.binOp(), a.t, a.acc, l))
		slot := f.sharedSlot(a, warp)
		skip := f.label()
		f.braIf(first, true, skip)
		f.emit("st.shared.%s [%s], %s", opType(a.t), slot, a.acc)
		f.place(skip)
	}
	f.emit("bar.sync 0")

	done := f.label()
	f.braIf(isWarp0, true, done)
	for _, a := range f.redOrder {
		// Warp 0 combines the per-warp values; lanes past the block's warp
		// count hold the identity.
		has := f.reg(ir.Bool)
		f.emit("setp.lt.u32 %s, %s, %s", has, lane, nwarps)
		v := f.reg(a.t)
		f.emit("mov.%s %s, %s", movType(a.t), a.acc, literal(a.t, a.r.Identity()))
		f.emit("@%s ld.shared.%s %s, [%s]", has, opType(a.t), v, f.sharedSlot(a, lane))
		f.emit("@%s mov.%s %s, %s", has, movType(a.t), a.acc, v)
		f.mov(a.t, a.acc, f.warpFold(a.binOp(), a.t, a.acc, l))
		// Thread 0 writes, unless the block saw nothing.
		skip, same := f.label(), f.reg(ir.Bool)
		f.braIf(first, true, skip)
		bits := f.bits(a.t, a.acc)
		f.emit("setp.eq.%s %s, %s, %s", bitType(a.t), same, bits, literal(bitInt(a.t), a.r.Identity()))
		f.braIf(same, false, skip)
		f.atomicOf(a.r.Atomic, a.acc, false)
		f.place(skip)
	}
	f.place(done)
}

// bits is x (of type t) in an integer register of its width.
func (f *fnWriter) bits(t ir.Type, x string) string {
	if !t.IsFloat() {
		return x
	}
	b := f.reg(bitInt(t))
	f.emit("mov.%s %s, %s", bitType(t), b, x)
	return b
}

// bitInt is the unsigned integer type of t's width.
func bitInt(t ir.Type) ir.Type {
	if t.Size() == 8 {
		return ir.U64
	}
	return ir.U32
}

// sharedSlot is the shared address of slot idx of a's per-warp array.
func (f *fnWriter) sharedSlot(a *accumulator, idx string) string {
	base, off, addr := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %s", base, a.shared)
	f.emit("shl.b32 %s, %s, 3", off, idx)
	f.emit("add.u32 %s, %s, %s", addr, base, off)
	return addr
}
