package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Interesting operands of every type: the edges and some random values.
func samples[T scalar](r *rand.Rand) []T {
	var z T
	var out []T
	switch any(z).(type) {
	case bool:
		return []T{any(false).(T), any(true).(T)}
	case int32:
		for _, v := range []int32{0, 1, -1, 2, -2, 7, -7, 31, 32, 33, math.MaxInt32, math.MinInt32} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(int32(r.Uint32())).(T))
		}
	case int64:
		for _, v := range []int64{0, 1, -1, 2, -2, 7, -7, 63, 64, 65, math.MaxInt64, math.MinInt64} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(int64(r.Uint64())).(T))
		}
	case uint32:
		for _, v := range []uint32{0, 1, 2, 7, 31, 32, 33, math.MaxUint32, 1 << 31} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(r.Uint32()).(T))
		}
	case uint64:
		for _, v := range []uint64{0, 1, 2, 7, 63, 64, 65, math.MaxUint64, 1 << 63} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(r.Uint64()).(T))
		}
	case float32:
		for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -2.5, 3.75, 1e30, -1e-30,
			float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(float32(r.NormFloat64()*100)).(T))
		}
	case float64:
		for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 3.75, 1e300, -1e-300,
			math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64} {
			out = append(out, any(v).(T))
		}
		for range 12 {
			out = append(out, any(r.NormFloat64()*100).(T))
		}
	}
	return out
}

// pairs makes n operand pairs covering every combination of the samples.
func pairs[T scalar](s []T, n int) (xs, ys []T) {
	for i := range n {
		xs = append(xs, s[i%len(s)])
		ys = append(ys, s[(i/len(s))%len(s)])
	}
	return xs, ys
}

// binaryCase runs out[i] = x op y for every operand placement (vector or
// uniform on either side) and compares with ref. ok filters operand pairs
// (e.g. no zero divisors).
func binaryCase[T, R scalar](t *testing.T, op ir.BinOp, ref func(a, b T) R, ok func(a, b T) bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, uint64(op)))
	s := samples[T](r)
	if ok == nil {
		ok = func(T, T) bool { return true }
	}
	tt, rt := irType[T](), irType[R]()
	name := fmt.Sprintf("%v_op%d", tt, op)
	b := ir.NewBuilder(name)
	x, y, out := b.Array("x", tt, 1), b.Array("y", tt, 1), b.Array("out", rt, 1)
	a, c := b.Scalar("a", tt), b.Scalar("c", tt)
	mode := b.Scalar("mode", ir.I32)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		for m, e := range []ir.Expr{
			ir.Op(op, ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))),
			ir.Op(op, ir.Ld(x, ir.Ref(i)), ir.P(c)),
			ir.Op(op, ir.P(a), ir.Ld(y, ir.Ref(i))),
			ir.Op(op, ir.P(a), ir.P(c)),
		} {
			b.If(ir.Op(ir.Eq, ir.P(mode), ir.I32c(int32(m))), func() { b.Store(out, e, ir.Ref(i)) }, nil)
		}
	})
	p := compileKernel(t, b.Kernel())
	// run launches with operand lists xs, ys (used by the vector modes) and
	// scalars av, cv, and checks lane i against ref(lx(i), ly(i)).
	run := func(mode int32, xs, ys []T, av, cv T, lx, ly func(i int) T) {
		t.Helper()
		if len(xs) == 0 {
			return
		}
		got := make([]R, len(xs))
		args := &Args{
			Scalars: []uint64{0, 0, 0, bitsOf(av), bitsOf(cv), bitsOf(mode)},
			Arrays:  []Array{arr(xs), arr(ys), arr(got)},
		}
		if err := launch(p, args, 100, 2); err != nil {
			t.Fatalf("%s mode %d: %v", name, mode, err)
		}
		for i := range got {
			if want := ref(lx(i), ly(i)); !same(got[i], want) {
				t.Fatalf("%s mode %d: %v op %v = %v, want %v", name, mode, lx(i), ly(i), got[i], want)
			}
		}
	}
	var xs, ys []T
	for _, v := range s {
		for _, w := range s {
			if ok(v, w) {
				xs, ys = append(xs, v), append(ys, w)
			}
		}
	}
	run(0, xs, ys, s[0], s[0], func(i int) T { return xs[i] }, func(i int) T { return ys[i] })
	for _, v := range s {
		var l, rr []T
		for _, w := range s {
			if ok(w, v) {
				l = append(l, w)
			}
			if ok(v, w) {
				rr = append(rr, w)
			}
		}
		run(1, l, l, v, v, func(i int) T { return l[i] }, func(int) T { return v })
		run(2, rr, rr, v, v, func(int) T { return v }, func(i int) T { return rr[i] })
		for _, w := range rr[:min(len(rr), 4)] {
			one := []T{w}
			run(3, one, one, v, w, func(int) T { return v }, func(int) T { return w })
		}
	}
}

