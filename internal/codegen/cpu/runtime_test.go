package cpu

import (
	"math"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

var at = ir.Pos{File: "kernels.go", Line: 12, Col: 5}

// TestRuntimeErrors: every runtime error comes back from Run as a
// positioned *ir.Error, and lanes that do not run the code never raise one.
func TestRuntimeErrors(t *testing.T) {
	type kcase struct {
		name   string
		build  func(b *ir.Builder)
		shape  [][]int  // array shapes
		scalar []uint64 // scalar values by param index
		want   string   // "" means no error
	}
	cases := []kcase{
		{"saxpy", func(b *ir.Builder) {
			x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
			b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
				b.At(at).Store(y, ir.Ld(x, ir.Ref(i)), ir.Ref(i))
			})
		}, [][]int{{1024}, {1025}}, nil, "kernels.go:12:5: kernel saxpy: index 1024 out of range [0:1024) in dimension 0 of x"},
		{"negative", func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.F32c(0), ir.Op(ir.Sub, ir.Ref(i), ir.I64c(3)))
			})
		}, [][]int{{10}}, nil, "kernels.go:12:5: kernel negative: index -3 out of range [0:10) in dimension 0 of x"},
		{"dim2", func(b *ir.Builder) {
			x := b.Array("x", ir.I32, 3)
			b.Parallel(ir.I64c(4), func(i *ir.Var) {
				b.At(at).Store(x, ir.I32c(1), ir.I64c(0), ir.I64c(1), ir.Op(ir.Mul, ir.Ref(i), ir.I64c(3)))
			})
		}, [][]int{{2, 3, 7}}, nil, "kernels.go:12:5: kernel dim2: index 9 out of range [0:7) in dimension 2 of x"},
		{"uniformDim1", func(b *ir.Builder) {
			x := b.Array("x", ir.I32, 2)
			b.Parallel(ir.I64c(4), func(i *ir.Var) {
				b.At(at).Store(x, ir.Ld(x, ir.I64c(0), ir.I64c(5)), ir.I64c(0), ir.Ref(i))
			})
		}, [][]int{{2, 5}}, nil, "kernels.go:12:5: kernel uniformDim1: index 5 out of range [0:5) in dimension 1 of x"},
		{"u64index", func(b *ir.Builder) {
			x, ix := b.Array("x", ir.I32, 1), b.Array("ix", ir.U64, 1)
			b.Parallel(ir.LenOf(ix, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.I32c(1), ir.Ld(ix, ir.Ref(i)))
			})
		}, [][]int{{4}, {1}}, nil, "kernels.go:12:5: kernel u64index: index 18446744073709551615 out of range [0:4) in dimension 0 of x"},
		{"div", func(b *ir.Builder) {
			x := b.Array("x", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.Op(ir.Div, ir.I32c(100), ir.Ld(x, ir.Ref(i))), ir.Ref(i))
			})
		}, [][]int{{300}}, nil, "kernels.go:12:5: kernel div: integer divide by zero"},
		{"remUniform", func(b *ir.Builder) {
			x, d := b.Array("x", ir.I64, 1), b.Scalar("d", ir.I64)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.Op(ir.Rem, ir.Ref(i), ir.P(d)), ir.Ref(i))
			})
		}, [][]int{{300}}, []uint64{0, 0}, "kernels.go:12:5: kernel remUniform: integer divide by zero"},
		{"shift", func(b *ir.Builder) {
			x := b.Array("x", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.Op(ir.Shl, ir.I32c(1), ir.Op(ir.Sub, ir.Ld(x, ir.Ref(i)), ir.I32c(2))), ir.Ref(i))
			})
		}, [][]int{{300}}, nil, "kernels.go:12:5: kernel shift: negative shift amount -2"},
		{"shiftUniform", func(b *ir.Builder) {
			x, s := b.Array("x", ir.I64, 1), b.Scalar("s", ir.I32)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.At(at).Store(x, ir.Op(ir.Shr, ir.Ref(i), ir.P(s)), ir.Ref(i))
			})
		}, [][]int{{3}}, []uint64{0, uint64(1<<64 - 7)}, "kernels.go:12:5: kernel shiftUniform: negative shift amount -7"},
		{"serial", func(b *ir.Builder) {
			x := b.Array("x", ir.I32, 1)
			b.At(at).Store(x, ir.I32c(1), ir.LenOf(x, 0))
		}, [][]int{{3}}, nil, "kernels.go:12:5: kernel serial: index 3 out of range [0:3) in dimension 0 of x"},
		{"guarded", func(b *ir.Builder) {
			// Inactive lanes hold out-of-range indices and zero divisors:
			// no error.
			x := b.Array("x", ir.I32, 1)
			b.Parallel(ir.I64c(1000), func(i *ir.Var) {
				b.If(ir.Op(ir.Lt, ir.Ref(i), ir.LenOf(x, 0)), func() {
					v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
					b.If(ir.Op(ir.Ne, ir.Ref(v), ir.I32c(0)), func() {
						b.Store(x, ir.Op(ir.Add, ir.Op(ir.Div, ir.I32c(12), ir.Ref(v)), ir.Op(ir.Shl, ir.I32c(1), ir.Op(ir.Sub, ir.Ref(v), ir.I32c(1)))), ir.Ref(i))
					}, nil)
				}, nil)
			})
		}, [][]int{{300}}, nil, ""},
	}
	for _, tc := range cases {
		b := ir.NewBuilder(tc.name)
		tc.build(b)
		p := compileKernel(t, b.Kernel())
		args := &Args{Scalars: tc.scalar}
		if args.Scalars == nil {
			args.Scalars = make([]uint64, len(b.Kernel().Params))
		}
		for _, sh := range tc.shape {
			n := 1
			for _, d := range sh {
				n *= d
			}
			data := make([]uint64, n) // big enough for every element type
			for i := range data {
				data[i] = uint64(i % 3)
			}
			if tc.name == "u64index" && len(args.Arrays) == 1 {
				data[0] = math.MaxUint64
			}
			args.Arrays = append(args.Arrays, arr(data, sh...))
		}
		// Put arrays at their parameter indices.
		full := make([]Array, len(b.Kernel().Params))
		ai := 0
		for i, prm := range b.Kernel().Params {
			if prm.IsArray() {
				full[i] = args.Arrays[ai]
				ai++
			}
		}
		args.Arrays = full
		for _, ch := range chunkings[:3] {
			err := launch(p, args, ch.chunk, ch.workers)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				continue
			}
			wantErr(t, err, tc.want)
		}
	}
}

