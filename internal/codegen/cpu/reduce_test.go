package cpu

import (
	"math"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// reductionSites counts the atomic statements of k's parallel body that
// are reductions, by the compiler's own decision.
func reductionSites(t *testing.T, k *ir.Kernel) int {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatal(err)
	}
	var task *lower.Task
	for _, tk := range plan.Tasks {
		if tk.Kind == lower.Parallel {
			task = tk
		}
	}
	c := newCompiler(plan, task, modeRow)
	c.uni = analyzeUniform(c, task.Loop.Body)
	n := 0
	ir.Inspect(task.Loop.Body, func(nd ir.Node) bool {
		if s, ok := nd.(*ir.ExprStmt); ok {
			if a, ok := s.X.(*ir.Atomic); ok && c.reducible(a) {
				n++
			}
		}
		return true
	})
	return n
}

// TestReductions: sums, minima and maxima over every element type, into
// one element and into one element per row, under a divergent if, with
// chunks that straddle batches; and the atomics that stay per lane.
func TestReductions(t *testing.T) {
	for _, tt := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64} {
		b := ir.NewBuilder("red")
		x, acc, rows := b.Array("x", ir.F64, 2), b.Array("acc", tt, 1), b.Array("rows", tt, 1)
		b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) {
			v := b.Decl("v", ir.Conv(tt, ir.Ld(x, ir.Ref(i), ir.Ref(j))))
			b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.Ref(v), ir.I64c(0)))
			b.Do(ir.AtomicE(ir.AtomicMin, acc, ir.Ref(v), ir.I64c(1)))
			b.Do(ir.AtomicE(ir.AtomicMax, acc, ir.Ref(v), ir.I64c(2)))
			// Odd elements only: a mask with holes.
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(j), ir.I64c(2)), ir.I64c(1)), func() {
				b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.Ref(v), ir.I64c(3)))
			}, nil)
			b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.One(tt), ir.I64c(4))) // a uniform value
			b.Do(ir.AtomicE(ir.AtomicAdd, rows, ir.Ref(v), ir.Ref(i)))  // an address per row
			// Not reductions: a varying address, and sub.
			b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.One(tt), ir.Op(ir.Add, ir.I64c(5), ir.Op(ir.Rem, ir.Ref(j), ir.I64c(2)))))
			b.Do(ir.AtomicE(ir.AtomicSub, acc, ir.Ref(v), ir.I64c(7)))
		})
		k := b.Kernel()
		if got := reductionSites(t, k); got != 6 {
			t.Fatalf("%v: %d reductions, want 6", tt, got)
		}
		p := compileKernel(t, k)
		for _, shape := range [][2]int{{1, 1}, {3, 700}, {40, 17}, {2, Batch + 3}} {
			n, m := shape[0], shape[1]
			xs := make([]float64, n*m)
			for k := range xs {
				xs[k] = float64((k*37)%101 + 1) // small integers: float sums are exact
			}
			for _, ch := range chunkings {
				accs, rowAcc := make([]uint64, 8), make([]uint64, n)
				a := &Args{Arrays: []Array{arr(xs, n, m), arr(accs, 8), arr(rowAcc, n)}}
				// Min starts high; the rest at zero.
				put(tt, accs, 1, 1e9)
				if err := launch(p, a, ch.chunk, ch.workers); err != nil {
					t.Fatal(err)
				}
				var sum, odd, mn, mx float64
				mn = 1e9
				rowSum := make([]float64, n)
				for k, v := range xs {
					sum += v
					mn, mx = min(mn, v), max(mx, v)
					if k%m%2 == 1 {
						odd += v
					}
					rowSum[k/m] += v
				}
				want := []float64{sum, mn, mx, odd, float64(n * m), float64(n * ((m + 1) / 2)), float64(n * (m / 2))}
				wantSub := -sum
				for k, w := range want {
					if got := get(tt, accs, k); got != w {
						t.Fatalf("%v %v chunk %d: acc[%d] = %v, want %v", tt, shape, ch.chunk, k, got, w)
					}
				}
				if got := get(tt, accs, 7); !tt.IsUnsigned() && got != wantSub {
					t.Fatalf("%v %v: acc[7] = %v, want %v", tt, shape, got, wantSub)
				}
				for r := range n {
					if got := get(tt, rowAcc, r); got != rowSum[r] {
						t.Fatalf("%v %v chunk %d: rows[%d] = %v, want %v", tt, shape, ch.chunk, r, got, rowSum[r])
					}
				}
			}
		}
	}
}

// TestReductionIndexError: a reduction into an element out of range is a
// kernel error, as the per-lane atomic is.
func TestReductionIndexError(t *testing.T) {
	b := ir.NewBuilder("bad")
	x, acc, at := b.Array("x", ir.F32, 1), b.Array("acc", ir.F32, 1), b.Scalar("at", ir.I64)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.Ld(x, ir.Ref(i)), ir.P(at)))
	})
	p := compileKernel(t, b.Kernel())
	xs, accs := make([]float32, 10), make([]float32, 2)
	err := launch(p, &Args{Scalars: []uint64{0, 0, 5}, Arrays: []Array{arr(xs), arr(accs)}}, 0, 1)
	wantErr(t, err, "kernel bad: index 5 out of range [0:2) in dimension 0 of acc")
}