func nonZeroDivisor[T integer](_, b T) bool { return b != 0 }

func numCases[T number](t *testing.T) {
	binaryCase(t, ir.Add, func(a, b T) T { return a + b }, nil)
	binaryCase(t, ir.Sub, func(a, b T) T { return a - b }, nil)
	binaryCase(t, ir.Mul, func(a, b T) T { return a * b }, nil)
	binaryCase(t, ir.Min, func(a, b T) T { return min(a, b) }, nil)
	binaryCase(t, ir.Max, func(a, b T) T { return max(a, b) }, nil)
	binaryCase(t, ir.Eq, func(a, b T) bool { return a == b }, nil)
	binaryCase(t, ir.Ne, func(a, b T) bool { return a != b }, nil)
	binaryCase(t, ir.Lt, func(a, b T) bool { return a < b }, nil)
	binaryCase(t, ir.Le, func(a, b T) bool { return a <= b }, nil)
	binaryCase(t, ir.Gt, func(a, b T) bool { return a > b }, nil)
	binaryCase(t, ir.Ge, func(a, b T) bool { return a >= b }, nil)
}

func intCases[T integer](t *testing.T) {
	numCases[T](t)
	binaryCase(t, ir.Div, func(a, b T) T { return a / b }, nonZeroDivisor[T])
	binaryCase(t, ir.Rem, func(a, b T) T { return a % b }, nonZeroDivisor[T])
	binaryCase(t, ir.And, func(a, b T) T { return a & b }, nil)
	binaryCase(t, ir.Or, func(a, b T) T { return a | b }, nil)
	binaryCase(t, ir.Xor, func(a, b T) T { return a ^ b }, nil)
	binaryCase(t, ir.AndNot, func(a, b T) T { return a &^ b }, nil)
	nonNeg := func(_, b T) bool { return b >= 0 }
	binaryCase(t, ir.Shl, func(a, b T) T { return a << b }, nonNeg)
	binaryCase(t, ir.Shr, func(a, b T) T { return a >> b }, nonNeg)
}

func floatCases[T float](t *testing.T) {
	numCases[T](t)
	binaryCase(t, ir.Div, func(a, b T) T { return a / b }, nil)
}

func TestBinaryOps(t *testing.T) {
	t.Run("i32", intCases[int32])
	t.Run("i64", intCases[int64])
	t.Run("u32", intCases[uint32])
	t.Run("u64", intCases[uint64])
	t.Run("f32", floatCases[float32])
	t.Run("f64", floatCases[float64])
	t.Run("bool", func(t *testing.T) {
		binaryCase(t, ir.Eq, func(a, b bool) bool { return a == b }, nil)
		binaryCase(t, ir.Ne, func(a, b bool) bool { return a != b }, nil)
		binaryCase(t, ir.LAnd, func(a, b bool) bool { return a && b }, nil)
		binaryCase(t, ir.LOr, func(a, b bool) bool { return a || b }, nil)
	})
}

