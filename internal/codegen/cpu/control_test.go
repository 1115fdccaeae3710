package cpu

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// chunkings run a parallel task whole, in chunks that straddle batches, and
// one iteration at a time, on several goroutines.
var chunkings = []struct {
	chunk   int64
	workers int
}{{0, 1}, {1, 3}, {7, 2}, {Batch - 1, 2}, {Batch + 3, 4}, {3*Batch + 1, 2}}

// TestNDRange stores a code of the multi-index at every point of 1- to
// 3-dimensional ranges, in row mode (long rows) and flat mode (short rows).
func TestNDRange(t *testing.T) {
	shapes := [][]int{{1}, {5}, {Batch}, {Batch + 1}, {3*Batch + 17}, {3, 4}, {2, 700}, {700, 2}, {1, 1000},
		{Batch + 5, 1}, {2, 3, 4}, {3, 2, 300}, {5, 300, 2}, {7, 1, 65}, {2, 2, rowMin}, {2, 2, rowMin - 1}}
	for _, shape := range shapes {
		dims := len(shape)
		b := ir.NewBuilder("nd")
		out := b.Array("out", ir.I64, dims)
		exts := make([]ir.Expr, dims)
		for d := range dims {
			exts[d] = ir.LenOf(out, d)
		}
		b.ParallelN(exts, func(v []*ir.Var) {
			code := ir.Expr(ir.I64c(0))
			idx := make([]ir.Expr, dims)
			for d, x := range v {
				code = ir.Op(ir.Add, ir.Op(ir.Mul, code, ir.I64c(1000)), ir.Op(ir.Add, ir.Ref(x), ir.I64c(1)))
				idx[d] = ir.Ref(x)
			}
			b.Store(out, code, idx...)
		})
		p := compileKernel(t, b.Kernel())
		total := 1
		for _, n := range shape {
			total *= n
		}
		for _, ch := range chunkings {
			got := make([]int64, total)
			if err := launch(p, &Args{Arrays: []Array{arr(got, shape...)}}, ch.chunk, ch.workers); err != nil {
				t.Fatal(err)
			}
			for flat := range total {
				want, rem, mul := int64(0), flat, 1
				ix := make([]int, dims)
				for d := dims - 1; d >= 0; d-- {
					ix[d] = rem % shape[d]
					rem /= shape[d]
				}
				for d := range dims {
					want = want*1000 + int64(ix[d]+1)
				}
				_ = mul
				if got[flat] != want {
					t.Fatalf("shape %v chunk %d: out[%v] = %d, want %d", shape, ch.chunk, ix, got[flat], want)
				}
			}
		}
	}
}

// TestIndexVarTypes runs parallel loops whose index has each integer type
// and adds a constant offset to exercise the contiguous paths.
func TestIndexVarTypes(t *testing.T) {
	for _, tt := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64} {
		b := ir.NewBuilder("ix")
		x, out, np := b.Array("x", ir.F64, 1), b.Array("out", ir.F64, 1), b.Scalar("n", tt)
		b.Parallel(ir.P(np), func(i *ir.Var) {
			one := &ir.Const{T: tt, Bits: 1}
			b.Store(out, ir.Op(ir.Add, ir.Ld(x, ir.Op(ir.Add, ir.Ref(i), one)), ir.Ld(x, ir.Ref(i))), ir.Ref(i))
		})
		p := compileKernel(t, b.Kernel())
		n := 1000
		xs := make([]float64, n+1)
		for i := range xs {
			xs[i] = float64(i * i)
		}
		got := make([]float64, n)
		if err := launch(p, &Args{Scalars: []uint64{0, 0, uint64(n)}, Arrays: []Array{arr(xs), arr(got)}}, 300, 2); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != xs[i]+xs[i+1] {
				t.Fatalf("%v: out[%d] = %v", tt, i, got[i])
			}
		}
	}
}

