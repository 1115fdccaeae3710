package cpu

import (
	"strconv"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Block tasks against the same work as a parallel task and in plain Go,
// one goroutine, ns/element: the block path must not be pathologically
// slower than a parallel loop (a block of 128 threads runs a thread loop
// per level of the tree, each a batch of its own).

// chunkSumKernel is BlockTreeSum's result by a parallel loop: one
// iteration per block of 128, summing it serially.
func chunkSumKernel() *ir.Kernel {
	b := ir.NewBuilder("chunkSum")
	x, out := b.Array("x", ir.I32, 1), b.Array("out", ir.I32, 1)
	b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		s := b.Decl("s", ir.I32c(0))
		b.ForRange("k", ir.I64c(128), func(k *ir.Var) {
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.Ld(x, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(i), ir.I64c(128)), ir.Ref(k)))))
		})
		b.Store(out, ir.Ref(s), ir.Ref(i))
	})
	return b.Kernel()
}

// benchTask runs p's only task over its whole range, b.N times.
func benchTask(b *testing.B, p *Program, a *Args, n int) {
	task := p.Tasks[0]
	r, err := task.Prepare(a)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := task.Run(a, r, 0, r.Total); err != nil {
			b.Fatal(err)
		}
	}
	perElement(b, n)
}

func treeSumData() (x, out []int32) {
	x, out = make([]int32, benchN), make([]int32, benchN/128)
	for i := range x {
		x[i] = int32(i % 97)
	}
	return x, out
}

func BenchmarkBlockTreeSum(b *testing.B) {
	x, out := treeSumData()
	benchTask(b, compileKernel(b, suitekernels.BlockTreeSum()), &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(x), arr(out)}}, benchN)
}

func BenchmarkBlockTreeSumParallel(b *testing.B) {
	x, out := treeSumData()
	benchTask(b, compileKernel(b, chunkSumKernel()), &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(x), arr(out)}}, benchN)
}

//go:noinline
func chunkSumPlain(x, out []int32) {
	for b := range out {
		var s int32
		for _, v := range x[b*128 : b*128+128] {
			s += v
		}
		out[b] = s
	}
}

func BenchmarkBlockTreeSumPlainGo(b *testing.B) {
	x, out := treeSumData()
	for range b.N {
		chunkSumPlain(x, out)
	}
	perElement(b, benchN)
}

// BenchmarkBlockCollectives: the f32 sums, extremes and scans of blocks of
// bs threads, four collectives and two thread loops per block.
func BenchmarkBlockCollectives(b *testing.B) {
	for _, bs := range []int{32, 256, 1024} {
		b.Run(strconv.Itoa(bs), func(b *testing.B) {
			p := compileKernel(b, suitekernels.BlockCollectives(ir.F32))
			x := make([]float32, benchN)
			for i := range x {
				x[i] = float32(i % 13)
			}
			nb := benchN / bs
			sc := make([]uint64, 7)
			sc[6] = uint64(bs)
			a := &Args{Scalars: sc, Arrays: []Array{arr(x), arr(make([]float32, nb)), arr(make([]float32, nb)), arr(make([]float32, nb)),
				arr(make([]float32, benchN)), arr(make([]float32, benchN)), {}}}
			benchTask(b, p, a, benchN)
		})
	}
}

// transposeKernel is BlockTranspose's result by a 2-D parallel loop.
func transposeKernel() *ir.Kernel {
	b := ir.NewBuilder("transpose")
	in, out := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	b.Parallel2(ir.LenOf(in, 0), ir.LenOf(in, 1), func(i, j *ir.Var) {
		b.Store(out, ir.Ld(in, ir.Ref(i), ir.Ref(j)), ir.Ref(j), ir.Ref(i))
	})
	return b.Kernel()
}

func BenchmarkBlockTranspose(b *testing.B) {
	const n = 1024
	in, out := make([]float32, n*n), make([]float32, n*n)
	b.Run("blocks", func(b *testing.B) {
		benchTask(b, compileKernel(b, suitekernels.BlockTranspose()), &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(in, n, n), arr(out, n, n)}}, n*n)
	})
	b.Run("parallel", func(b *testing.B) {
		benchTask(b, compileKernel(b, transposeKernel()), &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(in, n, n), arr(out, n, n)}}, n*n)
	})
}

// blockSaxpyKernel is saxpyKernel as blocks of bs threads, one element
// per thread: the cost of the block path itself (a thread loop per
// block, batches of bs lanes) over the parallel loop's batches of 512.
func blockSaxpyKernel(bs int64) *ir.Kernel {
	b := ir.NewBuilder("blockSaxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Blocks(ir.Op(ir.Div, ir.LenOf(x, 0), ir.I64c(bs)), ir.I64c(bs), func(blk *ir.Var) {
		b.Threads(func(t *ir.Var) {
			i := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(bs)), ir.Ref(t))
			b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, i)), ir.Ld(y, i)), i)
		})
	})
	return b.Kernel()
}

func BenchmarkBlockSaxpy(b *testing.B) {
	x, y := benchData(benchN)
	args := func() *Args {
		return &Args{Scalars: []uint64{bitsOf(float32(1.0001)), 0, 0}, Arrays: []Array{{}, arr(x), arr(y)}}
	}
	b.Run("parallel", func(b *testing.B) { benchTask(b, compileKernel(b, saxpyKernel()), args(), benchN) })
	for _, bs := range []int64{32, 128, 512, 1024} {
		b.Run(strconv.Itoa(int(bs)), func(b *testing.B) { benchTask(b, compileKernel(b, blockSaxpyKernel(bs)), args(), benchN) })
	}
}
