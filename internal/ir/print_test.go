package ir_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func saxpyKernel() *Kernel {
	b := NewBuilder("saxpy")
	a, x, y := b.Scalar("a", F32), b.Array("x", F32, 1), b.Array("y", F32, 1)
	b.Parallel(LenOf(x, 0), func(i *Var) {
		b.Store(y, Op(Add, Op(Mul, P(a), Ld(x, Ref(i))), Ld(y, Ref(i))), Ref(i))
	})
	return b.Kernel()
}

// fullKernel uses every kind of statement, expression, operator, intrinsic
// and atomic.
func fullKernel() *Kernel {
	b := NewBuilder("full")
	s, n := b.Scalar("s", F32), b.Scalar("n", I32)
	fa, ia, ua := b.Array("fa", F32, 1), b.Array("ia", I32, 1), b.Array("ua", U64, 1)
	m, c := b.Array("m", F64, 2), b.Array("c", I64, 3)
	ba := b.Array("ba", Bool, 1)
	total := b.Decl("total", I32c(0))
	b.ForRange("i", P(n), func(i *Var) {
		b.If(Op(Eq, Op(Rem, Ref(i), I32c(2)), I32c(0)), func() { b.Continue() }, func() {
			b.Assign(total, Op(Add, Ref(total), Ref(i)))
		})
		b.If(Op(Gt, Ref(total), I32c(100)), func() { b.Break() }, nil)
	})
	b.Parallel(LenOf(fa, 0), func(i *Var) {
		x := b.Decl("x", Ld(fa, Ref(i)))
		for _, f := range Intrinsics() {
			args := []Expr{Ref(x)}
			if f.Arity() == 2 {
				args = append(args, P(s))
			}
			b.Assign(x, Fn(f, args...))
		}
		b.Assign(x, Sel(Op(LAnd, Op(Lt, Ref(x), F32c(0)), Un(Not, Op(Ge, Ref(x), F32c(-1.5)))), Un(Neg, Ref(x)), Op(Min, Ref(x), F32c(float32(math.Inf(1))))))
		b.Assign(x, Op(Div, Op(Sub, Ref(x), Op(Max, P(s), F32c(1e-30))), Op(Add, F32c(2), F32c(float32(math.NaN())))))
		b.Store(fa, Ref(x), Ref(i))
		k := b.Decl("k", Conv(I32, Ref(i)))
		b.Store(ia, Op(Or, Op(And, Ref(k), I32c(3)), Op(Xor, Op(AndNot, Ref(k), I32c(1)), Un(BitNot, Ref(k)))), Ref(i))
		b.Store(ia, Op(Shl, Op(Shr, Ref(k), U32c(2)), Ref(i)), Ref(i))
		b.If(Op(LOr, Op(Ne, Ref(k), I32c(-7)), Op(Le, Ref(k), P(n))), func() {
			b.Do(AtomicE(AtomicAdd, ia, I32c(1), I64c(0)))
			b.Do(AtomicE(AtomicSub, ia, I32c(1), I64c(0)))
			b.Do(AtomicE(AtomicMin, ia, Ref(k), I64c(0)))
			b.Do(AtomicE(AtomicMax, fa, F32c(0.5), I64c(0)))
			b.Do(AtomicE(AtomicAnd, ua, U64c(math.MaxUint64), I64c(0)))
			b.Do(AtomicE(AtomicOr, ua, U64c(1), I64c(0)))
			b.Do(AtomicE(AtomicXor, ua, U64c(1), I64c(0)))
			b.Do(AtomicE(AtomicExchange, ia, I32c(5), I64c(0)))
			b.Do(&Atomic{Op: AtomicCAS, Array: ia, Index: []Expr{I64c(0)}, Compare: I32c(5), Value: I32c(6)})
		}, nil)
		b.Store(ba, Op(Eq, Ref(k), Ref(total)), Ref(i))
	})
	b.Parallel2(LenOf(m, 0), LenOf(m, 1), func(i, j *Var) {
		b.Store(m, Conv(F64, Op(Mul, Op(Add, Ref(i), Ref(j)), Op(Sub, Ref(i), Ref(j)))), Ref(i), Ref(j))
	}).BlockDim = 128
	b.ParallelN([]Expr{LenOf(c, 0), LenOf(c, 1), LenOf(c, 2)}, func(v []*Var) {
		w := b.DeclZero("w", I64)
		b.While(Op(Lt, Ref(w), Ref(v[2])), func() { b.Assign(w, Op(Add, Ref(w), I64c(1))) })
		b.Store(c, Un(Neg, Op(Sub, Ref(w), I64c(-3))), Ref(v[0]), Ref(v[1]), Ref(v[2]))
	})
	return b.Kernel()
}

