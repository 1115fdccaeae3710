package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// The block tasks (blocks.go), run on the suite's block kernels and a
// few of their own, against plain Go written here. Each case runs with
// one worker taking every block and with several workers taking a few
// blocks at a time, so that frames (and their shared memory) are reused
// across blocks and shared by no two goroutines at once.

// blockRuns are the ways a case is run: chunk (blocks per Run call, 0 for
// one call) and workers.
var blockRuns = []struct{ chunk, workers int64 }{{0, 1}, {1, 2}, {3, 4}}

// runBlockCase runs p on fresh arguments from mk in every way of
// blockRuns, calling check on each result.
func runBlockCase[R any](t *testing.T, p *Program, mk func() (*Args, R), check func(t *testing.T, got R)) {
	t.Helper()
	for _, run := range blockRuns {
		a, got := mk()
		if err := launch(p, a, run.chunk, int(run.workers)); err != nil {
			t.Fatalf("chunk %d, %d workers: %v", run.chunk, run.workers, err)
		}
		t.Run(fmt.Sprintf("chunk%d_workers%d", run.chunk, run.workers), func(t *testing.T) { check(t, got) })
	}
}

// equal reports the first element where got and want differ (bit for
// bit, for floats).
func equal[T scalar](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !same(got[i], want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// kernelNamed is the kernel of BlockKernels named name, with elem its
// first array's element type.
func kernelNamed(t *testing.T, name string, elem ir.Type) *ir.Kernel {
	t.Helper()
	for _, k := range suitekernels.BlockKernels() {
		if k.Name == name && k.Params[0].Elem == elem {
			return k
		}
	}
	t.Fatalf("no block kernel %s of %v", name, elem)
	return nil
}

// TestBlockKernelsCompile: every block kernel of the suite compiles to one
// block task (the cases below cover each of them).
func TestBlockKernelsCompile(t *testing.T) {
	for _, k := range suitekernels.BlockKernels() {
		p := compileKernel(t, k)
		if len(p.Tasks) != 1 || p.Tasks[0].Kind.String() != "block" {
			t.Errorf("%s: %d tasks, the first %v; want one block task", k.Name, len(p.Tasks), p.Tasks[0].Kind)
		}
	}
}

func TestBlockTreeSum(t *testing.T) {
	p := compileKernel(t, suitekernels.BlockTreeSum())
	// The kernel loads x[i] on both arms of a select, so x must have a
	// block's 128 elements for every block: len(x) ≥ 128·len(out).
	for _, c := range []struct{ n, blocks int }{{1024, 8}, {128, 1}, {1000, 7}, {4096, 32}, {300, 0}} {
		t.Run(fmt.Sprintf("n%d_blocks%d", c.n, c.blocks), func(t *testing.T) {
			x := make([]int32, c.n)
			for i := range x {
				x[i] = int32(i*7919%1001) - 500
			}
			x[c.n/2] = 1 << 30 // sums wrap as Go's do
			x[c.n/3] += 1 << 30
			want := make([]int32, c.blocks)
			for b := range want {
				for i := b * 128; i < min(c.n, b*128+128); i++ {
					want[b] += x[i]
				}
			}
			runBlockCase(t, p, func() (*Args, []int32) {
				out := make([]int32, c.blocks)
				for i := range out {
					out[i] = -1
				}
				return &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(x), arr(out)}}, out
			}, func(t *testing.T, out []int32) { equal(t, "out", out, want) })
		})
	}
}

// collectives are BlockCollectives' outputs.
type collectives[T scalar] struct{ sums, mins, maxs, ex, in []T }