// TestDivergentControl covers if/else with divergent lanes, nested serial
// loops with per-lane trip counts, break and continue (plain and labelled),
// a condition-less loop, and variables declared inside loops.
func TestDivergentControl(t *testing.T) {
	b := ir.NewBuilder("ctl")
	out := b.Array("out", ir.I64, 1)
	b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		I := ir.Ref(i)
		s := b.Decl("s", ir.I64c(0))
		// if / else if / else on i % 3.
		r := ir.Op(ir.Rem, I, ir.I64c(3))
		b.If(ir.Op(ir.Eq, r, ir.I64c(0)), func() {
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.I64c(1)))
		}, func() {
			b.If(ir.Op(ir.Eq, r, ir.I64c(1)), func() {
				b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.I64c(10)))
			}, func() {
				b.Assign(s, ir.Op(ir.Sub, ir.Ref(s), ir.I64c(5)))
			})
		})
		// Nested loops with divergent trip counts.
		b.ForRange("a", ir.Op(ir.Rem, I, ir.I64c(7)), func(a *ir.Var) {
			b.ForRange("c", ir.Ref(a), func(c *ir.Var) {
				tmp := b.Decl("t", ir.Op(ir.Mul, ir.Ref(a), ir.Ref(c)))
				b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.Ref(tmp)))
			})
		})
		// continue and break in one loop.
		b.ForRange("k", ir.I64c(100), func(k *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(k), ir.I64c(3)), ir.I64c(0)), func() { b.Continue() }, nil)
			b.If(ir.Op(ir.Gt, ir.Ref(k), ir.Op(ir.Rem, I, ir.I64c(50))), func() { b.Break() }, nil)
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.Op(ir.Mul, ir.Ref(k), ir.I64c(100))))
		})
		// Labelled: break outer / continue outer from an inner loop.
		var inner *ir.For
		outer := b.ForRange("p", ir.I64c(10), func(p *ir.Var) {
			inner = b.ForRange("q", ir.I64c(10), func(q *ir.Var) {
				b.If(ir.Op(ir.Eq, ir.Ref(q), ir.Op(ir.Rem, I, ir.I64c(5))), func() { b.Continue() }, nil)
				b.If(ir.Op(ir.Gt, ir.Op(ir.Add, ir.Ref(p), ir.Ref(q)), ir.Op(ir.Rem, I, ir.I64c(13))), func() { b.Break() }, nil)
				b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.I64c(1000)))
			})
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.I64c(100000))) // skipped by continue outer
		})
		retarget(inner.Body, outer)
		// A loop with no condition, left by break.
		w := b.Decl("w", I)
		b.While(nil, func() {
			b.If(ir.Op(ir.Le, ir.Ref(w), ir.I64c(1)), func() { b.Break() }, nil)
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(w), ir.I64c(2)), ir.I64c(0)), func() {
				b.Assign(w, ir.Op(ir.Div, ir.Ref(w), ir.I64c(2)))
			}, func() {
				b.Assign(w, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(w), ir.I64c(3)), ir.I64c(1)))
			})
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.I64c(1_000_000)))
		})
		b.Store(out, ir.Ref(s), I)
	})
	ref := func(i int64) int64 {
		s := int64(0)
		switch i % 3 {
		case 0:
			s++
		case 1:
			s += 10
		default:
			s -= 5
		}
		for a := int64(0); a < i%7; a++ {
			for c := int64(0); c < a; c++ {
				s += a * c
			}
		}
		for k := int64(0); k < 100; k++ {
			if k%3 == 0 {
				continue
			}
			if k > i%50 {
				break
			}
			s += k * 100
		}
	outer:
		for p := int64(0); p < 10; p++ {
			for q := int64(0); q < 10; q++ {
				if q == i%5 {
					continue outer
				}
				if p+q > i%13 {
					break outer
				}
				s += 1000
			}
			s += 100000
		}
		for w := i; ; {
			if w <= 1 {
				break
			}
			if w%2 == 0 {
				w /= 2
			} else {
				w = 3*w + 1
			}
			s += 1_000_000
		}
		return s
	}
	p := compileKernel(t, b.Kernel())
	for _, ch := range chunkings {
		got := make([]int64, 2000)
		if err := launch(p, &Args{Arrays: []Array{arr(got)}}, ch.chunk, ch.workers); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if want := ref(int64(i)); got[i] != want {
				t.Fatalf("chunk %d: out[%d] = %d, want %d", ch.chunk, i, got[i], want)
			}
		}
	}
}

