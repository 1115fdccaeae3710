package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Random differential tests: random kernels (expressions over i64, i32, f64
// and bool; locals; if/else; serial loops with break and continue) run
// through the compiler and through a plain-Go tree-walking reference
// interpreter (below), lane by lane.

type gen struct {
	r     *rand.Rand
	b     *ir.Builder
	x     *ir.Param // f64 input
	y     *ir.Param // i64 input
	i     *ir.Var
	vars  []*ir.Var
	fixed map[*ir.Var]bool // loop counters: read, never assigned
	depth int
	// cheap: no loads, calls, division or shifts but in declarations at
	// the top level, so that most ifs and conditions run converted
	// (ifconv.go) rather than masked.
	cheap bool
}

func (g *gen) pick(t ir.Type) *ir.Var {
	var c []*ir.Var
	for _, v := range g.vars {
		if v.Type == t {
			c = append(c, v)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[g.r.IntN(len(c))]
}

// safeIndex maps any i64 to [0, len(a)).
func safeIndex(a *ir.Param, e ir.Expr) ir.Expr {
	n := ir.LenOf(a, 0)
	return ir.Op(ir.Rem, ir.Op(ir.Add, ir.Op(ir.Rem, e, n), n), n)
}

func (g *gen) expr(t ir.Type, d int) ir.Expr {
	if d <= 0 || g.r.IntN(4) == 0 {
		switch t {
		case ir.I64:
			switch g.r.IntN(4) {
			case 0:
				return ir.Ref(g.i)
			case 1:
				if v := g.pick(t); v != nil {
					return ir.Ref(v)
				}
			case 2:
				if !g.cheap {
					return ir.Ld(g.y, ir.Ref(g.i))
				}
			}
			return ir.I64c(int64(g.r.IntN(21) - 10))
		case ir.I32:
			if v := g.pick(t); v != nil && g.r.IntN(2) == 0 {
				return ir.Ref(v)
			}
			return ir.I32c(int32(g.r.IntN(2001) - 1000))
		case ir.F64:
			switch g.r.IntN(3) {
			case 0:
				if g.cheap {
					return ir.F64c(0.5)
				}
				return ir.Ld(g.x, ir.Ref(g.i))
			case 1:
				if v := g.pick(t); v != nil {
					return ir.Ref(v)
				}
			}
			return ir.F64c(float64(g.r.IntN(200)-100) / 8)
		default:
			if v := g.pick(t); v != nil && g.r.IntN(2) == 0 {
				return ir.Ref(v)
			}
			return ir.BoolC(g.r.IntN(2) == 0)
		}
	}
	d--
	switch t {
	case ir.I64, ir.I32:
		ops := []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.And, ir.Or, ir.Xor, ir.AndNot, ir.Min, ir.Max, ir.Div, ir.Rem, ir.Shl, ir.Shr}
		switch k := g.r.IntN(8); {
		case k == 0 && t == ir.I64 && !g.cheap:
			return ir.Ld(g.y, safeIndex(g.y, g.expr(ir.I64, d)))
		case k == 1:
			return ir.Sel(g.expr(ir.Bool, d), g.expr(t, d), g.expr(t, d))
		case k == 2:
			other := ir.I32
			if t == ir.I32 {
				other = ir.I64
			}
			if g.r.IntN(2) == 0 {
				return ir.Conv(t, g.expr(ir.F64, d))
			}
			return ir.Conv(t, g.expr(other, d))
		case k == 3:
			return ir.Un([]ir.UnOp{ir.Neg, ir.BitNot}[g.r.IntN(2)], g.expr(t, d))
		}
		if g.cheap {
			ops = ops[:9] // no division or shifts
		}
		op := ops[g.r.IntN(len(ops))]
		x, y := g.expr(t, d), g.expr(t, d)
		switch op {
		case ir.Div, ir.Rem: // keep divisors away from zero: y|1
			y = ir.Op(ir.Or, y, &ir.Const{T: t, Bits: 1})
		case ir.Shl, ir.Shr: // counts in [0, 70)
			y = ir.Op(ir.Rem, ir.Op(ir.And, y, &ir.Const{T: t, Bits: 127}), &ir.Const{T: t, Bits: 70})
		}
		return ir.Op(op, x, y)
	case ir.F64:
		switch k := g.r.IntN(6); {
		case g.cheap && (k == 0 || k == 3):
			return g.expr(t, d)
		case k == 0:
			return ir.Ld(g.x, safeIndex(g.x, g.expr(ir.I64, d)))
		case k == 1:
			return ir.Sel(g.expr(ir.Bool, d), g.expr(t, d), g.expr(t, d))
		case k == 2:
			return ir.Conv(ir.F64, g.expr(ir.I64, d))
		case k == 3:
			fns := []ir.Intrinsic{ir.Sqrt, ir.Sin, ir.Abs, ir.Floor, ir.Exp, ir.Atan2, ir.Hypot}
			f := fns[g.r.IntN(len(fns))]
			if f.Arity() == 2 {
				return ir.Fn(f, g.expr(t, d), g.expr(t, d))
			}
			return ir.Fn(f, g.expr(t, d))
		}
		ops := []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Min, ir.Max}
		return ir.Op(ops[g.r.IntN(len(ops))], g.expr(t, d), g.expr(t, d))
	default:
		switch g.r.IntN(7) {
		case 5, 6: // contiguous index against a uniform value: lane ranges
			cmp := []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge}[g.r.IntN(6)]
			lin := ir.Op(ir.Add, ir.Ref(g.i), ir.I64c(int64(g.r.IntN(9)-4)))
			u := ir.I64c(int64(g.r.IntN(800) - 50))
			if g.r.IntN(2) == 0 {
				return ir.Op(cmp, u, lin)
			}
			return ir.Op(cmp, lin, u)
		case 0:
			return ir.Un(ir.Not, g.expr(ir.Bool, d))
		case 1:
			return ir.Op([]ir.BinOp{ir.LAnd, ir.LOr}[g.r.IntN(2)], g.expr(ir.Bool, d), g.expr(ir.Bool, d))
		case 2:
			return ir.Op([]ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge}[g.r.IntN(6)], g.expr(ir.F64, d), g.expr(ir.F64, d))
		}
		it := []ir.Type{ir.I64, ir.I32}[g.r.IntN(2)]
		return ir.Op([]ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge}[g.r.IntN(6)], g.expr(it, d), g.expr(it, d))
	}
}

