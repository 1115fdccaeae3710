package cpu

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// The bar (docs/semantics.md#performance-bars): a closure-compiled parallel loop within 4x of the same loop
// in plain Go, single goroutine, same n. Each benchmark reports ns/element.

const benchN = 1 << 20

func saxpyKernel() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

func benchData(n int) (x, y []float32) {
	x, y = make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%97), float32(i%89)
	}
	return x, y
}

func perElement(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/element")
}

func BenchmarkSaxpyClosure(b *testing.B) {
	p := compileKernel(b, saxpyKernel())
	x, y := benchData(benchN)
	args := &Args{Scalars: []uint64{bitsOf(float32(1.0001)), 0, 0}, Arrays: []Array{{}, arr(x), arr(y)}}
	task := p.Tasks[0]
	r, err := task.Prepare(args)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := task.Run(args, r, 0, r.Total); err != nil {
			b.Fatal(err)
		}
	}
	perElement(b, benchN)
}

//go:noinline
func saxpyPlain(a float32, x, y []float32) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i]
	}
}

func BenchmarkSaxpyPlainGo(b *testing.B) {
	x, y := benchData(benchN)
	for range b.N {
		saxpyPlain(1.0001, x, y)
	}
	perElement(b, benchN)
}

// stencilKernel is a 2-D 5-point stencil with an if guard on the border:
//
//	for i, j := range NDRange(n, m) {
//		if i > 0 && i < n-1 && j > 0 && j < m-1 {
//			out[i][j] = 0.25*(u[i-1][j]+u[i+1][j]+u[i][j-1]+u[i][j+1]) - u[i][j]
//		}
//	}
func stencilKernel() *ir.Kernel {
	b := ir.NewBuilder("stencil")
	u, out := b.Array("u", ir.F32, 2), b.Array("out", ir.F32, 2)
	n, m := ir.LenOf(u, 0), ir.LenOf(u, 1)
	one := ir.I64c(1)
	b.Parallel2(n, m, func(i, j *ir.Var) {
		I, J := ir.Ref(i), ir.Ref(j)
		guard := ir.Op(ir.LAnd, ir.Op(ir.LAnd, ir.Op(ir.Gt, I, ir.I64c(0)), ir.Op(ir.Lt, I, ir.Op(ir.Sub, n, one))),
			ir.Op(ir.LAnd, ir.Op(ir.Gt, J, ir.I64c(0)), ir.Op(ir.Lt, J, ir.Op(ir.Sub, m, one))))
		b.If(guard, func() {
			sum := ir.Op(ir.Add, ir.Op(ir.Add, ir.Ld(u, ir.Op(ir.Sub, I, one), J), ir.Ld(u, ir.Op(ir.Add, I, one), J)),
				ir.Op(ir.Add, ir.Ld(u, I, ir.Op(ir.Sub, J, one)), ir.Ld(u, I, ir.Op(ir.Add, J, one))))
			b.Store(out, ir.Op(ir.Sub, ir.Op(ir.Mul, ir.F32c(0.25), sum), ir.Ld(u, I, J)), I, J)
		}, nil)
	})
	return b.Kernel()
}

const stencilN, stencilM = 1024, 1024

//go:noinline
func stencilPlain(u, out []float32, n, m int) {
	for i := range n {
		for j := range m {
			if i > 0 && i < n-1 && j > 0 && j < m-1 {
				out[i*m+j] = 0.25*(u[(i-1)*m+j]+u[(i+1)*m+j]+u[i*m+j-1]+u[i*m+j+1]) - u[i*m+j]
			}
		}
	}
}

func BenchmarkStencilClosure(b *testing.B) {
	p := compileKernel(b, stencilKernel())
	u, out := benchData(stencilN * stencilM)
	args := &Args{Arrays: []Array{arr(u, stencilN, stencilM), arr(out, stencilN, stencilM)}}
	task := p.Tasks[0]
	r, err := task.Prepare(args)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := task.Run(args, r, 0, r.Total); err != nil {
			b.Fatal(err)
		}
	}
	perElement(b, stencilN*stencilM)
}

func BenchmarkStencilPlainGo(b *testing.B) {
	u, out := benchData(stencilN * stencilM)
	for range b.N {
		stencilPlain(u, out, stencilN, stencilM)
	}
	perElement(b, stencilN*stencilM)
}
