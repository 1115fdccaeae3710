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
// mins and maxes and float sums), then a fold of the subgroups' totals in
// workgroup memory, leave one atomic per work group (groupReduce); float
// min and max, whose Go semantics (NaN, the zeros) the subgroup
// operations do not have, take one atomic per invocation. Integer results are exact; a float sum is rounded in
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
	f := g.f
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
		g.groupReduce(a, code, acc)
	}
}

// groupReduce combines acc across the work group and issues one atomic
// for it: a subgroup reduction, each subgroup's elected invocation writes
// its total into workgroup memory, a barrier, and invocation 0 folds the
// subgroups' totals. One atomic per work group keeps a float sum's
// rounding in the atomics small (the suite's 2-D sum was 1.5e-5 off with
// one per subgroup); every invocation reaches the barrier, as the
// grid-stride loop is left by its condition only.
func (g *gen) groupReduce(a *ir.Atomic, code uint32, acc ID) {
	f, m := g.f, g.m
	t := a.Type()
	ty, u32, b := g.typ(t), m.Int(32), m.Bool()
	m.Capability(CapabilityGroupNonUniform)
	m.Capability(CapabilityGroupNonUniformArithmetic)
	sub := m.ConstInt(32, ScopeSubgroup)
	total := f.Op(code, ty, sub, GroupOperationReduce, acc)
	if code == OpGroupNonUniformFAdd {
		m.Decorate(total, DecorationNoContraction)
	}
	// At most one subgroup per invocation: the work group's size bounds
	// the array, whatever the device's subgroup size.
	local := g.info.BlockDim
	arr := m.ArrayOf(ty, local)
	shared := m.Global(m.Pointer(StorageClassWorkgroup, arr), StorageClassWorkgroup)
	m.Name(shared, "subgroup_totals")
	g.interfaces = append(g.interfaces, shared)
	sid := f.Op(OpLoad, u32, g.builtin(BuiltInSubgroupId, "gl_SubgroupID"))
	nsub := f.Op(OpLoad, u32, g.builtin(BuiltInNumSubgroups, "gl_NumSubgroups"))
	elem := m.Pointer(StorageClassWorkgroup, ty)
	g.ifThen(f.Op(OpGroupNonUniformElect, b, sub), func() {
		f.Void(OpStore, f.Op(OpAccessChain, elem, shared, sid), total)
	})
	wg := m.ConstInt(32, ScopeWorkgroup)
	f.Void(OpControlBarrier, wg, wg, m.ConstInt(32, MemorySemanticsAcquireRelease|MemorySemanticsWorkgroupMemory))
	first := f.Op(OpIEqual, b, g.builtinX(g.localID), m.ConstInt(32, 0))
	g.ifThen(first, func() {
		sum := f.Var(ty)
		i := f.Var(u32)
		f.Void(OpStore, sum, f.Op(OpLoad, ty, f.Op(OpAccessChain, elem, shared, m.ConstInt(32, 0))))
		f.Void(OpStore, i, m.ConstInt(32, 1))
		g.loop(nil, func() ID {
			return f.Op(OpULessThan, b, f.Op(OpLoad, u32, i), nsub)
		}, func() {
			x := f.Op(OpLoad, ty, f.Op(OpAccessChain, elem, shared, f.Op(OpLoad, u32, i)))
			f.Void(OpStore, sum, g.combine(a.Op, t, f.Op(OpLoad, ty, sum), x))
		}, func() {
			f.Void(OpStore, i, f.Op(OpIAdd, u32, f.Op(OpLoad, u32, i), m.ConstInt(32, 1)))
		})
		g.atomicWith(a, f.Op(OpLoad, ty, sum))
	})
}

// atomicWith issues atomic a with the value v in place of its own.
func (g *gen) atomicWith(a *ir.Atomic, v ID) {
	ptr, ok := g.element(a.Array, a.Index, a.Leaf)
	g.guarded(ok, func() { g.atomicAt(a, a.Type(), ptr, v, 0) })
}