var genTypes = []ir.Type{ir.I64, ir.I32, ir.F64, ir.Bool}

func (g *gen) stmts(n int, inLoop bool) {
	for range n {
		switch k := g.r.IntN(10); {
		case (k < 3 || len(g.vars) == 0) && !(g.cheap && g.depth > 0):
			// (A cheap kernel declares at the top level only: a branch
			// with a declaration is not converted.)
			t := genTypes[g.r.IntN(len(genTypes))]
			cheap := g.cheap
			g.cheap = cheap && g.depth > 0 // top-level declarations read the inputs
			g.vars = append(g.vars, g.b.Decl("v", g.expr(t, 3)))
			g.cheap = cheap
		case k < 6 || len(g.vars) > 0 && k < 3:
			v := g.vars[g.r.IntN(len(g.vars))]
			if !g.fixed[v] {
				g.b.Assign(v, g.expr(v.Type, g.depth3()))
			}
		case k == 6 && g.depth < 3:
			g.depth++
			saved := len(g.vars)
			g.b.If(g.cond(), func() { g.stmts(1+g.r.IntN(3), inLoop); g.vars = g.vars[:saved] },
				func() { g.stmts(g.r.IntN(3), inLoop); g.vars = g.vars[:saved] })
			g.depth--
		case k == 7 && g.depth < 3:
			g.depth++
			saved := len(g.vars)
			trip := ir.Op(ir.Rem, ir.Op(ir.And, g.expr(ir.I64, 2), ir.I64c(1023)), ir.I64c(6))
			g.b.ForRange("k", trip, func(k *ir.Var) {
				g.vars = append(g.vars, k)
				g.fixed[k] = true
				g.stmts(1+g.r.IntN(4), true)
				g.vars = g.vars[:saved]
			})
			g.depth--
		case k >= 8 && inLoop:
			g.b.If(g.expr(ir.Bool, 2), func() {
				if g.r.IntN(2) == 0 {
					g.b.Break()
				} else {
					g.b.Continue()
				}
			}, nil)
		}
	}
}

// cond is the condition of an if: any bool expression, or, when cheap, a
// comparison of a local with a value (data-dependent, so converted),
// sometimes negated or joined to another.
func (g *gen) cond() ir.Expr {
	if !g.cheap {
		return g.expr(ir.Bool, 3)
	}
	cmp := func() ir.Expr {
		t := []ir.Type{ir.I64, ir.I32, ir.F64}[g.r.IntN(3)]
		v := g.pick(t)
		if v == nil {
			return g.expr(ir.Bool, 1)
		}
		op := []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge}[g.r.IntN(6)]
		return ir.Op(op, ir.Ref(v), g.expr(t, 0))
	}
	switch g.r.IntN(4) {
	case 0:
		return ir.Un(ir.Not, cmp())
	case 1:
		return ir.Op([]ir.BinOp{ir.LAnd, ir.LOr}[g.r.IntN(2)], cmp(), cmp())
	}
	return cmp()
}

