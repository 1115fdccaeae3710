package csrc

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// corpus are kernels that together use every construct of the IR: every
// operator on every type it takes, every conversion, every intrinsic,
// every atomic (result used and unused), all control flow, 1- to 3-D
// loops, serial tasks with temporaries, stream-parallel groups and block
// loops (blockCorpus). The tests check their source with regexps and
// compile them all with clang for every AMD target and, in the CUDA
// flavour, to PTX assembled by ptxas.
func corpus() []*ir.Kernel {
	ks := []*ir.Kernel{saxpy(), control(), layout3(), serialTemps(), groups(), logic()}
	ks = append(ks, blockCorpus()...)
	for _, t := range []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64} {
		ks = append(ks, intOps(t))
	}
	for _, t := range []ir.Type{ir.F32, ir.F64} {
		ks = append(ks, floatOps(t))
	}
	ks = append(ks, conversions(), atomics(), constants(), reductions())
	return ks
}

// saxpy is y[i] = a*x[i] + y[i].
func saxpy() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a := b.Scalar("a", ir.F32)
	x := b.Array("x", ir.F32, 1)
	y := b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		ax := ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i)))
		b.Store(y, ir.Op(ir.Add, ax, ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

func intOps(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("ints_" + t.String())
	x, y := b.Array("x", t, 1), b.Array("y", t, 1)
	c := b.Array("c", ir.Bool, 1)
	n := b.Scalar("n", ir.I32)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		xi, yi := ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))
		acc := b.Decl("acc", xi)
		for _, op := range []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Rem, ir.And, ir.Or, ir.Xor, ir.AndNot, ir.Min, ir.Max} {
			b.Assign(acc, ir.Op(op, ir.Ref(acc), yi))
		}
		for _, count := range []ir.Expr{ir.P(n), ir.U32c(3), ir.I64c(70), ir.U64c(1)} {
			b.Assign(acc, ir.Op(ir.Shl, ir.Ref(acc), count))
			b.Assign(acc, ir.Op(ir.Shr, ir.Ref(acc), count))
		}
		b.Assign(acc, ir.Un(ir.Neg, ir.Un(ir.BitNot, ir.Ref(acc))))
		b.Store(x, ir.Ref(acc), ir.Ref(i))
		for _, op := range []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge} {
			b.Store(c, ir.Op(op, xi, yi), ir.Ref(i))
		}
	})
	return b.Kernel()
}

func floatOps(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("floats_" + t.String())
	x, y := b.Array("x", t, 1), b.Array("y", t, 1)
	c := b.Array("c", ir.Bool, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		xi, yi := ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))
		acc := b.Decl("acc", xi)
		for _, op := range []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Min, ir.Max} {
			b.Assign(acc, ir.Op(op, ir.Ref(acc), yi))
		}
		b.Assign(acc, ir.Un(ir.Neg, ir.Ref(acc)))
		for _, fn := range ir.Intrinsics() {
			args := []ir.Expr{ir.Ref(acc)}
			if fn.Arity() == 2 {
				args = append(args, yi)
			}
			b.Assign(acc, ir.Fn(fn, args...))
		}
		b.Store(x, ir.Ref(acc), ir.Ref(i))
		for _, op := range []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge} {
			b.Store(c, ir.Op(op, xi, yi), ir.Ref(i))
		}
	})
	return b.Kernel()
}

func conversions() *ir.Kernel {
	b := ir.NewBuilder("conversions")
	types := []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64}
	var arrs []*ir.Param
	for _, t := range types {
		arrs = append(arrs, b.Array("a_"+t.String(), t, 1))
	}
	b.Parallel(ir.LenOf(arrs[0], 0), func(i *ir.Var) {
		for _, dst := range arrs {
			for _, src := range arrs {
				if dst != src {
					b.Store(dst, ir.Conv(dst.Elem, ir.Ld(src, ir.Ref(i))), ir.Ref(i))
				}
			}
		}
	})
	return b.Kernel()
}

