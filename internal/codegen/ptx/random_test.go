package ptx

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestRandomKernels compiles (and, with ptxas, assembles) random kernels
// that use every operator, conversion, intrinsic and atomic on every type, in
// nested control flow, parallel loops of 1 to 3 dims and serial tasks.
func TestRandomKernels(t *testing.T) {
	n := 24
	if testing.Short() {
		n = 4
	}
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			k := randomKernel(uint64(seed))
			compileKernel(t, k)
		})
	}
}

var (
	numericTypes = []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64}
	allTypes     = append([]ir.Type{ir.Bool}, numericTypes...)
)

type gen struct {
	r       *rand.Rand
	b       *ir.Builder
	arrays  map[ir.Type]*ir.Param
	grid    *ir.Param // a 3-dim f32 array
	scalars map[ir.Type]*ir.Param
	locals  [][]*ir.Var // visible locals, by scope
	loops   int         // enclosing serial loops
}

func randomKernel(seed uint64) *ir.Kernel {
	g := &gen{r: rand.New(rand.NewPCG(seed, 42)), b: ir.NewBuilder(fmt.Sprintf("rand%d", seed)),
		arrays: map[ir.Type]*ir.Param{}, scalars: map[ir.Type]*ir.Param{}}
	for _, t := range allTypes {
		g.arrays[t] = g.b.Array("a_"+t.String(), t, 1)
		g.scalars[t] = g.b.Scalar("s_"+t.String(), t)
	}
	g.grid = g.b.Array("grid", ir.F32, 3)
	g.locals = [][]*ir.Var{nil}
	top := g.b.Decl("top", g.expr(ir.I64, 2))
	for range 3 {
		switch g.r.IntN(4) {
		case 0:
			g.scope(func() { g.stmts(4, 3) })
			g.b.Assign(top, g.expr(ir.I64, 2))
		case 1:
			g.b.Parallel(ir.Op(ir.Add, ir.Ref(top), ir.LenOf(g.arrays[ir.F32], 0)), func(i *ir.Var) {
				g.scope(func() { g.add(i); g.stmts(6, 3) })
			})
		case 2:
			g.b.ParallelN([]ir.Expr{ir.LenOf(g.grid, 0), ir.LenOf(g.grid, 1), ir.LenOf(g.grid, 2)}, func(v []*ir.Var) {
				g.scope(func() {
					g.b.Store(g.grid, g.expr(ir.F32, 3), ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2]))
					g.stmts(4, 2)
				})
			})
		default:
			g.b.Parallel2(ir.Conv(ir.I32, ir.P(g.scalars[ir.I64])), ir.P(g.scalars[ir.I32]), func(i, j *ir.Var) {
				g.scope(func() { g.add(i); g.add(j); g.stmts(5, 3) })
			})
		}
	}
	return g.b.Kernel()
}

func (g *gen) scope(f func()) {
	g.locals = append(g.locals, nil)
	f()
	g.locals = g.locals[:len(g.locals)-1]
}

func (g *gen) add(v *ir.Var) { g.locals[len(g.locals)-1] = append(g.locals[len(g.locals)-1], v) }

func (g *gen) local(t ir.Type) *ir.Var {
	var vs []*ir.Var
	for _, s := range g.locals {
		for _, v := range s {
			if v.Type == t {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) == 0 {
		return nil
	}
	return vs[g.r.IntN(len(vs))]
}

// assignable is a local of type t that is not a parallel loop variable.
func (g *gen) assignable(t ir.Type) *ir.Var {
	v := g.local(t)
	if v == nil || v.Name == "i" || v.Name == "j" || v.Name == "k" {
		return nil
	}
	return v
}

func (g *gen) pick(ts []ir.Type) ir.Type { return ts[g.r.IntN(len(ts))] }

func (g *gen) stmts(n, depth int) {
	for range 1 + g.r.IntN(n) {
		g.stmt(depth)
	}
}

func (g *gen) index() ir.Expr {
	if v := g.local(ir.I64); v != nil && g.r.IntN(2) == 0 {
		return ir.Ref(v)
	}
	return ir.Conv(ir.I64, g.expr(g.pick([]ir.Type{ir.I32, ir.U32, ir.I64}), 1))
}

func (g *gen) stmt(depth int) {
	t := g.pick(allTypes)
	switch c := g.r.IntN(10); {
	case c < 3:
		g.add(g.b.Decl(fmt.Sprintf("v%d", g.r.IntN(1000)), g.expr(t, 3)))
	case c < 4:
		if v := g.assignable(t); v != nil {
			g.b.Assign(v, g.expr(t, 3))
		}
	case c < 6:
		g.b.Store(g.arrays[t], g.expr(t, 3), g.index())
	case c < 7:
		if t != ir.Bool {
			g.b.Do(g.atomic(t, 2))
		}
	case c < 8 && depth > 0:
		var els func()
		if g.r.IntN(2) == 0 {
			els = func() { g.scope(func() { g.stmts(3, depth-1) }) }
		}
		g.b.If(g.expr(ir.Bool, 2), func() { g.scope(func() { g.stmts(3, depth-1) }) }, els)
	case c < 9 && depth > 0:
		g.scope(func() {
			g.b.ForRange("n", g.expr(g.pick([]ir.Type{ir.I32, ir.U64}), 1), func(n *ir.Var) {
				g.loops++
				g.scope(func() {
					g.add(n)
					g.stmts(3, depth-1)
				})
				g.loops--
			})
		})
	case depth > 0:
		g.b.While(g.expr(ir.Bool, 2), func() {
			g.loops++
			g.scope(func() { g.stmts(3, depth-1) })
			g.b.If(g.expr(ir.Bool, 1), func() { g.b.Break() }, func() { g.b.Continue() })
			g.loops--
		})
	}
}

var (
	intOps   = []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Rem, ir.And, ir.Or, ir.Xor, ir.AndNot, ir.Shl, ir.Shr, ir.Min, ir.Max}
	floatOps = []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Min, ir.Max}
	cmpOps   = []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge}
)