// depth3 is the depth of assigned values and conditions: 3, or 1 when
// cheap, so that branches stay short enough to be converted.
func (g *gen) depth3() int {
	if g.cheap {
		return 1
	}
	return 3
}

func randomKernel(seed uint64) (*ir.Kernel, *ir.Param, []*ir.Var) {
	return randomKernelOf(seed, false)
}

// randomKernelOf is randomKernel, cheap or not (gen.cheap).
func randomKernelOf(seed uint64, cheap bool) (*ir.Kernel, *ir.Param, []*ir.Var) {
	r := rand.New(rand.NewPCG(seed, 99))
	b := ir.NewBuilder("rnd")
	g := &gen{r: r, b: b, fixed: map[*ir.Var]bool{}, cheap: cheap}
	g.x, g.y = b.Array("x", ir.F64, 1), b.Array("y", ir.I64, 1)
	out := b.Array("out", ir.F64, 2)
	var outs []*ir.Var
	b.Parallel(ir.LenOf(g.x, 0), func(i *ir.Var) {
		g.i = i
		g.stmts(3+r.IntN(6), false)
		// Observe every local that is still in scope.
		for j, v := range g.vars {
			if j >= 8 {
				break
			}
			var e ir.Expr
			switch v.Type {
			case ir.Bool:
				e = ir.Sel(ir.Ref(v), ir.F64c(1), ir.F64c(0))
			default:
				e = ir.Conv(ir.F64, ir.Ref(v))
			}
			b.Store(out, e, ir.I64c(int64(j)), ir.Ref(i))
			outs = append(outs, v)
		}
	})
	return b.Kernel(), out, outs
}

func TestRandomKernels(t *testing.T) {
	const n = 700
	for seed := range uint64(1300) {
		// Past the first 300, cheap: converted ifs and conditions.
		k, _, _ := randomKernelOf(seed, seed >= 300)
		p := compileKernel(t, k)
		xs, ys := make([]float64, n), make([]int64, n)
		rr := rand.New(rand.NewPCG(seed, 7))
		for i := range xs {
			xs[i] = float64(rr.IntN(2000)-1000) / 16
			ys[i] = int64(rr.IntN(2000) - 1000)
		}
		got := make([]float64, 8*n)
		ch := chunkings[seed%uint64(len(chunkings))]
		if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(ys), arr(got, 8, n)}}, ch.chunk, ch.workers); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := make([]float64, 8*n)
		ref := &interp{x: xs, y: ys, out: want, n: n}
		for i := range n {
			ref.run(k, int64(i))
		}
		for j := range want {
			if !same(got[j], want[j]) {
				t.Fatalf("seed %d: out[%d][%d] = %v, want %v\n%s", seed, j/n, j%n, got[j], want[j], printKernel(k))
			}
		}
	}
}

func printKernel(k *ir.Kernel) string {
	defer func() { _ = recover() }()
	return ir.Print(k)
}

// interp is the reference: a direct tree-walking interpreter of the random
// kernels' subset, one iteration at a time, in plain Go.
type interp struct {
	x   []float64
	y   []int64
	out []float64
	n   int
	env map[*ir.Var]any
}

type ctl struct {
	loop *ir.For
	brk  bool
}

func (in *interp) run(k *ir.Kernel, i int64) {
	pf := k.Body[0].(*ir.ParallelFor)
	in.env = map[*ir.Var]any{pf.Vars[0]: i}
	in.block(pf.Body, nil)
}

func (in *interp) block(list []ir.Stmt, loop *ir.For) *ctl {
	for _, s := range list {
		if c := in.stmt(s, loop); c != nil {
			return c
		}
	}
	return nil
}

func (in *interp) stmt(s ir.Stmt, loop *ir.For) *ctl {
	switch s := s.(type) {
	case *ir.Decl:
		in.env[s.Var] = in.eval(s.Init)
	case *ir.Assign:
		in.env[s.Var] = in.eval(s.Value)
	case *ir.Store:
		row, col := in.eval(s.Index[0]).(int64), in.eval(s.Index[1]).(int64)
		in.out[int(row)*in.n+int(col)] = in.eval(s.Value).(float64)
	case *ir.If:
		if in.eval(s.Cond).(bool) {
			return in.block(s.Then, loop)
		}
		return in.block(s.Else, loop)
	case *ir.For:
		in.block(s.Init, loop)
		for s.Cond == nil || in.eval(s.Cond).(bool) {
			if c := in.block(s.Body, s); c != nil {
				if c.loop != s {
					return c
				}
				if c.brk {
					break
				}
			}
			in.block(s.Post, loop)
		}
	case *ir.Break:
		return &ctl{loop: loop, brk: true}
	case *ir.Continue:
		return &ctl{loop: loop}
	default:
		panic("interp: statement")
	}
	return nil
}