// refCollectives is BlockCollectives in plain Go.
func refCollectives[T blockNumber](x []T, bs, blocks int) collectives[T] {
	n := len(x)
	r := collectives[T]{make([]T, blocks), make([]T, blocks), make([]T, blocks), make([]T, n), make([]T, n)}
	for b := range blocks {
		var sum, acc, lo, hi T
		for t := range bs {
			i := b*bs + t
			var v T
			w := x[0]
			if i < n {
				v, w = x[i], x[i]
			}
			sum += v
			if t == 0 {
				lo, hi = w, w
			}
			lo, hi = min(lo, w), max(hi, w)
			if i < n {
				r.ex[i] = acc
			}
			acc += v
			if i < n {
				r.in[i] = acc
			}
		}
		r.sums[b], r.mins[b], r.maxs[b] = sum, lo, hi
	}
	return r
}

func TestBlockCollectives(t *testing.T) {
	t.Run("i32", func(t *testing.T) { testCollectives[int32](t, ir.I32) })
	t.Run("i64", func(t *testing.T) { testCollectives[int64](t, ir.I64) })
	t.Run("u32", func(t *testing.T) { testCollectives[uint32](t, ir.U32) })
	t.Run("f32", func(t *testing.T) { testCollectives[float32](t, ir.F32) })
	t.Run("f64", func(t *testing.T) { testCollectives[float64](t, ir.F64) })
}

// testCollectives runs BlockCollectives(elem) with block sizes from 1 to
// 1024 (600: two batches, the second short), over inputs of small
// integers, so that float sums are exact in any order; unsigned ones wrap.
func testCollectives[T blockNumber](t *testing.T, elem ir.Type) {
	p := compileKernel(t, kernelNamed(t, "blockCollectives", elem))
	for _, c := range []struct{ n, bs, blocks int }{
		{37, 1, 37}, {1000, 32, 32}, {1000, 100, 10}, {3000, 1024, 3}, {2500, 600, 5}, {10, 1024, 1}, {50, 32, 0}, {70, 32, 4},
	} {
		t.Run(fmt.Sprintf("n%d_bs%d_blocks%d", c.n, c.bs, c.blocks), func(t *testing.T) {
			x := make([]T, c.n)
			for i := range x {
				x[i] = T(i*7919%201) - 100 // wraps for u32
			}
			want := refCollectives(x, c.bs, c.blocks)
			runBlockCase(t, p, func() (*Args, collectives[T]) {
				got := collectives[T]{make([]T, c.blocks), make([]T, c.blocks), make([]T, c.blocks), make([]T, c.n), make([]T, c.n)}
				sc := make([]uint64, 7)
				sc[6] = uint64(c.bs)
				return &Args{Scalars: sc, Arrays: []Array{arr(x), arr(got.sums), arr(got.mins), arr(got.maxs), arr(got.ex), arr(got.in), {}}}, got
			}, func(t *testing.T, got collectives[T]) {
				equal(t, "sums", got.sums, want.sums)
				equal(t, "mins", got.mins, want.mins)
				equal(t, "maxs", got.maxs, want.maxs)
				equal(t, "ex", got.ex, want.ex)
				equal(t, "in", got.in, want.in)
			})
		})
	}
}

// TestBlockSizeInvalid: a launch-sized block outside 1..1024 is an error
// of the launch naming qd.Blocks and the size, with no block run; a count
// of 0 is not, whatever the blocks would do.
func TestBlockSizeInvalid(t *testing.T) {
	p := compileKernel(t, kernelNamed(t, "blockCollectives", ir.I32))
	for _, bs := range []int64{0, 1025, -1, 1 << 40} {
		x, sums := []int32{1, 2, 3}, []int32{7}
		sc := make([]uint64, 7)
		sc[6] = uint64(bs)
		a := &Args{Scalars: sc, Arrays: []Array{arr(x), arr(sums), arr(sums), arr(sums), arr(x), arr(x), {}}}
		err := launch(p, a, 0, 1)
		want := fmt.Sprintf("qd.Blocks block size %d is outside 1..1024", bs)
		var ie *ir.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("size %d: error %v, want an *ir.Error saying %q", bs, err, want)
		}
		if sums[0] != 7 {
			t.Errorf("size %d: a block ran", bs)
		}
	}
}