// TestShortCircuit: && and || must not evaluate a load on lanes whose
// result is already decided; here the load would be out of range.
func TestShortCircuit(t *testing.T) {
	for _, op := range []ir.BinOp{ir.LAnd, ir.LOr} {
		b := ir.NewBuilder("sc")
		x, out := b.Array("x", ir.I32, 1), b.Array("out", ir.Bool, 1)
		n := ir.LenOf(x, 0)
		b.Parallel(n, func(i *ir.Var) {
			next := ir.Op(ir.Add, ir.Ref(i), ir.I64c(1))
			var c ir.Expr
			if op == ir.LAnd {
				c = ir.Op(ir.LAnd, ir.Op(ir.Lt, next, n), ir.Op(ir.Gt, ir.Ld(x, next), ir.I32c(0)))
			} else {
				c = ir.Op(ir.LOr, ir.Op(ir.Ge, next, n), ir.Op(ir.Gt, ir.Ld(x, next), ir.I32c(0)))
			}
			b.Store(out, c, ir.Ref(i))
			// The same guard on an if, with a varying (non-contiguous) index.
			b.If(c, func() { b.Store(out, ir.Op(ir.Ne, ir.Ld(out, ir.Ref(i)), ir.BoolC(false)), ir.Ref(i)) }, nil)
		})
		p := compileKernel(t, b.Kernel())
		for _, n := range []int{1, 2, Batch, Batch + 1, 1000} {
			xs := make([]int32, n)
			for i := range xs {
				xs[i] = int32(i%3 - 1)
			}
			got := make([]bool, n)
			if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(got)}}, 0, 1); err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			for i := range got {
				var want bool
				if op == ir.LAnd {
					want = i+1 < n && xs[i+1] > 0
				} else {
					want = i+1 >= n || xs[i+1] > 0
				}
				if got[i] != want {
					t.Fatalf("op %d n=%d: out[%d] = %v, want %v", op, n, i, got[i], want)
				}
			}
		}
	}
}

// TestTemps: a serial task writes temporaries, a parallel one reads them,
// another serial task reads and updates them.
func TestTemps(t *testing.T) {
	b := ir.NewBuilder("temps")
	a, x, res := b.Scalar("a", ir.F64), b.Array("x", ir.F64, 1), b.Array("res", ir.F64, 1)
	scale := b.Decl("scale", ir.Op(ir.Mul, ir.P(a), ir.F64c(2)))
	cnt := b.Decl("cnt", ir.Conv(ir.I32, ir.LenOf(x, 0)))
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(x, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.Ref(scale)), ir.Conv(ir.F64, ir.Ref(cnt))), ir.Ref(i))
	})
	b.Assign(scale, ir.Op(ir.Add, ir.Ref(scale), ir.Ld(x, ir.I64c(0))))
	b.Store(res, ir.Ref(scale), ir.I64c(0))
	b.Store(res, ir.Conv(ir.F64, ir.Ref(cnt)), ir.I64c(1))
	p := compileKernel(t, b.Kernel())
	if p.NumTemps < 2 {
		t.Fatalf("NumTemps = %d, want at least 2", p.NumTemps)
	}
	xs := []float64{1, 2, 3, 4, 5}
	res0 := make([]float64, 2)
	if err := launch(p, &Args{Scalars: []uint64{bitsOf(1.5), 0, 0}, Arrays: []Array{{}, arr(xs), arr(res0)}}, 2, 2); err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		if want := float64(i+1)*3 + 5; v != want {
			t.Fatalf("x[%d] = %v, want %v", i, v, want)
		}
	}
	if res0[0] != 3+8 || res0[1] != 5 {
		t.Fatalf("res = %v, want [11 5]", res0)
	}
}