// TestAtomics: many goroutines hitting one element give the exact result,
// and every operation returns the old value.
func TestAtomics(t *testing.T) {
	t.Run("contended add", func(t *testing.T) {
		for _, tt := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64} {
			b := ir.NewBuilder("count")
			acc, np := b.Array("acc", tt, 1), b.Scalar("n", ir.I64)
			b.Parallel(ir.P(np), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, acc, ir.One(tt), ir.I64c(0)))
				b.Do(ir.AtomicE(ir.AtomicSub, acc, ir.One(tt), ir.I64c(1)))
				b.Do(ir.AtomicE(ir.AtomicMax, acc, ir.Conv(tt, ir.Ref(i)), ir.I64c(2)))
			})
			p := compileKernel(t, b.Kernel())
			const n = 20000
			data := make([]uint64, 3) // element storage, 8-byte aligned
			if err := launch(p, &Args{Scalars: []uint64{0, n}, Arrays: []Array{arr(data, 3)}}, 37, 8); err != nil {
				t.Fatal(err)
			}
			var add, sub, mx float64
			switch tt {
			case ir.I32, ir.U32, ir.F32:
				w := (*[3]uint32)(unsafeData(data))
				get := func(k int) float64 {
					switch tt {
					case ir.I32:
						return float64(int32(w[k]))
					case ir.U32:
						return float64(w[k])
					}
					return float64(math.Float32frombits(w[k]))
				}
				add, sub, mx = get(0), get(1), get(2)
			default:
				get := func(k int) float64 {
					switch tt {
					case ir.I64:
						return float64(int64(data[k]))
					case ir.U64:
						return float64(data[k])
					}
					return math.Float64frombits(data[k])
				}
				add, sub, mx = get(0), get(1), get(2)
			}
			wantSub := -float64(n)
			switch tt {
			case ir.U32:
				wantSub = float64(uint32(math.MaxUint32) - n + 1)
			case ir.U64:
				wantSub = float64(uint64(math.MaxUint64) - n + 1)
			}
			if add != n || sub != wantSub || mx != n-1 {
				t.Fatalf("%v: add %v sub %v max %v, want %v %v %v", tt, add, sub, mx, float64(n), wantSub, float64(n-1))
			}
		}
	})
	t.Run("old values", func(t *testing.T) {
		type opc struct {
			op         ir.AtomicOp
			start, val int64
			cmp        int64
			old, new   int64
		}
		ops := []opc{
			{ir.AtomicAdd, 5, 3, 0, 5, 8}, {ir.AtomicSub, 5, 3, 0, 5, 2}, {ir.AtomicMin, 5, 3, 0, 5, 3},
			{ir.AtomicMin, 5, 9, 0, 5, 5}, {ir.AtomicMax, 5, 9, 0, 5, 9}, {ir.AtomicMax, 5, -9, 0, 5, 5},
			{ir.AtomicAnd, 12, 10, 0, 12, 8}, {ir.AtomicOr, 12, 3, 0, 12, 15}, {ir.AtomicXor, 12, 10, 0, 12, 6},
			{ir.AtomicExchange, 12, 7, 0, 12, 7}, {ir.AtomicCAS, 12, 7, 12, 12, 7}, {ir.AtomicCAS, 12, 7, 11, 12, 12},
		}
		for _, tt := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64} {
			for _, o := range ops {
				if tt.IsFloat() && (o.op == ir.AtomicAnd || o.op == ir.AtomicOr || o.op == ir.AtomicXor) {
					continue
				}
				if tt.IsUnsigned() && (o.val < 0) {
					continue
				}
				b := ir.NewBuilder("old")
				x, out := b.Array("x", ir.F64, 1), b.Array("out", ir.F64, 1)
				a := b.Array("a", tt, 1)
				b.Parallel(ir.I64c(1), func(i *ir.Var) {
					e := &ir.Atomic{Op: o.op, Array: a, Index: []ir.Expr{ir.Ref(i)}, Value: ir.Conv(tt, ir.Ld(x, ir.I64c(0)))}
					if o.op == ir.AtomicCAS {
						e.Compare = ir.Conv(tt, ir.Ld(x, ir.I64c(1)))
					}
					b.Store(out, ir.Conv(ir.F64, e), ir.I64c(0))
					b.Store(out, ir.Conv(ir.F64, ir.Ld(a, ir.I64c(0))), ir.I64c(1))
				})
				p := compileKernel(t, b.Kernel())
				xs, res := []float64{float64(o.val), float64(o.cmp)}, make([]float64, 2)
				data := []uint64{0}
				switch tt {
				case ir.I32, ir.U32:
					*(*uint32)(unsafeData(data)) = uint32(o.start)
				case ir.F32:
					*(*float32)(unsafeData(data)) = float32(o.start)
				case ir.F64:
					data[0] = math.Float64bits(float64(o.start))
				default:
					data[0] = uint64(o.start)
				}
				if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(res), arr(data, 1)}}, 0, 1); err != nil {
					t.Fatal(err)
				}
				if res[0] != float64(o.old) || res[1] != float64(o.new) {
					t.Fatalf("%v %v(%d, %d): old %v new %v, want %d %d", tt, o.op, o.start, o.val, res[0], res[1], o.old, o.new)
				}
			}
		}
	})
}

// TestNoAllocs: Run allocates nothing in steady state.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	for _, k := range []*ir.Kernel{saxpyKernel(), stencilKernel()} {
		p := compileKernel(t, k)
		x, y := benchData(64 * 64)
		args := &Args{Scalars: []uint64{bitsOf(float32(2)), 0, 0}, Arrays: []Array{{}, arr(x), arr(y)}}
		if k.Name == "stencil" {
			args = &Args{Arrays: []Array{arr(x, 64, 64), arr(y, 64, 64)}}
		}
		task := p.Tasks[0]
		r, err := task.Prepare(args)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(50, func() {
			if err := task.Run(args, r, 3, r.Total-5); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per Run", k.Name, n)
		}
	}
}