func TestBlockTranspose(t *testing.T) {
	p := compileKernel(t, suitekernels.BlockTranspose())
	for _, c := range []struct{ n, m int }{{13, 21}, {8, 8}, {1, 1}, {64, 3}, {0, 5}} {
		t.Run(fmt.Sprintf("%dx%d", c.n, c.m), func(t *testing.T) {
			in := make([]float32, c.n*c.m)
			for i := range in {
				in[i] = float32(i) + 0.5
			}
			want := make([]float32, c.n*c.m)
			for i := range c.n {
				for j := range c.m {
					want[j*c.n+i] = in[i*c.m+j]
				}
			}
			runBlockCase(t, p, func() (*Args, []float32) {
				out := make([]float32, c.n*c.m)
				return &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(in, c.n, c.m), arr(out, c.m, c.n)}}, out
			}, func(t *testing.T, out []float32) { equal(t, "out", out, want) })
		})
	}
}

// TestBlockHistogram: the bins in shared memory are zero when each block
// starts: with more blocks than workers, a frame's memory serves several
// blocks, and a bin carried over would count twice.
func TestBlockHistogram(t *testing.T) {
	p := compileKernel(t, suitekernels.BlockHistogram())
	for _, c := range []struct{ n, nb int }{{10000, 1}, {10000, 3}, {10000, 8}, {1000, 50}, {0, 4}, {100, 0}} {
		t.Run(fmt.Sprintf("n%d_nb%d", c.n, c.nb), func(t *testing.T) {
			x := make([]int32, c.n)
			want := make([]int32, 16)
			for i := range x {
				x[i] = int32(i * 31 % 97 % 16)
				want[x[i]]++
			}
			if c.nb == 0 {
				clear(want)
			}
			runBlockCase(t, p, func() (*Args, []int32) {
				hist := make([]int32, 16)
				return &Args{Scalars: []uint64{0, 0, uint64(c.nb)}, Arrays: []Array{arr(x), arr(hist), {}}}, hist
			}, func(t *testing.T, hist []int32) { equal(t, "hist", hist, want) })
		})
	}
}

// TestBlockRecords: a shared array of records, written and read a leaf at
// a time.
func TestBlockRecords(t *testing.T) {
	p := compileKernel(t, suitekernels.BlockRecords())
	for _, n := range []int{32, 320, 100, 0} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := make([]float32, n)
			for i := range want {
				want[i] = -1
			}
			for b := range n / 32 {
				for t := range 32 {
					want[b*32+t] = float32(b*100) + float32(31-t)
				}
			}
			runBlockCase(t, p, func() (*Args, []float32) {
				out := make([]float32, n)
				for i := range out {
					out[i] = -1
				}
				return &Args{Scalars: make([]uint64, 1), Arrays: []Array{arr(out)}}, out
			}, func(t *testing.T, out []float32) { equal(t, "out", out, want) })
		})
	}
}