// TestShiftCountTypes shifts every integer type by counts of every integer
// type, counts past the width included.
func TestShiftCountTypes(t *testing.T) {
	types := []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64}
	for _, xt := range types {
		for _, ct := range types {
			for _, op := range []ir.BinOp{ir.Shl, ir.Shr} {
				b := ir.NewBuilder("shift")
				x, cnt, out := b.Array("x", xt, 1), b.Array("c", ct, 1), b.Array("out", ir.I64, 1)
				b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
					b.Store(out, ir.Conv(ir.I64, ir.Op(op, ir.Ld(x, ir.Ref(i)), ir.Ld(cnt, ir.Ref(i)))), ir.Ref(i))
				})
				p := compileKernel(t, b.Kernel())
				xv := []int64{-5, 5, -1 << 40, 1 << 40, math.MinInt64, 12345}
				cv := []uint64{0, 1, 31, 32, 33, 63, 64, 65, 200}
				var xs, cs []int64
				for _, a := range xv {
					for _, c := range cv {
						xs, cs = append(xs, a), append(cs, int64(c))
					}
				}
				xa, ca := toType(xs, xt), toType(cs, ct)
				got := make([]int64, len(xs))
				if err := launch(p, &Args{Arrays: []Array{xa, ca, arr(got)}}, 0, 1); err != nil {
					t.Fatal(err)
				}
				for i := range xs {
					want := refShift(xt, op, xs[i], uint64(cs[i]))
					if got[i] != want {
						t.Fatalf("%v %v %v: %d by %d = %d, want %d", xt, op, ct, xs[i], cs[i], got[i], want)
					}
				}
			}
		}
	}
}

// TestShiftUniformCount shifts every integer type by a count the same on
// every lane (a scalar parameter, compiled by shiftUniform), counts at and
// past the width included.
func TestShiftUniformCount(t *testing.T) {
	types := []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64}
	xs := []int64{-5, 5, -1 << 40, 1 << 40, math.MinInt64, 12345}
	for _, xt := range types {
		for _, op := range []ir.BinOp{ir.Shl, ir.Shr} {
			b := ir.NewBuilder("shift")
			x, out := b.Array("x", xt, 1), b.Array("out", ir.I64, 1)
			cnt := b.Scalar("c", ir.U64)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Store(out, ir.Conv(ir.I64, ir.Op(op, ir.Ld(x, ir.Ref(i)), ir.P(cnt))), ir.Ref(i))
			})
			p := compileKernel(t, b.Kernel())
			for _, c := range []uint64{0, 1, 31, 32, 33, 63, 64, 65, 200} {
				got := make([]int64, len(xs))
				a := &Args{Scalars: []uint64{0, 0, c}, Arrays: []Array{toType(xs, xt), arr(got), {}}}
				if err := launch(p, a, 0, 1); err != nil {
					t.Fatal(err)
				}
				for i := range xs {
					if want := refShift(xt, op, xs[i], c); got[i] != want {
						t.Fatalf("%v %v: %d by %d = %d, want %d", xt, op, xs[i], c, got[i], want)
					}
				}
			}
		}
	}
}

func toType(v []int64, t ir.Type) Array {
	switch t {
	case ir.I32:
		s := make([]int32, len(v))
		for i := range v {
			s[i] = int32(v[i])
		}
		return arr(s)
	case ir.U32:
		s := make([]uint32, len(v))
		for i := range v {
			s[i] = uint32(v[i])
		}
		return arr(s)
	case ir.U64:
		s := make([]uint64, len(v))
		for i := range v {
			s[i] = uint64(v[i])
		}
		return arr(s)
	}
	return arr(append([]int64(nil), v...))
}

func refShift(t ir.Type, op ir.BinOp, x int64, c uint64) int64 {
	if op == ir.Shl {
		switch t {
		case ir.I32:
			return int64(int32(x) << c)
		case ir.U32:
			return int64(uint32(x) << c)
		case ir.U64:
			return int64(uint64(x) << c)
		}
		return x << c
	}
	switch t {
	case ir.I32:
		return int64(int32(x) >> c)
	case ir.U32:
		return int64(uint32(x) >> c)
	case ir.U64:
		return int64(uint64(x) >> c)
	}
	return x >> c
}