// groupsKernel has two groups, shadowed names and a labelled break.
func groupsKernel() *Kernel {
	b := NewBuilder("groups")
	a, bb := b.Array("a", I32, 1), b.Array("b", I32, 1)
	b.Group(func() {
		b.Parallel(LenOf(a, 0), func(i *Var) { b.Store(a, I32c(1), Ref(i)) })
		b.Parallel(LenOf(a, 0), func(i *Var) { b.Store(a, Op(Add, Ld(a, Ref(i)), I32c(1)), Ref(i)) })
	})
	b.Group(func() {
		n := b.Decl("n", LenOf(bb, 0))
		b.Parallel(Ref(n), func(i *Var) {
			outer := b.ForRange("j", I64c(4), func(j *Var) {
				b.ForRange("j", I64c(4), func(j2 *Var) {
					b.If(Op(Eq, Ref(j), Ref(j2)), func() { b.Break() }, nil)
				})
			})
			inner := outer.Body[0].(*For)
			inner.Body[0].(*If).Then[0].(*Break).Loop = outer
			b.Store(bb, I32c(2), Ref(i))
		})
	})
	return b.Kernel()
}

func TestPrintGolden(t *testing.T) {
	for name, k := range map[string]*Kernel{"saxpy": saxpyKernel(), "full": fullKernel(), "groups": groupsKernel()} {
		t.Run(name, func(t *testing.T) {
			if err := Verify(k); err != nil {
				t.Fatal(err)
			}
			got := Print(k)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Print(%s) =\n%s\nwant\n%s", name, got, want)
			}
			var buf bytes.Buffer
			if err := Fprint(&buf, k); err != nil || buf.String() != got {
				t.Errorf("Fprint differs from Print (err %v)", err)
			}
		})
	}
}

func TestPrintSaxpyExact(t *testing.T) {
	want := "kernel saxpy(a f32, x [1]f32, y [1]f32) {\n  parallel for i := range len(x, 0) {\n    y[i] = a*x[i] + y[i]\n  }\n}\n"
	if got := Print(saxpyKernel()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPrintParens(t *testing.T) {
	b := NewBuilder("p")
	x := b.Scalar("x", I32)
	cases := []struct {
		e    Expr
		want string
	}{
		{Op(Mul, Op(Add, P(x), P(x)), P(x)), "(x + x) * x"},
		{Op(Sub, P(x), Op(Sub, P(x), P(x))), "x - (x - x)"},
		{Op(Sub, Op(Sub, P(x), P(x)), P(x)), "x - x - x"},
		{Op(Add, P(x), Op(Mul, P(x), P(x))), "x + x*x"},
		{Op(Mul, P(x), Op(Mul, P(x), P(x))), "x * (x * x)"},
		{Op(LOr, Op(LAnd, BoolC(true), BoolC(false)), BoolC(true)), "true && false || true"},
		{Op(LAnd, Op(LOr, BoolC(true), BoolC(false)), BoolC(true)), "(true || false) && true"},
		{Un(Neg, I32c(-3)), "-(-3)"},
		{Un(Neg, Op(Add, P(x), P(x))), "-(x + x)"},
		{Op(Lt, Op(Add, P(x), I32c(1)), P(x)), "x + 1 < x"},
		{F64c(1), "1.0"},
		{F32c(0.1), "0.1"},
		{F64c(1e100), "1e+100"},
		{F64c(math.Inf(-1)), "-inf"},
		{U64c(math.MaxUint64), "18446744073709551615"},
		{I64c(math.MinInt64), "-9223372036854775808"},
	}
	for _, c := range cases {
		k := &Kernel{Name: "p", Params: []*Param{x}, Body: []Stmt{&ExprStmt{X: c.e}}}
		want := "kernel p(x i32) {\n  " + c.want + "\n}\n"
		if got := Print(k); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
