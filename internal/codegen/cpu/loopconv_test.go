package cpu

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestLoopConvertible: which loops run converted.
func TestLoopConvertible(t *testing.T) {
	b := ir.NewBuilder("loops")
	x := b.Array("x", ir.I32, 1)
	var loops []*ir.For
	var want []bool
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		add := func(ok bool, f *ir.For) {
			loops, want = append(loops, f), append(want, ok)
		}
		add(true, b.While(ir.Op(ir.Gt, ir.Ref(v), ir.I32c(1)), func() {
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(v), ir.I32c(2)), ir.I32c(0)), func() {
				b.Assign(v, ir.Op(ir.Div, ir.Ref(v), ir.I32c(2)))
			}, func() { b.Assign(v, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(v), ir.I32c(3)), ir.I32c(1))) })
		}))
		add(false, b.While(ir.Op(ir.Gt, ir.Ref(v), ir.I32c(1)), func() {
			b.If(ir.Op(ir.Gt, ir.Ref(v), ir.I32c(7)), func() { b.Break() }, nil)
			b.Assign(v, ir.Op(ir.Sub, ir.Ref(v), ir.I32c(1)))
		}))
		add(false, b.While(ir.Op(ir.Gt, ir.Ref(v), ir.I32c(1)), func() {
			b.Assign(v, ir.Ld(x, ir.I64c(0)))
		}))
		add(false, b.While(nil, func() { b.Break() }))
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	c := newCompiler(plan, plan.Tasks[0], modeRow)
	c.prepass(plan.Tasks[0].Loop.Body)
	for k, l := range loops {
		if got := c.loopConvertible(l); got != want[k] {
			t.Errorf("loop %d: convertible %v, want %v", k, got, want[k])
		}
	}
}

// TestConvertedLoops runs converted loops against plain Go: Collatz steps
// (lanes leave after different trips), a loop with a post statement and a
// nested converted if, and both under an outer mask with holes.
func TestConvertedLoops(t *testing.T) {
	b := ir.NewBuilder("loops")
	x, out := b.Array("x", ir.I32, 1), b.Array("out", ir.I32, 2)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		n := b.Decl("n", ir.I32c(0))
		b.If(ir.Op(ir.Ne, ir.Op(ir.Rem, ir.Ref(v), ir.I32c(5)), ir.I32c(3)), func() {
			b.While(ir.Op(ir.LAnd, ir.Op(ir.Ne, ir.Ref(v), ir.I32c(1)), ir.Op(ir.Lt, ir.Ref(n), ir.I32c(40))), func() {
				b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(v), ir.I32c(2)), ir.I32c(0)), func() {
					b.Assign(v, ir.Op(ir.Div, ir.Ref(v), ir.I32c(2)))
				}, func() { b.Assign(v, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(v), ir.I32c(3)), ir.I32c(1))) })
				b.Assign(n, ir.Op(ir.Add, ir.Ref(n), ir.I32c(1)))
			})
		}, nil)
		s := b.Decl("s", ir.I32c(0))
		l := b.ForRange("k", ir.Op(ir.Rem, ir.Ref(n), ir.I32c(7)), func(k *ir.Var) {
			b.Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.Ref(k)))
		})
		_ = l
		b.Store(out, ir.Ref(n), ir.I64c(0), ir.Ref(i))
		b.Store(out, ir.Ref(s), ir.I64c(1), ir.Ref(i))
	})
	p := compileKernel(t, b.Kernel())
	for _, size := range []int{1, 30, Batch + 9, 2000} {
		xs, got := make([]int32, size), make([]int32, 2*size)
		for i := range xs {
			xs[i] = int32(1 + i*37%1000)
		}
		for _, ch := range chunkings {
			if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(got, 2, size)}}, ch.chunk, ch.workers); err != nil {
				t.Fatal(err)
			}
			for i, v := range xs {
				n := int32(0)
				if v%5 != 3 {
					for v != 1 && n < 40 {
						if v%2 == 0 {
							v /= 2
						} else {
							v = 3*v + 1
						}
						n++
					}
				}
				s := int32(0)
				for k := range n % 7 {
					s += k
				}
				if got[i] != n || got[size+i] != s {
					t.Fatalf("n=%d chunk %d lane %d: %d %d, want %d %d", size, ch.chunk, i, got[i], got[size+i], n, s)
				}
			}
		}
	}
}