func unaryCase[T scalar](t *testing.T, op ir.UnOp, ref func(T) T) {
	r := rand.New(rand.NewPCG(2, uint64(op)))
	s := samples[T](r)
	tt := irType[T]()
	b := ir.NewBuilder("unary")
	x, out, a := b.Array("x", tt, 1), b.Array("out", tt, 2), b.Scalar("a", tt)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(out, ir.Un(op, ir.Ld(x, ir.Ref(i))), ir.I64c(0), ir.Ref(i))
		b.Store(out, ir.Un(op, ir.P(a)), ir.I64c(1), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	got := make([]T, 2*len(s))
	for _, av := range s {
		if err := launch(p, &Args{Scalars: []uint64{0, 0, bitsOf(av)}, Arrays: []Array{arr(s), arr(got, 2, len(s))}}, 0, 1); err != nil {
			t.Fatal(err)
		}
		for i, v := range s {
			if !same(got[i], ref(v)) || !same(got[len(s)+i], ref(av)) {
				t.Fatalf("%v op %d: f(%v) = %v, f(%v) = %v", tt, op, v, got[i], av, got[len(s)+i])
			}
		}
	}
}

func TestUnaryOps(t *testing.T) {
	unaryCase(t, ir.Neg, func(a int32) int32 { return -a })
	unaryCase(t, ir.Neg, func(a int64) int64 { return -a })
	unaryCase(t, ir.Neg, func(a uint32) uint32 { return -a })
	unaryCase(t, ir.Neg, func(a uint64) uint64 { return -a })
	unaryCase(t, ir.Neg, func(a float32) float32 { return -a })
	unaryCase(t, ir.Neg, func(a float64) float64 { return -a })
	unaryCase(t, ir.BitNot, func(a int32) int32 { return ^a })
	unaryCase(t, ir.BitNot, func(a int64) int64 { return ^a })
	unaryCase(t, ir.BitNot, func(a uint32) uint32 { return ^a })
	unaryCase(t, ir.BitNot, func(a uint64) uint64 { return ^a })
	unaryCase(t, ir.Not, func(a bool) bool { return !a })
}

func convCase[T, U number](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	s := samples[T](r)
	b := ir.NewBuilder("conv")
	x, out := b.Array("x", irType[T](), 1), b.Array("out", irType[U](), 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(out, ir.Conv(irType[U](), ir.Ld(x, ir.Ref(i))), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	got := make([]U, len(s))
	if err := launch(p, &Args{Arrays: []Array{arr(s), arr(got)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range s {
		// Go leaves out-of-range float to integer conversions to the
		// implementation; compare with what this implementation does.
		if want := U(v); !same(got[i], want) {
			t.Fatalf("%v(%v) = %v, want %v", irType[U](), v, got[i], want)
		}
	}
}

func convFrom[T number](t *testing.T) {
	convCase[T, int32](t)
	convCase[T, int64](t)
	convCase[T, uint32](t)
	convCase[T, uint64](t)
	convCase[T, float32](t)
	convCase[T, float64](t)
}

func TestConversions(t *testing.T) {
	convFrom[int32](t)
	convFrom[int64](t)
	convFrom[uint32](t)
	convFrom[uint64](t)
	convFrom[float32](t)
	convFrom[float64](t)
}

func TestSelect(t *testing.T) {
	b := ir.NewBuilder("sel")
	x, out, k := b.Array("x", ir.F64, 1), b.Array("out", ir.F64, 1), b.Scalar("k", ir.Bool)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := ir.Ld(x, ir.Ref(i))
		b.Store(out, ir.Op(ir.Add,
			ir.Sel(ir.Op(ir.Gt, v, ir.F64c(0)), v, ir.Un(ir.Neg, v)),
			ir.Sel(ir.P(k), ir.F64c(1000), ir.F64c(2000))), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	xs := []float64{-3, 4, 0, -0.5, 7}
	for _, kv := range []bool{true, false} {
		got := make([]float64, len(xs))
		if err := launch(p, &Args{Scalars: []uint64{0, 0, bitsOf(kv)}, Arrays: []Array{arr(xs), arr(got)}}, 0, 1); err != nil {
			t.Fatal(err)
		}
		for i, v := range xs {
			want := math.Abs(v) + 2000
			if kv {
				want -= 1000
			}
			if got[i] != want {
				t.Fatalf("k=%v x=%v: got %v, want %v", kv, v, got[i], want)
			}
		}
	}
}

func TestIntrinsics(t *testing.T) {
	ref1 := map[ir.Intrinsic]func(float64) float64{
		ir.Sqrt: math.Sqrt, ir.Exp: math.Exp, ir.Exp2: math.Exp2, ir.Log: math.Log, ir.Log2: math.Log2,
		ir.Log10: math.Log10, ir.Sin: math.Sin, ir.Cos: math.Cos, ir.Tan: math.Tan, ir.Asin: math.Asin,
		ir.Acos: math.Acos, ir.Atan: math.Atan, ir.Sinh: math.Sinh, ir.Cosh: math.Cosh, ir.Tanh: math.Tanh,
		ir.Abs: math.Abs, ir.Floor: math.Floor, ir.Ceil: math.Ceil, ir.Trunc: math.Trunc, ir.Round: math.Round,
	}
	ref2 := map[ir.Intrinsic]func(float64, float64) float64{
		ir.Atan2: math.Atan2, ir.Pow: math.Pow, ir.Mod: math.Mod, ir.Hypot: math.Hypot,
	}
	r := rand.New(rand.NewPCG(4, 4))
	s64 := append(samples[float64](r), 0.25, -0.75, 2.5, -2.5, 0.5, 1.5, 100.5)
	s32 := append(samples[float32](r), 0.25, -0.75, 2.5, -2.5, 0.5, 1.5, 100.5)
	for _, fn := range ir.Intrinsics() {
		for _, tt := range []ir.Type{ir.F32, ir.F64} {
			b := ir.NewBuilder("math")
			x, y, out, a := b.Array("x", tt, 1), b.Array("y", tt, 1), b.Array("out", tt, 2), b.Scalar("a", tt)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				args := []ir.Expr{ir.Ld(x, ir.Ref(i))}
				uargs := []ir.Expr{ir.P(a)}
				if fn.Arity() == 2 {
					args = append(args, ir.Ld(y, ir.Ref(i)))
					uargs = append(uargs, ir.Ld(y, ir.Ref(i)))
				}
				b.Store(out, ir.Fn(fn, args...), ir.I64c(0), ir.Ref(i))
				b.Store(out, ir.Fn(fn, uargs...), ir.I64c(1), ir.Ref(i))
			})
			p := compileKernel(t, b.Kernel())
			n := len(s64) * len(s64)
			if tt == ir.F64 {
				xs, ys := pairs(s64, n)
				got := make([]float64, 2*n)
				av := 0.75
				if err := launch(p, &Args{Scalars: []uint64{0, 0, 0, bitsOf(av)}, Arrays: []Array{arr(xs), arr(ys), arr(got, 2, n)}}, 0, 1); err != nil {
					t.Fatal(err)
				}
				for i := range xs {
					want, uwant := 0.0, 0.0
					if fn.Arity() == 2 {
						want, uwant = ref2[fn](xs[i], ys[i]), ref2[fn](av, ys[i])
					} else {
						want, uwant = ref1[fn](xs[i]), ref1[fn](av)
					}
					if !same(got[i], want) || !same(got[n+i], uwant) {
						t.Fatalf("f64 %v(%v, %v) = %v / %v, want %v / %v", fn, xs[i], ys[i], got[i], got[n+i], want, uwant)
					}
				}
				continue
			}
			xs, ys := pairs(s32, n)
			got := make([]float32, 2*n)
			av := float32(0.75)
			if err := launch(p, &Args{Scalars: []uint64{0, 0, 0, bitsOf(av)}, Arrays: []Array{arr(xs), arr(ys), arr(got, 2, n)}}, 0, 1); err != nil {
				t.Fatal(err)
			}
			for i := range xs {
				var want, uwant float32
				if fn.Arity() == 2 {
					want = float32(ref2[fn](float64(xs[i]), float64(ys[i])))
					uwant = float32(ref2[fn](float64(av), float64(ys[i])))
				} else {
					want, uwant = float32(ref1[fn](float64(xs[i]))), float32(ref1[fn](float64(av)))
				}
				if !same(got[i], want) || !same(got[n+i], uwant) {
					t.Fatalf("f32 %v(%v, %v) = %v / %v, want %v / %v", fn, xs[i], ys[i], got[i], got[n+i], want, uwant)
				}
			}
		}
	}
}

// TestFolding: operations on constants are computed when compiling, with
// the values Go computes at run time.
func TestFolding(t *testing.T) {
	b := ir.NewBuilder("fold")
	x := b.Array("x", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	c := newCompiler(plan, plan.Tasks[0], modeRow)
	third := float32(1) / 3
	for k, tc := range []struct {
		e    ir.Expr
		want any
	}{
		{ir.Op(ir.Add, ir.I64c(2), ir.Op(ir.Mul, ir.I64c(3), ir.I64c(4))), int64(14)},
		{ir.Op(ir.Div, ir.F32c(1), ir.F32c(3)), third},
		{ir.Conv(ir.I32, ir.Op(ir.Mul, ir.F64c(2.5), ir.F64c(2))), int32(5)},
		{ir.Op(ir.Lt, ir.I32c(-1), ir.I32c(1)), true},
		{ir.Un(ir.Neg, ir.F64c(0)), math.Copysign(0, -1)},
	} {
		var got any
		switch v := c.expr(tc.e).(type) {
		case *ev[int64]:
			got = v.k
		case *ev[int32]:
			got = v.k
		case *ev[float32]:
			got = v.k
		case *ev[float64]:
			got = v.k
		case *ev[bool]:
			got = v.k
		}
		if got == nil || reflect.ValueOf(got).IsNil() {
			t.Fatalf("case %d: not folded", k)
		}
		if g := reflect.ValueOf(got).Elem().Interface(); fmt.Sprint(g) != fmt.Sprint(tc.want) || math.Signbit(toF(g)) != math.Signbit(toF(tc.want)) {
			t.Errorf("case %d: folded to %v, want %v", k, g, tc.want)
		}
	}
}

func toF(v any) float64 {
	switch v := v.(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	return 1
}

// TestDivPow2: division and remainder by a constant power of two, done with
// shifts, agree with Go's operators on every type's edges.
func TestDivPow2(t *testing.T) {
	testDivPow2[int32](t)
	testDivPow2[int64](t)
	testDivPow2[uint32](t)
	testDivPow2[uint64](t)
}

func testDivPow2[T integer](t *testing.T) {
	a := samples[T](rand.New(rand.NewPCG(1, 2)))
	for k := range uint(8 * unsafe.Sizeof(T(0))) {
		p := T(1) << k
		if p <= 0 {
			continue // the sign bit of a signed type: not a positive divisor
		}
		q, r := make([]T, len(a)), make([]T, len(a))
		divPow2(q, a, k, false)
		divPow2(r, a, k, true)
		for i, v := range a {
			if q[i] != v/p || r[i] != v%p {
				t.Fatalf("%T %v / %v: %v rem %v, want %v rem %v", v, v, p, q[i], r[i], v/p, v%p)
			}
		}
	}
}

// mulAddCase checks x*s + c in its four spellings (the product's operands
// and the sum's either way round) with s and c scalar parameters and x a
// vector, the path of mulAddUniform, against Go: the product rounded to T
// before the add, as Go evaluates T(x*s) + c.
func mulAddCase[T number](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	xs := samples[T](r)
	tt := irType[T]()
	b := ir.NewBuilder("muladd")
	x, out := b.Array("x", tt, 1), b.Array("out", tt, 2)
	s, c := b.Scalar("s", tt), b.Scalar("c", tt)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := ir.Ld(x, ir.Ref(i))
		for k, e := range []ir.Expr{
			ir.Op(ir.Add, ir.Op(ir.Mul, v, ir.P(s)), ir.P(c)),
			ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(s), v), ir.P(c)),
			ir.Op(ir.Add, ir.P(c), ir.Op(ir.Mul, v, ir.P(s))),
			ir.Op(ir.Add, ir.P(c), ir.Op(ir.Mul, ir.P(s), v)),
		} {
			b.Store(out, e, ir.I64c(int64(k)), ir.Ref(i))
		}
	})
	p := compileKernel(t, b.Kernel())
	for _, sc := range [][2]T{{3, 7}, {T(1664525), T(1013904223)}, {xs[1], xs[2]}, {0, xs[3]}} {
		got := make([]T, 4*len(xs))
		a := &Args{Scalars: []uint64{0, 0, bitsOf(sc[0]), bitsOf(sc[1])}, Arrays: []Array{arr(xs), arr(got, 4, len(xs)), {}, {}}}
		if err := launch(p, a, 100, 2); err != nil {
			t.Fatal(err)
		}
		for k := range 4 {
			for i, v := range xs {
				if want := T(v*sc[0]) + sc[1]; !same(got[k*len(xs)+i], want) {
					t.Fatalf("%v spelling %d: %v*%v + %v = %v, want %v", tt, k, v, sc[0], sc[1], got[k*len(xs)+i], want)
				}
			}
		}
	}
}

func TestMulAddUniform(t *testing.T) {
	t.Run("i32", mulAddCase[int32])
	t.Run("i64", mulAddCase[int64])
	t.Run("u32", mulAddCase[uint32])
	t.Run("u64", mulAddCase[uint64])
	t.Run("f32", mulAddCase[float32])
	t.Run("f64", mulAddCase[float64])
}

// mulSubCase checks x*k - c and k*x - c, k and c constants, for a varying
// x (mulSub's one loop) and a uniform one, and k of 0 and 1 (the shapes
// left to binary), against Go's wrapping arithmetic.
func mulSubCase[T integer](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	xs := samples[T](r)
	tt := irType[T]()
	for _, k := range []T{2, 0, 1, T(1664525), ^T(2)} {
		for _, cv := range []T{1, 0, ^T(0), T(1013904223)} {
			b := ir.NewBuilder("mulsub")
			x, out := b.Array("x", tt, 1), b.Array("out", tt, 2)
			u := b.Scalar("u", tt)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				for j, e := range []ir.Expr{
					ir.Op(ir.Sub, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), constOf(k)), constOf(cv)),
					ir.Op(ir.Sub, ir.Op(ir.Mul, constOf(k), ir.Ld(x, ir.Ref(i))), constOf(cv)),
					ir.Op(ir.Sub, ir.Op(ir.Mul, ir.P(u), constOf(k)), constOf(cv)),
				} {
					b.Store(out, e, ir.I64c(int64(j)), ir.Ref(i))
				}
			})
			p := compileKernel(t, b.Kernel())
			got := make([]T, 3*len(xs))
			a := &Args{Scalars: []uint64{0, 0, bitsOf(xs[0])}, Arrays: []Array{arr(xs), arr(got, 3, len(xs)), {}}}
			if err := launch(p, a, 100, 2); err != nil {
				t.Fatal(err)
			}
			for i, v := range xs {
				want := [3]T{v*k - cv, k*v - cv, xs[0]*k - cv}
				for j := range want {
					if g := got[j*len(xs)+i]; g != want[j] {
						t.Fatalf("%v k=%v c=%v spelling %d lane %d: got %v, want %v", tt, k, cv, j, i, g, want[j])
					}
				}
			}
		}
	}
}

func TestMulSub(t *testing.T) {
	t.Run("i32", mulSubCase[int32])
	t.Run("i64", mulSubCase[int64])
	t.Run("u32", mulSubCase[uint32])
	t.Run("u64", mulSubCase[uint64])
}