func (in *interp) eval(e ir.Expr) any {
	switch e := e.(type) {
	case *ir.Const:
		switch e.T {
		case ir.I64:
			return int64(e.Bits)
		case ir.I32:
			return int32(e.Bits)
		case ir.F64:
			return math.Float64frombits(e.Bits)
		}
		return e.Bits != 0
	case *ir.VarRef:
		return in.env[e.Var]
	case *ir.Len:
		return int64(in.n)
	case *ir.Load:
		i := in.eval(e.Index[0]).(int64)
		if e.Array.Elem == ir.F64 {
			return in.x[i]
		}
		return in.y[i]
	case *ir.Select:
		c, a, b := in.eval(e.Cond).(bool), in.eval(e.X), in.eval(e.Y)
		if c {
			return a
		}
		return b
	case *ir.Convert:
		v := in.eval(e.X)
		if e.X.Type() == e.To {
			return v
		}
		switch e.To {
		case ir.I64:
			switch v := v.(type) {
			case int32:
				return int64(v)
			case float64:
				return int64(v)
			}
		case ir.I32:
			switch v := v.(type) {
			case int64:
				return int32(v)
			case float64:
				return int32(v)
			}
		case ir.F64:
			switch v := v.(type) {
			case int32:
				return float64(v)
			case int64:
				return float64(v)
			}
		}
	case *ir.Unary:
		switch v := in.eval(e.X).(type) {
		case bool:
			return !v
		case int64:
			if e.Op == ir.Neg {
				return -v
			}
			return ^v
		case int32:
			if e.Op == ir.Neg {
				return -v
			}
			return ^v
		}
	case *ir.Call:
		a := in.eval(e.Args[0]).(float64)
		switch e.Fn {
		case ir.Sqrt:
			return math.Sqrt(a)
		case ir.Sin:
			return math.Sin(a)
		case ir.Abs:
			return math.Abs(a)
		case ir.Floor:
			return math.Floor(a)
		case ir.Exp:
			return math.Exp(a)
		case ir.Atan2:
			return math.Atan2(a, in.eval(e.Args[1]).(float64))
		case ir.Hypot:
			return math.Hypot(a, in.eval(e.Args[1]).(float64))
		}
	case *ir.Binary:
		if e.Op == ir.LAnd {
			return in.eval(e.X).(bool) && in.eval(e.Y).(bool)
		}
		if e.Op == ir.LOr {
			return in.eval(e.X).(bool) || in.eval(e.Y).(bool)
		}
		x, y := in.eval(e.X), in.eval(e.Y)
		switch x := x.(type) {
		case int64:
			return binRef(e.Op, x, y.(int64))
		case int32:
			return binRef(e.Op, x, y.(int32))
		case float64:
			return binFloatRef(e.Op, x, y.(float64))
		case bool:
			if e.Op == ir.Eq {
				return x == y.(bool)
			}
			return x != y.(bool)
		}
	}
	panic("interp: expression")
}

func binRef[T int32 | int64](op ir.BinOp, x, y T) any {
	switch op {
	case ir.Add:
		return x + y
	case ir.Sub:
		return x - y
	case ir.Mul:
		return x * y
	case ir.Div:
		return x / y
	case ir.Rem:
		return x % y
	case ir.And:
		return x & y
	case ir.Or:
		return x | y
	case ir.Xor:
		return x ^ y
	case ir.AndNot:
		return x &^ y
	case ir.Shl:
		return x << y
	case ir.Shr:
		return x >> y
	case ir.Min:
		return min(x, y)
	case ir.Max:
		return max(x, y)
	}
	return cmpRef(op, x, y)
}

func binFloatRef(op ir.BinOp, x, y float64) any {
	switch op {
	case ir.Add:
		return x + y
	case ir.Sub:
		return x - y
	case ir.Mul:
		return float64(x * y)
	case ir.Div:
		return x / y
	case ir.Min:
		return min(x, y)
	case ir.Max:
		return max(x, y)
	}
	return cmpRef(op, x, y)
}

func cmpRef[T int32 | int64 | float64](op ir.BinOp, x, y T) bool {
	switch op {
	case ir.Eq:
		return x == y
	case ir.Ne:
		return x != y
	case ir.Lt:
		return x < y
	case ir.Le:
		return x <= y
	case ir.Gt:
		return x > y
	}
	return x >= y
}
