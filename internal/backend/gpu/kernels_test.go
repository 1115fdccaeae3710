package gpu_test

import "github.com/quadrants-go/qd/internal/ir"

// The runtime's test kernels, built with the IR builder so that every
// driver compiles them with its own code generator.

// fillKernel: p[i] = v for every i.
func fillKernel() *ir.Kernel {
	b := ir.NewBuilder("fill")
	p, v := b.Array("p", ir.U32, 1), b.Scalar("v", ir.U32)
	b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) { b.Store(p, ir.P(v), ir.Ref(i)) })
	return b.Kernel()
}

// add1Kernel: dst[i] = src[i] + 1.
func add1Kernel() *ir.Kernel {
	b := ir.NewBuilder("add1")
	src, dst := b.Array("src", ir.U32, 1), b.Array("dst", ir.U32, 1)
	b.Parallel(ir.LenOf(dst, 0), func(i *ir.Var) {
		b.Store(dst, ir.Op(ir.Add, ir.Ld(src, ir.Ref(i)), ir.U32c(1)), ir.Ref(i))
	})
	return b.Kernel()
}

// spinKernel: one thread polls flag[0] (an atomic read) up to bound times
// until it is non-zero, then writes 1 to out[0] (2 if it gave up) and
// fill to every element of p. Tests make the flag's copy the only way the
// kernel ends early: a rendezvous, proven without clocks.
func spinKernel() *ir.Kernel {
	b := ir.NewBuilder("spin")
	flag, out, p := b.Array("flag", ir.U32, 1), b.Array("out", ir.U32, 1), b.Array("p", ir.U32, 1)
	bound, fill := b.Scalar("bound", ir.I64), b.Scalar("fill", ir.U32)
	seen := b.Decl("seen", ir.BoolC(false))
	b.ForRange("k", ir.P(bound), func(*ir.Var) {
		b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flag, ir.U32c(0), ir.I64c(0)), ir.U32c(0)), func() {
			b.Assign(seen, ir.BoolC(true))
			b.Break()
		}, nil)
	})
	b.Store(out, ir.Sel(ir.Ref(seen), ir.U32c(1), ir.U32c(2)), ir.I64c(0))
	b.ForRange("i", ir.LenOf(p, 0), func(i *ir.Var) { b.Store(p, ir.P(fill), ir.Ref(i)) })
	return b.Kernel()
}

// tempsKernel: a serial task sets a local that a parallel task then reads,
// so it lives in the launch's temporaries: out[0] = v through them.
func tempsKernel() *ir.Kernel {
	b := ir.NewBuilder("temps")
	out, v := b.Array("out", ir.U64, 1), b.Scalar("v", ir.U64)
	acc := b.Decl("acc", ir.Op(ir.Add, ir.P(v), ir.U64c(0)))
	b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(out, ir.Ref(acc), ir.Ref(i)) })
	return b.Kernel()
}

// pokeKernel writes far beyond p's end: on a GPU (no bounds checks) an
// illegal address that loses the device.
func pokeKernel() *ir.Kernel {
	b := ir.NewBuilder("poke")
	p := b.Array("p", ir.U32, 1)
	b.ForRange("k", ir.I64c(1), func(*ir.Var) { b.Store(p, ir.U32c(7), ir.I64c(1<<40)) })
	return b.Kernel()
}

// saxpyKernel: y[i] = a*x[i] + y[i], the 4-argument launch of the
// launch-cost benchmarks (n is the fourth, unused by the body).
func saxpyKernel() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a := b.Scalar("a", ir.F32)
	x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Scalar("n", ir.I64)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}
