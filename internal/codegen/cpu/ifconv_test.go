package cpu

import (
	"math"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestConvertible: which ifs run as selects.
func TestConvertible(t *testing.T) {
	b := ir.NewBuilder("conv")
	x, out := b.Array("x", ir.F32, 1), b.Array("out", ir.F32, 1)
	var cases []struct {
		name string
		s    *ir.If
		want bool
	}
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		n := b.Decl("n", ir.Conv(ir.I32, ir.Ref(i)))
		c := ir.Op(ir.Lt, ir.Ref(v), ir.F32c(0.5))
		add := func(name string, want bool, then, els func()) {
			b.If(c, then, els)
			body := b.Kernel().Body[0].(*ir.ParallelFor).Body
			cases = append(cases, struct {
				name string
				s    *ir.If
				want bool
			}{name, body[len(body)-1].(*ir.If), want})
		}
		add("arithmetic", true, func() { b.Assign(v, ir.Op(ir.Mul, ir.Ref(v), ir.Ref(v))) }, func() { b.Assign(v, ir.F32c(1)) })
		add("nested", true, func() {
			b.If(ir.Op(ir.Gt, ir.Ref(n), ir.I32c(3)), func() { b.Assign(n, ir.I32c(0)) }, nil)
		}, nil)
		add("float division", true, func() { b.Assign(v, ir.Op(ir.Div, ir.F32c(1), ir.Ref(v))) }, nil)
		add("load", false, func() { b.Assign(v, ir.Ld(x, ir.I64c(0))) }, nil)
		add("integer division", false, func() { b.Assign(n, ir.Op(ir.Div, ir.I32c(7), ir.Ref(n))) }, nil)
		add("shift", false, func() { b.Assign(n, ir.Op(ir.Shl, ir.Ref(n), ir.Ref(n))) }, nil)
		add("division by a constant", true, func() { b.Assign(n, ir.Op(ir.Rem, ir.Op(ir.Div, ir.Ref(n), ir.I32c(2)), ir.I32c(3))) }, nil)
		add("division by zero", false, func() { b.Assign(n, ir.Op(ir.Div, ir.Ref(n), ir.I32c(0))) }, nil)
		add("shift by a constant", true, func() { b.Assign(n, ir.Op(ir.Shr, ir.Ref(n), ir.I32c(2))) }, nil)
		add("shift by a negative constant", false, func() { b.Assign(n, ir.Op(ir.Shr, ir.Ref(n), ir.I32c(-2))) }, nil)
		add("call", false, func() { b.Assign(v, ir.Fn(ir.Sqrt, ir.Ref(v))) }, nil)
		add("store", false, func() { b.Store(out, ir.Ref(v), ir.Ref(i)) }, nil)
		add("declaration", false, func() { b.Decl("w", ir.Ref(v)) }, nil)
		add("too long", false, func() {
			e := ir.Ref(v)
			for range convMax {
				e = ir.Op(ir.Add, e, ir.F32c(1))
			}
			b.Assign(v, e)
		}, nil)
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []mode{modeRow, modeSerial} {
		c := newCompiler(plan, plan.Tasks[0], m)
		c.prepass(plan.Tasks[0].Loop.Body)
		for _, tc := range cases {
			want := tc.want && m != modeSerial
			if got := c.convertible(tc.s); got != want {
				t.Errorf("%s (mode %d): convertible %v, want %v", tc.name, m, got, want)
			}
		}
	}
}

// TestConvertedIfs runs converted ifs of every register size (bool, int32,
// float64) against plain Go: nested ifs, a branch that reads a local before
// assigning it, locals assigned on one side only, and the whole under an
// outer mask with holes (inside a loop of varying trip count).
func TestConvertedIfs(t *testing.T) {
	b := ir.NewBuilder("conv")
	x := b.Array("x", ir.F64, 1)
	out := b.Array("out", ir.F64, 2)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		n := b.Decl("n", ir.Conv(ir.I32, ir.Op(ir.Rem, ir.Ref(i), ir.I64c(7))))
		flag := b.Decl("flag", ir.BoolC(false))
		trips := b.Decl("trips", ir.I32c(0))
		b.While(ir.Op(ir.Lt, ir.Ref(trips), ir.Op(ir.Rem, ir.Ref(n), ir.I32c(3))), func() {
			b.If(ir.Op(ir.Lt, ir.Ref(v), ir.F64c(0.25)), func() {
				b.Assign(v, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(v), ir.Ref(v)), ir.F64c(0.5)))
				b.Assign(flag, ir.Un(ir.Not, ir.Ref(flag)))
			}, func() {
				b.If(ir.Op(ir.Gt, ir.Ref(n), ir.I32c(2)), func() {
					b.Assign(n, ir.Op(ir.Sub, ir.Ref(n), ir.I32c(1)))
					b.Assign(v, ir.Op(ir.Sub, ir.Ref(v), ir.Conv(ir.F64, ir.Ref(n))))
				}, func() {
					b.Assign(v, ir.Op(ir.Mul, ir.Ref(v), ir.F64c(0.5)))
				})
			})
			b.Assign(trips, ir.Op(ir.Add, ir.Ref(trips), ir.I32c(1)))
		})
		b.Store(out, ir.Ref(v), ir.I64c(0), ir.Ref(i))
		b.Store(out, ir.Conv(ir.F64, ir.Ref(n)), ir.I64c(1), ir.Ref(i))
		b.Store(out, ir.Sel(ir.Ref(flag), ir.F64c(1), ir.F64c(0)), ir.I64c(2), ir.Ref(i))
	})
	k := b.Kernel()
	p := compileKernel(t, k)
	for _, n := range []int{1, 9, Batch + 5, 3000} {
		xs := make([]float64, n)
		for k := range xs {
			xs[k] = math.Mod(float64(k)*0.37, 1.3) - 0.2
		}
		for _, ch := range chunkings {
			got := make([]float64, 3*n)
			if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(got, 3, n)}}, ch.chunk, ch.workers); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				v, m, flag := xs[i], int32(i%7), false
				for trips := int32(0); trips < m%3; trips++ {
					if v < 0.25 {
						v = v*v + 0.5
						flag = !flag
					} else if m > 2 {
						m--
						v -= float64(m)
					} else {
						v *= 0.5
					}
				}
				f := 0.0
				if flag {
					f = 1
				}
				if got[i] != v || got[n+i] != float64(m) || got[2*n+i] != f {
					t.Fatalf("n=%d chunk %d, lane %d: %v %v %v, want %v %v %v\n%s", n, ch.chunk, i,
						got[i], got[n+i], got[2*n+i], v, m, f, printKernel(k))
				}
			}
		}
	}
}