func atomics() *ir.Kernel {
	b := ir.NewBuilder("atomics")
	out := b.Array("out", ir.I64, 1)
	var arrs []*ir.Param
	for _, t := range []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64} {
		arrs = append(arrs, b.Array("a_"+t.String(), t, 1))
	}
	b.Parallel(ir.LenOf(arrs[0], 0), func(i *ir.Var) {
		for _, a := range arrs {
			one := ir.One(a.Elem)
			for op := ir.AtomicAdd; op <= ir.AtomicCAS; op++ {
				if a.Elem.IsFloat() && (op == ir.AtomicAnd || op == ir.AtomicOr || op == ir.AtomicXor) {
					continue
				}
				e := &ir.Atomic{Op: op, Array: a, Index: []ir.Expr{ir.Ref(i)}, Value: one}
				if op == ir.AtomicCAS {
					e.Compare = ir.Zero(a.Elem)
				}
				b.Do(e) // old value unused: the reduction form
				b.Store(out, ir.Conv(ir.I64, e), ir.Ref(i))
			}
		}
	})
	return b.Kernel()
}

// control has every control-flow form: nested serial loops with a break
// and a continue aimed at the outer loop, a loop without a condition left
// by a break, and if/else.
func control() *ir.Kernel {
	b := ir.NewBuilder("control")
	x := b.Array("x", ir.I32, 1)
	n := b.Scalar("n", ir.I32)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		sum := b.Decl("sum", ir.I32c(0))
		var inner *ir.For
		outer := b.ForRange("a", ir.P(n), func(a *ir.Var) {
			inner = b.ForRange("c", ir.P(n), func(c *ir.Var) {
				b.If(ir.Op(ir.Gt, ir.Ref(c), ir.Ref(a)), func() { b.Continue() }, func() {
					b.Assign(sum, ir.Op(ir.Add, ir.Ref(sum), ir.Ref(c)))
				})
				b.If(ir.Op(ir.Gt, ir.Ref(sum), ir.I32c(1000)), func() { b.Break() }, nil)
			})
		})
		// The builder aims break and continue at the innermost loop: aim
		// these two at the outer one.
		ir.Inspect(inner.Body, func(n ir.Node) bool {
			switch n := n.(type) {
			case *ir.Break:
				n.Loop = outer
			case *ir.Continue:
				n.Loop = outer
			}
			return true
		})
		w := b.Decl("w", ir.I32c(0))
		b.While(nil, func() {
			b.Assign(w, ir.Op(ir.Add, ir.Ref(w), ir.I32c(1)))
			b.If(ir.Op(ir.Ge, ir.Ref(w), ir.P(n)), func() { b.Break() }, nil)
		})
		b.Store(x, ir.Op(ir.Add, ir.Ref(sum), ir.Ref(w)), ir.Ref(i))
	})
	return b.Kernel()
}

// layout3 has 2-D and 3-D loops over extents of every integer type.
func layout3() *ir.Kernel {
	b := ir.NewBuilder("layout3")
	m := b.Array("m", ir.F32, 2)
	v := b.Array("v", ir.F64, 3)
	nu := b.Scalar("nu", ir.U32)
	b.Parallel2(ir.Conv(ir.I32, ir.LenOf(m, 0)), ir.Conv(ir.U64, ir.LenOf(m, 1)), func(i, j *ir.Var) {
		b.Store(m, ir.Conv(ir.F32, ir.Ref(j)), ir.Ref(i), ir.Ref(j))
	})
	b.ParallelN([]ir.Expr{ir.LenOf(v, 0), ir.LenOf(v, 1), ir.Op(ir.Min, ir.P(nu), ir.Conv(ir.U32, ir.LenOf(v, 2)))}, func(ix []*ir.Var) {
		b.Store(v, ir.F64c(1), ir.Ref(ix[0]), ir.Ref(ix[1]), ir.Ref(ix[2]))
	})
	return b.Kernel()
}

// serialTemps has serial tasks around a parallel one, sharing locals of
// every type through the launch's temporaries.
func serialTemps() *ir.Kernel {
	b := ir.NewBuilder("serial_temps")
	x := b.Array("x", ir.F64, 1)
	s := b.Decl("s", ir.Ld(x, ir.I64c(0)))
	flag := b.Decl("flag", ir.Op(ir.Gt, ir.Ref(s), ir.F64c(0)))
	k := b.Decl("k", ir.U32c(3))
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.If(ir.Ref(flag), func() {
			b.Store(x, ir.Op(ir.Mul, ir.Ref(s), ir.Conv(ir.F64, ir.Ref(k))), ir.Ref(i))
		}, nil)
	})
	b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.F64c(1)))
	b.Store(x, ir.Ref(s), ir.I64c(0))
	return b.Kernel()
}

func groups() *ir.Kernel {
	b := ir.NewBuilder("groups")
	x := b.Array("x", ir.F32, 1)
	for g := range 3 {
		b.Group(func() {
			b.Parallel(ir.I64c(1), func(*ir.Var) { b.Store(x, ir.F32c(float32(g)), ir.I64c(int64(g))) })
		})
	}
	return b.Kernel()
}