// put and get store and read element k of an array of type tt held in
// 64-bit words (4-byte types packed two to a word).
func put(tt ir.Type, data []uint64, k int, v float64) {
	switch tt {
	case ir.I32:
		words32[int32](data)[k] = int32(v)
	case ir.U32:
		words32[uint32](data)[k] = uint32(v)
	case ir.F32:
		words32[float32](data)[k] = float32(v)
	case ir.I64:
		data[k] = uint64(int64(v))
	case ir.U64:
		data[k] = uint64(v)
	case ir.F64:
		data[k] = math.Float64bits(v)
	}
}

func get(tt ir.Type, data []uint64, k int) float64 {
	switch tt {
	case ir.I32:
		return float64(words32[int32](data)[k])
	case ir.U32:
		return float64(words32[uint32](data)[k])
	case ir.F32:
		return float64(words32[float32](data)[k])
	case ir.I64:
		return float64(int64(data[k]))
	case ir.U64:
		return float64(data[k])
	}
	return math.Float64frombits(data[k])
}

// words32 views 64-bit words as twice as many 4-byte elements.
func words32[T int32 | uint32 | float32](data []uint64) []T {
	return unsafe.Slice((*T)(unsafeData(data)), 2*len(data))
}

// TestReductionVisibleAtItsStatement: a reduction's atomic reaches memory
// at its statement, as a GPU block's does, not at the end of the run: two
// rows, run at once by two goroutines, each raise a flag with a reduction
// and then spin until they see the other's.
func TestReductionVisibleAtItsStatement(t *testing.T) {
	b := ir.NewBuilder("flags")
	flags, seen := b.Array("flags", ir.I32, 1), b.Array("seen", ir.I32, 1)
	b.Parallel2(ir.I64c(2), ir.I64c(Batch), func(i, j *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), ir.Ref(i)))
		other := ir.Op(ir.Sub, ir.I64c(1), ir.Ref(i))
		b.ForRange("spin", ir.I64c(200_000), func(*ir.Var) {
			b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), other), ir.I32c(0)), func() { b.Break() }, nil)
		})
		b.Store(seen, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), other), ir.Ref(i))
	})
	if got := reductionSites(t, b.Kernel()); got != 1 {
		t.Fatalf("%d reductions, want 1 (the flag)", got)
	}
	p := compileKernel(t, b.Kernel())
	fl, sn := make([]int32, 2), make([]int32, 2)
	if err := launch(p, &Args{Arrays: []Array{arr(fl), arr(sn)}}, Batch, 2); err != nil {
		t.Fatal(err)
	}
	if sn[0] == 0 || sn[1] == 0 {
		t.Fatalf("seen %v: a row never saw the other's flag", sn)
	}
}

// TestHoldable: which reductions hold their totals back to the end of a
// run: those of a loop-free body that uses their array only for
// reductions of their kind.
func TestHoldable(t *testing.T) {
	cases := []struct {
		name string
		want bool
		more func(b *ir.Builder, x, acc *ir.Param, i *ir.Var)
	}{
		{"alone", true, func(*ir.Builder, *ir.Param, *ir.Param, *ir.Var) {}},
		{"another sum, other arrays read", true, func(b *ir.Builder, x, acc *ir.Param, i *ir.Var) {
			b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.Ld(x, ir.Ref(i)), ir.I64c(1)))
			b.Store(x, ir.F32c(0), ir.Ref(i))
		}},
		{"a loop", false, func(b *ir.Builder, x, _ *ir.Param, i *ir.Var) {
			b.ForRange("k", ir.I64c(3), func(*ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
		}},
		{"a load of the array", false, func(b *ir.Builder, x, acc *ir.Param, i *ir.Var) {
			b.Store(x, ir.Ld(acc, ir.I64c(0)), ir.Ref(i))
		}},
		{"a store to the array", false, func(b *ir.Builder, _, acc *ir.Param, _ *ir.Var) {
			b.Store(acc, ir.F32c(0), ir.I64c(1))
		}},
		{"a min on the array", false, func(b *ir.Builder, _, acc *ir.Param, _ *ir.Var) {
			b.Do(ir.AtomicE(ir.AtomicMin, acc, ir.F32c(0), ir.I64c(1)))
		}},
		{"an add whose old value is used", false, func(b *ir.Builder, x, acc *ir.Param, i *ir.Var) {
			b.Store(x, ir.AtomicE(ir.AtomicAdd, acc, ir.F32c(1), ir.I64c(1)), ir.Ref(i))
		}},
	}
	for _, tc := range cases {
		b := ir.NewBuilder("hold")
		x, acc := b.Array("x", ir.F32, 1), b.Array("acc", ir.F32, 1)
		var red *ir.Atomic
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			red = ir.AtomicE(ir.AtomicAdd, acc, ir.Ld(x, ir.Ref(i)), ir.I64c(0)).(*ir.Atomic)
			b.Do(red)
			tc.more(b, x, acc, i)
		})
		plan, err := lower.Lower(b.Kernel())
		if err != nil {
			t.Fatal(err)
		}
		c := newCompiler(plan, plan.Tasks[0], modeRow)
		c.body = plan.Tasks[0].Loop.Body
		if got := c.holdable(red); got != tc.want {
			t.Errorf("%s: holdable %v, want %v", tc.name, got, tc.want)
		}
	}
}