// TestConvertedNesting: a branch whose nested converted if comes before
// the branch's own first assignment of another local: that assignment must
// still go to the branch's shadow, not to the local.
func TestConvertedNesting(t *testing.T) {
	b := ir.NewBuilder("nest")
	x, out := b.Array("x", ir.I64, 1), b.Array("out", ir.I64, 2)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		u := b.Decl("u", ir.Ref(v))
		w := b.Decl("w", ir.I64c(0))
		b.If(ir.Op(ir.Gt, ir.Ref(v), ir.I64c(10)), func() {
			// The nested if does not touch v: v's shadow starts at the
			// assignment after it.
			b.If(ir.Op(ir.Gt, ir.Ref(u), ir.I64c(20)), func() { b.Assign(w, ir.I64c(1)) }, nil)
			b.Assign(v, ir.Op(ir.Add, ir.Ref(u), ir.I64c(100)))
		}, func() {
			b.Assign(v, ir.I64c(-1))
		})
		b.Store(out, ir.Ref(v), ir.I64c(0), ir.Ref(i))
		b.Store(out, ir.Ref(w), ir.I64c(1), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	const n = 40
	xs, got := make([]int64, n), make([]int64, 2*n)
	for i := range xs {
		xs[i] = int64(i * 7 % 31)
	}
	if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(got, 2, n)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		w := int64(0)
		if v > 10 {
			if v > 20 {
				w = 1
			}
			v += 100
		} else {
			v = -1
		}
		if got[i] != v || got[n+i] != w {
			t.Fatalf("lane %d: v %d w %d, want %d %d", i, got[i], got[n+i], v, w)
		}
	}
}