// logic has bools: a bool scalar and array, && and || whose right operand
// is an atomic (it must run only when Go runs it), select, comparisons of
// bools.
func logic() *ir.Kernel {
	b := ir.NewBuilder("logic")
	c := b.Array("c", ir.Bool, 1)
	cnt := b.Array("cnt", ir.I32, 1)
	on := b.Scalar("on", ir.Bool)
	b.Parallel(ir.LenOf(c, 0), func(i *ir.Var) {
		ci := ir.Ld(c, ir.Ref(i))
		bump := ir.Op(ir.Gt, ir.AtomicE(ir.AtomicAdd, cnt, ir.I32c(1), ir.I64c(0)), ir.I32c(5))
		p := b.Decl("p", ir.Op(ir.LAnd, ci, bump))
		q := b.Decl("q", ir.Op(ir.LOr, ir.P(on), bump))
		r := b.Decl("r", ir.Sel(ir.Ref(p), ir.Op(ir.Ne, ir.Ref(q), ir.BoolC(true)), ir.Un(ir.Not, ir.Ref(q))))
		b.Store(c, ir.Op(ir.Eq, ir.Ref(r), ir.Op(ir.Eq, ir.Ref(q), ir.P(on))), ir.Ref(i))
		b.Store(cnt, ir.Sel(ir.Op(ir.Ne, ir.Ref(r), ir.Ref(q)), ir.I32c(1), ir.I32c(2)), ir.Conv(ir.I64, ir.Ref(i)))
	})
	return b.Kernel()
}

// constants has the literals C makes awkward: the most negative integers,
// NaN, the infinities, -0, subnormals.
func constants() *ir.Kernel {
	b := ir.NewBuilder("constants")
	i32, i64 := b.Array("i32", ir.I32, 1), b.Array("i64", ir.I64, 1)
	f32, f64 := b.Array("f32", ir.F32, 1), b.Array("f64", ir.F64, 1)
	b.Parallel(ir.I64c(1), func(*ir.Var) {
		b.Store(i32, ir.I32c(math.MinInt32), ir.I64c(0))
		b.Store(i32, ir.I32c(-7), ir.I64c(1))
		b.Store(i64, ir.I64c(math.MinInt64), ir.I64c(0))
		b.Store(i64, ir.I64c(-7), ir.I64c(1))
		for k, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324, 0.1} {
			b.Store(f64, ir.F64c(v), ir.I64c(int64(k)))
			b.Store(f32, ir.F32c(float32(v)), ir.I64c(int64(k)))
		}
		b.Store(f32, ir.F32c(1e-45), ir.I64c(6))
	})
	return b.Kernel()
}

// reductions has atomics lowering marks as reductions: a float sum, an
// integer min under an if (not every iteration reaches it), a max and an
// unsigned sum at an address computed from a scalar, in a block of 100
// threads (not a power of two); and, in a 2-D loop, a sum whose address
// follows the outer index (scope Innermost: it stays per-iteration).
func reductions() *ir.Kernel {
	b := ir.NewBuilder("reductions")
	x := b.Array("x", ir.F32, 1)
	sum := b.Array("sum", ir.F32, 1)
	lo := b.Array("lo", ir.I32, 1)
	hi := b.Array("hi", ir.F64, 1)
	cnt := b.Array("cnt", ir.U64, 1)
	k := b.Scalar("k", ir.I64)
	rows := b.Array("rows", ir.I64, 1)
	pf := b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		xi := ir.Ld(x, ir.Ref(i))
		b.Do(ir.AtomicE(ir.AtomicAdd, sum, xi, ir.I64c(0)))
		b.If(ir.Op(ir.Gt, xi, ir.F32c(0)), func() {
			b.Do(ir.AtomicE(ir.AtomicMin, lo, ir.Conv(ir.I32, ir.Ref(i)), ir.I64c(0)))
		}, nil)
		b.Do(ir.AtomicE(ir.AtomicMax, hi, ir.Conv(ir.F64, xi), ir.Op(ir.Add, ir.P(k), ir.I64c(1))))
		b.Do(ir.AtomicE(ir.AtomicAdd, cnt, ir.U64c(1), ir.P(k)))
	})
	pf.BlockDim = 100
	b.Parallel2(ir.LenOf(rows, 0), ir.I64c(8), func(i, j *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, rows, ir.Ref(j), ir.Ref(i)))
	})
	return b.Kernel()
}