// blockMix is a block kernel of the paths the suite's leave out: a
// per-thread local declared with a value (the block index), a converted
// if on it, a serial loop with a break in a thread loop, a block-level
// loop with a break, a kernel-level temporary read in the blocks, the
// length of a shared array and a reduction of an atomic at a uniform
// address. Blocks of bs threads over x (i32): for i = b*bs+t < len(x),
// with v = b + x[i] (b alone past the end), v' = v*2 if v > 5 else v-1,
// c the least j with j*j > v' (capped at 40), s the block's sum of v',
// r the sum of 0..k-1 (k ≤ 10) and z = x[0]*3 from the serial part:
// out[i] = v' + c + s + r + len(sh) + z, and total[0] gets every c.
func blockMix() *ir.Kernel {
	b := ir.NewBuilder("blockMix")
	x, out, total := b.Array("x", ir.I32, 1), b.Array("out", ir.I32, 1), b.Array("total", ir.I32, 1)
	bs, k := b.Scalar("bs", ir.I64), b.Scalar("k", ir.I64)
	n := ir.LenOf(x, 0)
	z := b.Decl("z", ir.Op(ir.Mul, ir.Ld(x, ir.I64c(0)), ir.I32c(3)))
	var v *ir.Var
	bl := b.Blocks(ir.Op(ir.Div, ir.Op(ir.Add, n, ir.Op(ir.Sub, ir.P(bs), ir.I64c(1))), ir.P(bs)), ir.P(bs), func(blk *ir.Var) {
		sh := b.Shared("cs", ir.I64, 1024)
		v = b.Decl("v", ir.Conv(ir.I32, ir.Ref(blk)))
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.P(bs)), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() { b.Assign(v, ir.Op(ir.Add, ir.Ref(v), ir.Ld(x, ir.Ref(i)))) }, nil)
			b.If(ir.Op(ir.Gt, ir.Ref(v), ir.I32c(5)), func() { b.Assign(v, ir.Op(ir.Mul, ir.Ref(v), ir.I32c(2))) },
				func() { b.Assign(v, ir.Op(ir.Sub, ir.Ref(v), ir.I32c(1))) })
			c := b.Decl("c", ir.I64c(0))
			b.ForRange("j", ir.I64c(40), func(j *ir.Var) {
				b.If(ir.Op(ir.Gt, ir.Op(ir.Mul, ir.Ref(j), ir.Ref(j)), ir.Conv(ir.I64, ir.Ref(v))), func() { b.Break() }, nil)
				b.Assign(c, ir.Op(ir.Add, ir.Ref(c), ir.I64c(1)))
			})
			b.Store(sh, ir.Ref(c), ir.Ref(t))
			b.Do(ir.AtomicE(ir.AtomicAdd, total, ir.Conv(ir.I32, ir.Ref(c)), ir.I64c(0)))
		})
		s := b.BlockReduce(ir.Add, v)
		r := b.Decl("r", ir.I32c(0))
		b.ForRange("q", ir.I64c(10), func(q *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(q), ir.P(k)), func() { b.Break() }, nil)
			b.Assign(r, ir.Op(ir.Add, ir.Ref(r), ir.Conv(ir.I32, ir.Ref(q))))
		})
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.P(bs)), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() {
				sum := ir.Op(ir.Add, ir.Ref(v), ir.Conv(ir.I32, ir.Ld(sh, ir.Ref(t))))
				sum = ir.Op(ir.Add, sum, ir.Op(ir.Add, ir.Ref(s), ir.Ref(r)))
				sum = ir.Op(ir.Add, sum, ir.Op(ir.Add, ir.Conv(ir.I32, ir.LenOf(sh, 0)), ir.Ref(z)))
				b.Store(out, sum, ir.Ref(i))
			}, nil)
		})
	})
	bl.PerThread = append(bl.PerThread, v)
	return b.Kernel()
}

// refMix is blockMix in plain Go.
func refMix(x []int32, bs, k int) (out []int32, total int32) {
	n := len(x)
	out = make([]int32, n)
	r := int32(0)
	for q := 0; q < 10 && q != k; q++ {
		r += int32(q)
	}
	for b := range (n + bs - 1) / bs {
		v, cs := make([]int32, bs), make([]int64, bs)
		var s int32
		for t := range bs {
			v[t] = int32(b)
			if i := b*bs + t; i < n {
				v[t] += x[i]
			}
			if v[t] > 5 {
				v[t] *= 2
			} else {
				v[t]--
			}
			for j := int64(0); j < 40 && j*j <= int64(v[t]); j++ {
				cs[t]++
			}
			total += int32(cs[t])
			s += v[t]
		}
		for t := range bs {
			if i := b*bs + t; i < n {
				out[i] = v[t] + int32(cs[t]) + s + r + 1024 + x[0]*3
			}
		}
	}
	return out, total
}