func (g *gen) constant(t ir.Type) ir.Expr {
	switch t {
	case ir.Bool:
		return ir.BoolC(g.r.IntN(2) == 0)
	case ir.F32:
		return ir.F32c([]float32{0, -0.5, 1e30, 3.25}[g.r.IntN(4)])
	case ir.F64:
		return ir.F64c([]float64{0, -2.5, 1e300, 0.1}[g.r.IntN(4)])
	}
	return ir.IntC(t, int64(g.r.IntN(100)-50))
}

func (g *gen) expr(t ir.Type, depth int) ir.Expr {
	if depth <= 0 || g.r.IntN(5) == 0 {
		switch g.r.IntN(4) {
		case 0:
			if v := g.local(t); v != nil {
				return ir.Ref(v)
			}
		case 1:
			return ir.P(g.scalars[t])
		case 2:
			return ir.Ld(g.arrays[t], g.index())
		}
		return g.constant(t)
	}
	d := depth - 1
	switch t {
	case ir.Bool:
		switch g.r.IntN(4) {
		case 0:
			return ir.Un(ir.Not, g.expr(ir.Bool, d))
		case 1:
			return ir.Op([]ir.BinOp{ir.LAnd, ir.LOr, ir.Eq, ir.Ne}[g.r.IntN(4)], g.expr(ir.Bool, d), g.expr(ir.Bool, d))
		case 2:
			return ir.Sel(g.expr(ir.Bool, d), g.expr(ir.Bool, d), g.expr(ir.Bool, d))
		}
		ct := g.pick(numericTypes)
		return ir.Op(cmpOps[g.r.IntN(len(cmpOps))], g.expr(ct, d), g.expr(ct, d))
	}
	switch g.r.IntN(6) {
	case 0:
		return ir.Conv(t, g.expr(g.pick(numericTypes), d))
	case 1:
		return ir.Sel(g.expr(ir.Bool, d), g.expr(t, d), g.expr(t, d))
	case 2:
		if t.IsFloat() {
			fn := ir.Intrinsics()[g.r.IntN(len(ir.Intrinsics()))]
			args := []ir.Expr{g.expr(t, d)}
			if fn.Arity() == 2 {
				args = append(args, g.expr(t, d))
			}
			return ir.Fn(fn, args...)
		}
		return ir.Un([]ir.UnOp{ir.Neg, ir.BitNot}[g.r.IntN(2)], g.expr(t, d))
	case 3:
		return g.atomic(t, d)
	}
	if t.IsFloat() {
		if g.r.IntN(4) == 0 {
			return ir.Un(ir.Neg, g.expr(t, d))
		}
		return ir.Op(floatOps[g.r.IntN(len(floatOps))], g.expr(t, d), g.expr(t, d))
	}
	op := intOps[g.r.IntN(len(intOps))]
	if op.IsShift() {
		return ir.Op(op, g.expr(t, d), g.expr(g.pick([]ir.Type{ir.I32, ir.I64, ir.U32, ir.U64}), d))
	}
	return ir.Op(op, g.expr(t, d), g.expr(t, d))
}

func (g *gen) atomic(t ir.Type, depth int) ir.Expr {
	ops := []ir.AtomicOp{ir.AtomicAdd, ir.AtomicSub, ir.AtomicMin, ir.AtomicMax, ir.AtomicExchange, ir.AtomicCAS}
	if t.IsInteger() {
		ops = append(ops, ir.AtomicAnd, ir.AtomicOr, ir.AtomicXor)
	}
	a := &ir.Atomic{Op: ops[g.r.IntN(len(ops))], Array: g.arrays[t], Index: []ir.Expr{g.index()}, Value: g.expr(t, depth)}
	if a.Op == ir.AtomicCAS {
		a.Compare = g.expr(t, depth)
	}
	return a
}
