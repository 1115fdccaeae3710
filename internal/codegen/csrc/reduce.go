package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Reductions (docs/semantics.md#reductions): an atomic add, min or max of a parallel task whose
// old value is unused and whose address is the same for every iteration
// (lower.Reduction, scope Whole) is combined before it reaches memory: each
// thread folds its iterations into a local accumulator that starts at the
// operation's identity; after the loop the block combines its threads'
// accumulators in shared memory (a tree of halving steps between
// barriers) and one thread issues a single atomic for the block. Integer
// sums, min and max give exactly the per-iteration result; a float sum is
// rounded in another order (lower.Reduction allows it). Reductions whose
// address varies along outer dimensions (scope Innermost) keep their
// per-iteration atomics here.
//
// The address is evaluated once, after the loop: lowering guarantees it
// reads only constants, scalar parameters, extents and kernel-level
// locals, so it has the value every iteration would have computed.

// reduction is one combined atomic of the task being written.
type reduction struct {
	*lower.Reduction
	acc string // the thread's accumulator
	buf string // the block's shared array
}

// setupReductions declares the accumulators and shared arrays of the
// task's Whole reductions and starts the accumulators at the identity.
func (f *fn) setupReductions() {
	for _, r := range f.task.Reductions {
		if r.Scope != lower.Whole {
			continue
		}
		t := r.Atomic.Type() // the element's, or the record leaf's
		k := len(f.reduced)
		red := &reduction{Reduction: r, acc: fmt.Sprintf("r%d_acc", k), buf: fmt.Sprintf("r%d_block", k)}
		f.declare(cType(t), red.acc)
		f.declare("QD_SHARED "+cType(t), fmt.Sprintf("%s[%d]", red.buf, f.info.BlockDim))
		f.line("%s = %s;", red.acc, literal(t, r.Identity()))
		if f.reduced == nil {
			f.reduced = map[*ir.Atomic]*reduction{}
		}
		f.reduced[r.Atomic] = red
	}
}

// combine is the C expression of r's operation on a and b (combineOp).
func (r *reduction) combine(a, b string) string {
	op := map[ir.AtomicOp]ir.BinOp{ir.AtomicAdd: ir.Add, ir.AtomicMin: ir.Min, ir.AtomicMax: ir.Max}[r.Atomic.Op]
	return combineOp(op, r.Atomic.Type(), a, b)
}

// combineOp is the C expression of a op b for the combined reductions and
// the block collectives (blocks.go), with Go's semantics: wrapping
// integer sums, NaN-aware float min and max (gosem.MinMaxFloat).
func combineOp(op ir.BinOp, t ir.Type, a, b string) string {
	switch {
	case op == ir.Add && t.IsFloat():
		return a + " + " + b
	case op == ir.Add:
		return fmt.Sprintf("(%s)((%s)%s + (%s)%s)", cType(t), unsignedOf(t), a, unsignedOf(t), b)
	case t.IsFloat():
		return fmt.Sprintf("qd_%v_%v(%s, %s)", op, t, a, b)
	case op == ir.Min:
		return fmt.Sprintf("%s < %s ? %s : %s", a, b, a, b)
	}
	return fmt.Sprintf("%s > %s ? %s : %s", a, b, a, b)
}

// accumulate writes one iteration's contribution to reduction r.
func (f *fn) accumulate(r *reduction) {
	v := f.expr(r.Atomic.Value)
	f.line("%s = %s;", r.acc, r.combine(r.acc, v))
}

// finishReductions writes the block's combination of each reduction and
// its one atomic. Every thread of the block gets here (the loop is left
// by a jump, not a return), as the barriers need.
func (f *fn) finishReductions() {
	pow := 1
	for pow < f.info.BlockDim {
		pow *= 2
	}
	tid := f.tmp(ir.U32, "qd_tid()")
	for _, r := range f.task.Reductions {
		red := f.reduced[r.Atomic]
		if red == nil {
			continue
		}
		f.line("%s[%s] = %s;", red.buf, tid, red.acc)
		f.line("QD_BARRIER();")
		f.line("for (qd_u32 s = %du; s > 0u; s >>= 1) {", pow/2)
		f.indent++
		f.line("if (%[1]s < s && %[1]s + s < %[2]du)", tid, f.info.BlockDim)
		f.line("\t%s[%s] = %s;", red.buf, tid, red.combine(fmt.Sprintf("%s[%s]", red.buf, tid), fmt.Sprintf("%s[%s + s]", red.buf, tid)))
		f.line("QD_BARRIER();")
		f.indent--
		f.line("}")
		f.line("if (%s == 0u) {", tid)
		f.indent++
		f.atomicOf(r.Atomic, red.buf+"[0]", false)
		f.indent--
		f.line("}")
	}
}