func TestBlockMix(t *testing.T) {
	p := compileKernel(t, blockMix())
	if len(p.Tasks) != 2 || p.NumTemps != 1 {
		t.Fatalf("%d tasks, %d temporaries; want a serial task and a block task sharing one", len(p.Tasks), p.NumTemps)
	}
	for _, c := range []struct{ n, bs, k int }{{1000, 1, 3}, {1000, 32, 10}, {1000, 100, 0}, {3000, 1024, 7}, {2000, 700, 4}} {
		t.Run(fmt.Sprintf("n%d_bs%d_k%d", c.n, c.bs, c.k), func(t *testing.T) {
			x := make([]int32, c.n)
			for i := range x {
				x[i] = int32(i*37%211) - 60
			}
			want, wantTotal := refMix(x, c.bs, c.k)
			type result struct{ out, total []int32 }
			runBlockCase(t, p, func() (*Args, result) {
				r := result{make([]int32, c.n), make([]int32, 1)}
				return &Args{Scalars: []uint64{0, 0, 0, uint64(c.bs), uint64(c.k)}, Arrays: []Array{arr(x), arr(r.out), arr(r.total), {}, {}}}, r
			}, func(t *testing.T, got result) {
				equal(t, "out", got.out, want)
				equal(t, "total", got.total, []int32{wantTotal})
			})
		})
	}
}

// TestBlockSharedIndexChecks: an index out of range of a shared array, in
// a load, a store or an atomic, 1-D or 2-D, is a kernel error naming the
// array, as one of a parameter is; in range, the same kernel runs.
func TestBlockSharedIndexChecks(t *testing.T) {
	access := map[string]func(b *ir.Builder, sh *ir.Param, out *ir.Param, i ir.Expr, t *ir.Var){
		"store": func(b *ir.Builder, sh, _ *ir.Param, i ir.Expr, t *ir.Var) {
			b.Store(sh, ir.I32c(1), i)
		},
		"load": func(b *ir.Builder, sh, out *ir.Param, i ir.Expr, t *ir.Var) {
			b.Store(out, ir.Ld(sh, i), ir.Ref(t))
		},
		"atomic": func(b *ir.Builder, sh, _ *ir.Param, i ir.Expr, t *ir.Var) {
			b.Do(ir.AtomicE(ir.AtomicAdd, sh, ir.I32c(1), i))
		},
		"2d": func(b *ir.Builder, _, out *ir.Param, i ir.Expr, t *ir.Var) {
			sh := b.Shared("grid", ir.I32, 3, 4)
			b.Store(out, ir.Ld(sh, ir.I64c(1), i), ir.Ref(t))
		},
	}
	for name, acc := range access {
		t.Run(name, func(t *testing.T) {
			b := ir.NewBuilder("sharedOOB")
			out := b.Array("out", ir.I32, 1)
			off := b.Scalar("off", ir.I64)
			b.Blocks(ir.I64c(2), ir.I64c(4), func(blk *ir.Var) {
				sh := b.Shared("tile", ir.I32, 4)
				b.Threads(func(t *ir.Var) { acc(b, sh, out, ir.Op(ir.Add, ir.Ref(t), ir.P(off)), t) })
			})
			p := compileKernel(t, b.Kernel())
			for _, o := range []int64{0, 1, -1} {
				a := &Args{Scalars: []uint64{0, uint64(o)}, Arrays: []Array{arr(make([]int32, 4)), {}}}
				err := launch(p, a, 0, 1)
				arrName, bad := "tile", int64(4)
				if name == "2d" {
					arrName = "grid"
				}
				if o < 0 {
					bad = -1
				}
				switch {
				case o == 0 && err != nil:
					t.Errorf("offset 0: %v", err)
				case o != 0:
					want := fmt.Sprintf("index %d out of range [0:4) in dimension %d of %s", bad, map[bool]int{true: 1, false: 0}[name == "2d"], arrName)
					var ie *ir.Error
					if !errors.As(err, &ie) || !strings.HasSuffix(err.Error(), want) {
						t.Errorf("offset %d: error %v, want an *ir.Error ending %q", o, err, want)
					}
				}
			}
		})
	}
}

