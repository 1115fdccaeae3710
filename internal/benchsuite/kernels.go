package benchsuite

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/benchsuite/probe"
	"github.com/quadrants-go/qd/internal/ir"
)

// The suite's kernels, built with the IR builder so that the raw reference
// can lower and compile exactly the same kernel.

// saxpyIR: y[i] = a*x[i] + y[i] for i < n; 4 parameters.
func saxpyIR() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a := b.Scalar("a", ir.F32)
	x := b.Array("x", ir.F32, 1)
	y := b.Array("y", ir.F32, 1)
	n := b.Scalar("n", ir.I64)
	b.Parallel(ir.P(n), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

// fillIR: x[i] = v, for x of element type t.
func fillIR(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("fill_" + t.String())
	x := b.Array("x", t, 1)
	v := b.Scalar("v", t)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.P(v), ir.Ref(i)) })
	return b.Kernel()
}

// spin adds to b, as serial statements, iters steps of a linear
// congruential generator ending in state[idx]: a latency-bound loop on one
// thread (each step depends on the last), which a GPU runs as one block of
// one thread, so that many fit at once.
func spin(b *ir.Builder, name string, state *ir.Param, idx, iters ir.Expr) {
	s := b.Decl(name, ir.I64c(1))
	b.ForRange(name+"_n", iters, func(_ *ir.Var) {
		b.Assign(s, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(s), ir.I64c(6364136223846793005)), ir.I64c(1442695040888963407)))
	})
	b.Store(state, ir.Ref(s), idx)
}

// spinIR is one latency-bound loop: a serial task.
func spinIR() *ir.Kernel {
	b := ir.NewBuilder("spin")
	state := b.Array("state", ir.I64, 1)
	idx := b.Scalar("idx", ir.I64)
	iters := b.Scalar("iters", ir.I64)
	spin(b, "s", state, ir.P(idx), ir.P(iters))
	return b.Kernel()
}

// groupsIR is g latency-bound loops, in g stream-parallel groups when
// grouped, else one after another (one serial task).
func groupsIR(g int, grouped bool) *ir.Kernel {
	name := fmt.Sprintf("spin%d", g)
	if grouped {
		name += "_groups"
	}
	b := ir.NewBuilder(name)
	state := b.Array("state", ir.I64, 1)
	iters := b.Scalar("iters", ir.I64)
	for i := range g {
		body := func() { spin(b, fmt.Sprintf("s%d", i), state, ir.I64c(int64(i)), ir.P(iters)) }
		if grouped {
			b.Group(body)
		} else {
			body()
		}
	}
	return b.Kernel()
}

// reduceIR sums x into out[0] the way a user writes it,
// qd.AtomicAdd(&out[0], x[i]) in a parallel loop: a reduction (SPEC §3).
func reduceIR(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("sum_" + t.String())
	x := b.Array("x", t, 1)
	out := b.Array("out", t, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, out, ir.Ld(x, ir.Ref(i)), ir.I64c(0)))
	})
	return b.Kernel()
}

// stencilIR is a 2-D 5-point stencil over the interior of an n×n grid:
// out[i][j] = 0.5*in[i][j] + 0.125*(in[i-1][j] + in[i+1][j] + in[i][j-1] +
// in[i][j+1]).
func stencilIR() *ir.Kernel {
	b := ir.NewBuilder("stencil5")
	in := b.Array("in", ir.F32, 2)
	out := b.Array("out", ir.F32, 2)
	one := ir.I64c(1)
	inner := func(d int) ir.Expr { return ir.Op(ir.Sub, ir.LenOf(out, d), ir.I64c(2)) }
	b.Parallel2(inner(0), inner(1), func(i0, j0 *ir.Var) {
		i := ir.Op(ir.Add, ir.Ref(i0), one)
		j := ir.Op(ir.Add, ir.Ref(j0), one)
		sum := ir.Op(ir.Add,
			ir.Op(ir.Add, ir.Ld(in, ir.Ref(i0), j), ir.Ld(in, ir.Op(ir.Add, i, one), j)),
			ir.Op(ir.Add, ir.Ld(in, i, ir.Ref(j0)), ir.Ld(in, i, ir.Op(ir.Add, j, one))))
		b.Store(out, ir.Op(ir.Add, ir.Op(ir.Mul, ir.F32c(0.5), ir.Ld(in, i, j)), ir.Op(ir.Mul, ir.F32c(0.125), sum)), i, j)
	})
	return b.Kernel()
}

// kernel20 is a 20-line kernel (from //qd:kernel to the closing brace), the
// one of the root package's BenchmarkCompile20Lines.
const kernel20 = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func step(dt float32, pos, vel [][]float32, mass []float32, hits []int32) {
	for i := range len(pos) {
		m := mass[i]
		if m <= 0 {
			continue
		}
		for d := range len(pos[0]) {
			v := vel[i][d] - 9.81*dt/m
			p := pos[i][d] + v*dt
			if p < 0 {
				p, v = -p, -v
				qd.AtomicAdd(&hits[0], 1)
			}
			pos[i][d], vel[i][d] = p, qd.Sqrt(v*v)
		}
	}
}
`

// buildKernel compiles an IR kernel on p through the hook package qd sets.
func buildKernel(p *qd.Program, k *ir.Kernel) (*qd.Kernel, error) {
	if probe.BuildKernel == nil {
		return nil, errors.New("package qd did not set probe.BuildKernel")
	}
	v, err := probe.BuildKernel(p, k)
	if err != nil {
		return nil, err
	}
	return v.(*qd.Kernel), nil
}