// TestLoadsStores covers 1-3 dimensional arrays with uniform, contiguous
// and gathered indices, and bool arrays.
func TestLoadsStores(t *testing.T) {
	b := ir.NewBuilder("mem")
	src, perm, dst, flags := b.Array("src", ir.F32, 3), b.Array("perm", ir.I32, 1), b.Array("dst", ir.F32, 2), b.Array("flags", ir.Bool, 1)
	b.Parallel2(ir.LenOf(dst, 0), ir.LenOf(dst, 1), func(i, j *ir.Var) {
		I, J := ir.Ref(i), ir.Ref(j)
		g := ir.Ld(src, ir.Op(ir.Rem, J, ir.LenOf(src, 0)), ir.Conv(ir.I64, ir.Ld(perm, I)), ir.I64c(1)) // gathered
		c := ir.Ld(src, ir.I64c(0), I, J)                                                                // contiguous
		u := ir.Ld(src, ir.I64c(1), ir.I64c(2), ir.I64c(3))                                              // uniform
		b.Store(dst, ir.Op(ir.Add, ir.Op(ir.Add, g, c), u), I, J)
		b.Store(flags, ir.Op(ir.Gt, ir.Ld(dst, I, J), ir.F32c(1000)), ir.Op(ir.Add, ir.Op(ir.Mul, I, ir.LenOf(dst, 1)), J))
	})
	p := compileKernel(t, b.Kernel())
	for _, shape := range [][2]int{{4, 300}, {9, 3}, {1, 1}, {5, 513}} {
		n, m := shape[0], shape[1]
		s0, s1, s2 := 3, max(n, 3), max(m, 4)
		srcv := make([]float32, s0*s1*s2)
		for i := range srcv {
			srcv[i] = float32(i)
		}
		permv := make([]int32, n)
		for i := range permv {
			permv[i] = int32((i*7 + 3) % n)
		}
		dstv, fl := make([]float32, n*m), make([]bool, n*m)
		args := &Args{Arrays: []Array{arr(srcv, s0, s1, s2), arr(permv), arr(dstv, n, m), arr(fl)}}
		if err := launch(p, args, 100, 2); err != nil {
			t.Fatal(err)
		}
		at := func(a, b, c int) float32 { return srcv[(a*s1+b)*s2+c] }
		for i := range n {
			for j := range m {
				want := at(j%s0, int(permv[i]), 1) + at(0, i, j) + at(1, 2, 3)
				if dstv[i*m+j] != want || fl[i*m+j] != (want > 1000) {
					t.Fatalf("%v: dst[%d][%d] = %v %v, want %v", shape, i, j, dstv[i*m+j], fl[i*m+j], want)
				}
			}
		}
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *ir.Builder)
		want  string
	}{
		{"boolAtomic", func(b *ir.Builder) {
			x := b.Array("x", ir.Bool, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicExchange, x, ir.BoolC(true), ir.Ref(i)))
			})
		}, "atomic"},
		{"badIndexCount", func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 2)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
		}, "1 indices for 2-dimensional array x"},
		{"breakOutsideLoop", func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Break() })
		}, "break outside a loop"},
		{"mixedTypes", func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.Op(ir.Add, ir.F32c(1), ir.F64c(2)), ir.Ref(i)) })
		}, "f32 and f64"},
		{"floatXor", func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicXor, x, ir.F32c(1), ir.Ref(i)))
			})
		}, "xor"},
	}
	for _, tc := range cases {
		b := ir.NewBuilder(tc.name)
		tc.build(b)
		k := b.Kernel()
		if _, err := lower.Lower(k); err == nil {
			t.Errorf("%s: lowering accepted the kernel; the code generator must reject it", tc.name)
		}
		_, err := Compile(handPlan(k))
		if err == nil {
			t.Fatalf("%s: compiled, want an error mentioning %q", tc.name, tc.want)
		}
		if _, ok := err.(*ir.Error); !ok {
			t.Fatalf("%s: error %T, want *ir.Error", tc.name, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: error %q does not mention %q", tc.name, err, tc.want)
		}
	}
}

// retarget makes every break and continue in list leave loop (labelled).
func retarget(list []ir.Stmt, loop *ir.For) {
	for _, s := range list {
		switch s := s.(type) {
		case *ir.Break:
			s.Loop = loop
		case *ir.Continue:
			s.Loop = loop
		case *ir.If:
			retarget(s.Then, loop)
			retarget(s.Else, loop)
		}
	}
}