// TestBlockStop: a block task stops on Args.Stop between blocks, when no
// loop runs to check it, and inside a thread loop's own loop.
func TestBlockStop(t *testing.T) {
	for _, spin := range []bool{false, true} {
		t.Run(fmt.Sprintf("spin=%v", spin), func(t *testing.T) {
			b := ir.NewBuilder("blockSpin")
			x := b.Array("x", ir.I32, 1)
			b.Blocks(ir.I64c(1<<40), ir.I64c(64), func(blk *ir.Var) {
				b.Threads(func(t *ir.Var) {
					b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() {
						b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(0)))
					}, nil)
					if spin {
						b.While(ir.BoolC(true), func() { b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(1))) })
					}
				})
			})
			p := compileKernel(t, b.Kernel())
			xs := make([]int32, 2)
			var stop atomic.Bool
			a := &Args{Scalars: make([]uint64, 1), Arrays: []Array{arr(xs)}, Stop: &stop}
			done := make(chan error, 1)
			go func() { done <- launch(p, a, 1<<20, 2) }()
			for i := 0; atomic.LoadInt32(&xs[0]) == 0; i++ {
				if i > 100_000_000 {
					t.Fatal("the kernel never started")
				}
				runtime.Gosched()
			}
			stop.Store(true)
			if err := <-done; !errors.Is(err, ErrStopped) {
				t.Fatalf("Run = %v, want ErrStopped", err)
			}
		})
	}
}

// TestBlockRuntimeError: a runtime error in a thread loop is the task's
// error, positioned at its statement, and later blocks do not run.
func TestBlockRuntimeError(t *testing.T) {
	b := ir.NewBuilder("blockDiv")
	x := b.Array("x", ir.I32, 1)
	b.Blocks(ir.LenOf(x, 0), ir.I64c(8), func(blk *ir.Var) {
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(3)), func() {
				b.Store(x, ir.Op(ir.Div, ir.I32c(100), ir.Ld(x, ir.Ref(blk))), ir.Ref(blk))
			}, nil)
		})
	})
	p := compileKernel(t, b.Kernel())
	xs := []int32{5, 4, 0, 2}
	err := launch(p, &Args{Arrays: []Array{arr(xs)}}, 0, 1)
	if err == nil || !strings.HasSuffix(err.Error(), "integer divide by zero") {
		t.Fatalf("error %v, want integer divide by zero", err)
	}
	equal(t, "x", xs, []int32{20, 25, 0, 2})
}

// TestBlockConstSizes: blocks of a constant size, at the edges of a
// batch (512 lanes: one batch, 513: a batch and one lane, 1024: two), one
// element per thread: y[i] = a*x[i] + y[i] for i < len(x) rounded down to
// whole blocks.
func TestBlockConstSizes(t *testing.T) {
	for _, bs := range []int64{1, 7, 512, 513, 1024} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			b := ir.NewBuilder("blockAxpy")
			a, xp, yp := b.Scalar("a", ir.I32), b.Array("x", ir.I32, 1), b.Array("y", ir.I32, 1)
			b.Blocks(ir.Op(ir.Div, ir.LenOf(xp, 0), ir.I64c(bs)), ir.I64c(bs), func(blk *ir.Var) {
				b.Threads(func(t *ir.Var) {
					i := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(bs)), ir.Ref(t))
					b.Store(yp, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(xp, i)), ir.Ld(yp, i)), i)
				})
			})
			p := compileKernel(t, b.Kernel())
			x := make([]int32, 5000)
			for i := range x {
				x[i] = int32(i%13) - 6
			}
			want := make([]int32, len(x))
			for i := range int(int64(len(x)) / bs * bs) {
				want[i] = 3*x[i] + 1
			}
			runBlockCase(t, p, func() (*Args, []int32) {
				y := make([]int32, len(x))
				for i := range y {
					if i < len(x)/int(bs)*int(bs) {
						y[i] = 1
					}
				}
				return &Args{Scalars: []uint64{3, 0, 0}, Arrays: []Array{{}, arr(x), arr(y)}}, y
			}, func(t *testing.T, y []int32) { equal(t, "y", y, want) })
		})
	}
}
