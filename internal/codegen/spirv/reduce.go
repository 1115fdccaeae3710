package spirv

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Reductions (docs/semantics.md#reductions): an atomic add, min or max of
// a parallel task whose old value is unused and whose address is the same
// for every iteration (lower.Reduction, scope Whole) is combined before it
// reaches memory, as the other GPU generators do: each invocation folds
// its iterations into a local accumulator that starts at the operation's
// identity; after the loop, where every invocation of the work group
// arrives, a subgroup reduction (Options.SubgroupReduce: integer sums,
// mins and maxes and float sums) leaves one atomic per subgroup, issued by
// its elected invocation; float min and max, whose Go semantics (NaN, the
// zeros) the subgroup operations do not have, take one atomic per
// invocation. Integer results are exact; a float sum is rounded in
// another order, which lower.Reduction allows. Without it, 2^28 float32
// ones summed by one atomic each stop at 2^24, where adding 1 no longer
// changes a float32.
//
// The address is evaluated once, after the loop: lowering guarantees it
// reads only constants, scalar parameters, extents and kernel-level
// locals.

// reduction is one combined atomic of the task being written.
type reduction struct {
	r   *lower.Reduction
	acc ID // the invocation's accumulator (a Function variable)
}

// setupReductions makes the accumulators of the task's Whole reductions
// and starts them at the identity.
func (g *gen) setupReductions() {
	for _, r := range g.task.Reductions {
		if r.Scope != lower.Whole {
			continue
		}
		t := r.Atomic.Type()
		acc := g.f.Var(g.typ(t))
		g.f.Void(OpStore, acc, g.constant(t, r.Identity()))
		if g.reduced == nil {
			g.reduced = map[*ir.Atomic]*reduction{}
		}
		g.reduced[r.Atomic] = &reduction{r: r, acc: acc}
	}
}

// accumulate folds one iteration's value into r's accumulator.
func (g *gen) accumulate(red *reduction) {
	a := red.r.Atomic
	t := a.Type()
	v := g.expr(a.Value)
	cur := g.f.Op(OpLoad, g.typ(t), red.acc)
	g.f.Void(OpStore, red.acc, g.combine(a.Op, t, cur, v))
}

// combine is a op b with Go's semantics: wrapping integer sums,
// NaN-aware float min and max.
func (g *gen) combine(op ir.AtomicOp, t ir.Type, a, b ID) ID {
	bin := map[ir.AtomicOp]ir.BinOp{ir.AtomicAdd: ir.Add, ir.AtomicMin: ir.Min, ir.AtomicMax: ir.Max}[op]
	if t.IsFloat() {
		if bin == ir.Add {
			r := g.f.Op(OpFAdd, g.typ(t), a, b)
			g.m.Decorate(r, DecorationNoContraction)
			return r
		}
		return g.minMaxFloat(bin == ir.Min, t, a, b)
	}
	return g.intOp(bin, t, a, b)
}

// finishReductions issues each combined reduction's atomic, after the
// loop.
func (g *gen) finishReductions() {
	f, m := g.f, g.m
	for _, r := range g.task.Reductions {
		red := g.reduced[r.Atomic]
		if red == nil {
			continue
		}
		a := r.Atomic
		t := a.Type()
		acc := f.Op(OpLoad, g.typ(t), red.acc)
		group := map[ir.AtomicOp][3]uint32{
			ir.AtomicAdd: {OpGroupNonUniformIAdd, OpGroupNonUniformIAdd, OpGroupNonUniformFAdd},
			ir.AtomicMin: {OpGroupNonUniformSMin, OpGroupNonUniformUMin, 0},
			ir.AtomicMax: {OpGroupNonUniformSMax, OpGroupNonUniformUMax, 0},
		}[a.Op]
		code := group[1]
		switch {
		case t.IsFloat():
			code = group[2]
		case t.IsSigned():
			code = group[0]
		}
		if !g.opts.SubgroupReduce || code == 0 {
			g.atomicWith(a, acc)
			continue
		}
		m.Capability(CapabilityGroupNonUniform)
		m.Capability(CapabilityGroupNonUniformArithmetic)
		sub := m.ConstInt(32, ScopeSubgroup)
		total := f.Op(code, g.typ(t), sub, GroupOperationReduce, acc)
		if code == OpGroupNonUniformFAdd {
			m.Decorate(total, DecorationNoContraction)
		}
		elected := f.Op(OpGroupNonUniformElect, m.Bool(), sub)
		g.ifThen(elected, func() { g.atomicWith(a, total) })
	}
}

// atomicWith issues atomic a with the value v in place of its own.
func (g *gen) atomicWith(a *ir.Atomic, v ID) {
	ptr, ok := g.element(a.Array, a.Index, a.Leaf)
	g.guarded(ok, func() { g.atomicAt(a, a.Type(), ptr, v, 0) })
}