// handPlan lowers a kernel made of one parallel loop by hand, without
// verification, so that the code generator's own checks can be tested.
func handPlan(k *ir.Kernel) *lower.Plan {
	loop := k.Body[0].(*ir.ParallelFor)
	return &lower.Plan{Kernel: k, TempSlot: map[*ir.Var]int{},
		Tasks: []*lower.Task{{Kind: lower.Parallel, Loop: loop, Pos: loop.Pos}}}
}

// TestLaneRanges: conditions comparing the contiguous index with a uniform
// value take the lane-range path; check every comparison, both operand
// orders, several index types, && of two ranges, and the else branch.
func TestLaneRanges(t *testing.T) {
	ops := []ir.BinOp{ir.Lt, ir.Le, ir.Gt, ir.Ge, ir.Eq, ir.Ne}
	for _, tt := range []ir.Type{ir.I32, ir.I64, ir.U32} {
		for _, op := range ops {
			for _, flip := range []bool{false, true} {
				b := ir.NewBuilder("rng")
				out, u, u2, np := b.Array("out", ir.I32, 1), b.Scalar("u", tt), b.Scalar("u2", tt), b.Scalar("n", tt)
				b.Parallel(ir.P(np), func(i *ir.Var) {
					lin := ir.Op(ir.Sub, ir.Op(ir.Add, ir.Ref(i), &ir.Const{T: tt, Bits: 5}), &ir.Const{T: tt, Bits: 2})
					c := ir.Op(op, lin, ir.P(u))
					if flip {
						c = ir.Op(op, ir.P(u), lin)
					}
					b.If(c, func() {
						b.Store(out, ir.I32c(1), ir.Ref(i))
					}, func() {
						b.Store(out, ir.I32c(2), ir.Ref(i))
					})
					b.If(ir.Op(ir.LAnd, c, ir.Op(ir.Lt, ir.Ref(i), ir.P(u2))), func() {
						b.Store(out, ir.Op(ir.Add, ir.Ld(out, ir.Ref(i)), ir.I32c(10)), ir.Ref(i))
					}, nil)
				})
				p := compileKernel(t, b.Kernel())
				const n = 700
				for _, uv := range []int64{0, 1, 3, 255, 256, 258, 300, 511, 699, 702, 703, 1000} {
					for _, ch := range chunkings {
						got := make([]int32, n)
						u2v := uv/2 + 100
						args := &Args{Scalars: []uint64{0, uint64(uv), uint64(u2v), n}, Arrays: []Array{arr(got)}}
						if err := launch(p, args, ch.chunk, ch.workers); err != nil {
							t.Fatal(err)
						}
						for i := range int64(n) {
							l := i + 3
							var c bool
							x, y := l, uv
							if flip {
								x, y = uv, l
							}
							switch op {
							case ir.Lt:
								c = x < y
							case ir.Le:
								c = x <= y
							case ir.Gt:
								c = x > y
							case ir.Ge:
								c = x >= y
							case ir.Eq:
								c = x == y
							case ir.Ne:
								c = x != y
							}
							want := int32(2)
							if c {
								want = 1
								if i < u2v {
									want = 11
								}
							}
							if got[i] != want {
								t.Fatalf("%v op %d flip %v u=%d chunk %d: out[%d] = %d, want %d", tt, op, flip, uv, ch.chunk, i, got[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestSaxpyChunks checks the fused multiply-add written straight into the
// array, over chunks that straddle batches, and a scalar on either side.
func TestSaxpyChunks(t *testing.T) {
	p := compileKernel(t, saxpyKernel())
	for _, n := range []int{1, 3, Batch - 1, Batch, 2*Batch + 7, 5000} {
		for _, ch := range chunkings {
			x, y := benchData(n)
			want := make([]float32, n)
			for i := range want {
				want[i] = float32(1.5*x[i]) + y[i]
			}
			args := &Args{Scalars: []uint64{bitsOf(float32(1.5)), 0, 0}, Arrays: []Array{{}, arr(x), arr(y)}}
			if err := launch(p, args, ch.chunk, ch.workers); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				if y[i] != want[i] {
					t.Fatalf("n=%d chunk %d: y[%d] = %v, want %v", n, ch.chunk, i, y[i], want[i])
				}
			}
		}
	}
}
