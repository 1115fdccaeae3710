package cpu

import (
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestLinearLocals: locals declared as the contiguous index plus a
// uniform offset (linear.go) index arrays and compare as the expression
// itself does: under an if on a lane set (a branch run as a batch from a
// later lane), under a varying if (a narrowed mask), redeclared at each
// trip of a loop that lanes leave one by one, in a row of a 2-D range,
// and wrapping (u32) past the array, where the general path reports the
// index. out has one more element than x; for i in range x:
//
//	k := i + 1              // linear
//	if k > 2 && k < n-1 { out[k] += x[k-1] }        // lane set
//	if x[i]%3 == 0 { out[k] += 10 * x[i] }          // narrowed mask
//	for r := 0; r < int(x[i])%4; r++ { m := k - 1; out[m] += 100 }
func TestLinearLocals(t *testing.T) {
	b := ir.NewBuilder("linear")
	x, out := b.Array("x", ir.I32, 1), b.Array("out", ir.I32, 1)
	n := ir.LenOf(out, 0)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		k := b.Decl("k", ir.Op(ir.Add, ir.Ref(i), ir.I64c(1)))
		b.If(ir.Op(ir.LAnd, ir.Op(ir.Gt, ir.Ref(k), ir.I64c(2)), ir.Op(ir.Lt, ir.Ref(k), ir.Op(ir.Sub, n, ir.I64c(1)))), func() {
			b.Store(out, ir.Op(ir.Add, ir.Ld(out, ir.Ref(k)), ir.Ld(x, ir.Op(ir.Sub, ir.Ref(k), ir.I64c(1)))), ir.Ref(k))
		}, nil)
		b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ld(x, ir.Ref(i)), ir.I32c(3)), ir.I32c(0)), func() {
			b.Store(out, ir.Op(ir.Add, ir.Ld(out, ir.Ref(k)), ir.Op(ir.Mul, ir.I32c(10), ir.Ld(x, ir.Ref(i)))), ir.Ref(k))
		}, nil)
		b.ForRange("r", ir.Conv(ir.I64, ir.Op(ir.Rem, ir.Ld(x, ir.Ref(i)), ir.I32c(4))), func(*ir.Var) {
			m := b.Decl("m", ir.Op(ir.Sub, ir.Ref(k), ir.I64c(1)))
			b.Store(out, ir.Op(ir.Add, ir.Ld(out, ir.Ref(m)), ir.I32c(100)), ir.Ref(m))
		})
	})
	p := compileKernel(t, b.Kernel())
	for _, nx := range []int{1, 5, 511, 512, 513, 2000} {
		t.Run(fmt.Sprint(nx), func(t *testing.T) {
			x := make([]int32, nx)
			for i := range x {
				x[i] = int32(i*7%11) - 2
			}
			want := make([]int32, nx+1)
			for i := range x {
				k := i + 1
				if k > 2 && k < nx {
					want[k] += x[k-1]
				}
				if x[i]%3 == 0 {
					want[k] += 10 * x[i]
				}
				for r := int32(0); r < x[i]%4; r++ {
					want[k-1] += 100
				}
			}
			got := make([]int32, nx+1)
			if err := launch(p, &Args{Arrays: []Array{arr(x), arr(got)}}, 0, 1); err != nil {
				t.Fatal(err)
			}
			equal(t, "out", got, want)
		})
	}

	// 2-D rows and a u32 local that wraps: j2 := u32(j) + off, where off
	// = 2^32 - 1 makes j2 = j - 1, out of range for j = 0.
	b = ir.NewBuilder("linear2")
	y := b.Array("y", ir.I32, 2)
	off := b.Scalar("off", ir.U32)
	b.Parallel2(ir.LenOf(y, 0), ir.LenOf(y, 1), func(i, j *ir.Var) {
		j2 := b.Decl("j2", ir.Op(ir.Add, ir.Conv(ir.U32, ir.Ref(j)), ir.P(off)))
		b.Store(y, ir.Conv(ir.I32, ir.Ref(j2)), ir.Ref(i), ir.Ref(j2))
	})
	p = compileKernel(t, b.Kernel())
	ys := make([]int32, 3*40)
	err := launch(p, &Args{Scalars: []uint64{0, 5}, Arrays: []Array{arr(ys, 3, 40), {}}}, 0, 1)
	if err == nil || err.Error() != "kernel linear2: index 40 out of range [0:40) in dimension 1 of y" {
		t.Fatalf("offset 5: error %v, want index 40 out of range", err)
	}
	clear(ys)
	if err := launch(p, &Args{Scalars: []uint64{0, 1<<32 - 1}, Arrays: []Array{arr(ys, 3, 40), {}}}, 0, 1); err == nil ||
		err.Error() != "kernel linear2: index 4294967295 out of range [0:40) in dimension 1 of y" {
		t.Fatalf("offset -1: error %v, want index 4294967295 out of range", err)
	}
	clear(ys)
	if err := launch(p, &Args{Scalars: []uint64{0, 0}, Arrays: []Array{arr(ys, 3, 40), {}}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range ys {
		if v != int32(i%40) {
			t.Fatalf("y[%d][%d] = %d, want %d", i/40, i%40, v, i%40)
		}
	}
}

// TestAssignedLinearLocals: a local assigned after its declaration keeps
// its contiguity while every assignment is contiguous on every lane
// (linear.go), and loses it, reading the lanes' own values, after an
// assignment on fewer lanes (a narrowed mask, a branch run as a batch of
// its own, a loop that lanes leave at different trips) or through a
// converted if; an assignment on every lane makes it contiguous again.
// Each kernel runs over i in [0, n) of x, reading y (n+64 elements,
// y[j] = 3j+1) at the local's value, and writes out[i], beside the same
// loop in Go.
func TestAssignedLinearLocals(t *testing.T) {
	type kern struct {
		name  string
		build func(b *ir.Builder, x, y *ir.Param, i, acc *ir.Var)
		want  func(x, y []int32, i int) int32
	}
	add := func(b *ir.Builder, acc *ir.Var, y *ir.Param, k ir.Expr, by int32) {
		b.Assign(acc, ir.Op(ir.Add, ir.Ref(acc), ir.Op(ir.Mul, ir.Ld(y, k), ir.I32c(by))))
	}
	cases := []kern{
		{"strided", func(b *ir.Builder, x, y *ir.Param, i, acc *ir.Var) {
			// for k := i; k < n; k += 64 { acc += y[k] }: the last trip
			// runs on the lanes below n only.
			k := b.Decl("k", ir.Ref(i))
			b.While(ir.Op(ir.Lt, ir.Ref(k), ir.LenOf(x, 0)), func() {
				add(b, acc, y, ir.Ref(k), 1)
				b.Assign(k, ir.Op(ir.Add, ir.Ref(k), ir.I64c(64)))
			})
			add(b, acc, y, ir.Op(ir.Sub, ir.Ref(k), ir.LenOf(x, 0)), 1000) // k - n is in [0, 64)
		}, func(x, y []int32, i int) int32 {
			var acc int32
			k := i
			for ; k < len(x); k += 64 {
				acc += y[k]
			}
			return acc + 1000*y[k-len(x)]
		}},
		{"masked", func(b *ir.Builder, x, y *ir.Param, i, acc *ir.Var) {
			k := b.Decl("k", ir.Ref(i))
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ld(x, ir.Ref(i)), ir.I32c(3)), ir.I32c(0)), func() {
				b.Assign(k, ir.Op(ir.Add, ir.Ref(k), ir.I64c(5)))
				add(b, acc, y, ir.Ref(k), 7) // on the lanes that moved
			}, nil)
			add(b, acc, y, ir.Ref(k), 1) // on every lane: k apart
			b.Assign(k, ir.Op(ir.Add, ir.Ref(i), ir.I64c(2)))
			add(b, acc, y, ir.Ref(k), 100) // contiguous again
		}, func(x, y []int32, i int) int32 {
			var acc int32
			k := i
			if x[i]%3 == 0 {
				k += 5
				acc += 7 * y[k]
			}
			acc += y[k]
			k = i + 2
			return acc + 100*y[k]
		}},
		{"laneSet", func(b *ir.Builder, x, y *ir.Param, i, acc *ir.Var) {
			// An if on a lane set runs its branch as a batch from a later
			// lane: its assignment covers some lanes only.
			k := b.Decl("k", ir.Op(ir.Add, ir.Ref(i), ir.I64c(1)))
			b.If(ir.Op(ir.Gt, ir.Ref(i), ir.I64c(700)), func() {
				b.Assign(k, ir.Op(ir.Add, ir.Ref(k), ir.I64c(3)))
				add(b, acc, y, ir.Ref(k), 3)
			}, nil)
			add(b, acc, y, ir.Ref(k), 1)
		}, func(x, y []int32, i int) int32 {
			var acc int32
			k := i + 1
			if i > 700 {
				k += 3
				acc += 3 * y[k]
			}
			return acc + y[k]
		}},
		{"converted", func(b *ir.Builder, x, y *ir.Param, i, acc *ir.Var) {
			// Both branches are cheap assignments: a converted if, whose
			// selects write k's register.
			k := b.Decl("k", ir.Ref(i))
			xi := b.Decl("xi", ir.Conv(ir.I64, ir.Ld(x, ir.Ref(i))))
			b.If(ir.Op(ir.Gt, ir.Ref(xi), ir.I64c(4)), func() {
				b.Assign(k, ir.Op(ir.Add, ir.Ref(k), ir.I64c(1)))
			}, func() {
				b.Assign(k, ir.Op(ir.Add, ir.Ref(k), ir.I64c(2)))
			})
			add(b, acc, y, ir.Ref(k), 1)
		}, func(x, y []int32, i int) int32 {
			k := i
			if x[i] > 4 {
				k++
			} else {
				k += 2
			}
			return y[k]
		}},
	}
	for _, c := range cases {
		for _, blocks := range []bool{false, true} {
			b := ir.NewBuilder(c.name)
			x, y, out := b.Array("x", ir.I32, 1), b.Array("y", ir.I32, 1), b.Array("out", ir.I32, 1)
			body := func(i *ir.Var) {
				acc := b.Decl("acc", ir.I32c(0))
				c.build(b, x, y, i, acc)
				b.Store(out, ir.Ref(acc), ir.Ref(i))
			}
			if blocks {
				// Blocks of 300 threads over x, thread t of block blk being
				// lane blk*300 + t.
				b.Blocks(ir.Op(ir.Div, ir.Op(ir.Add, ir.LenOf(x, 0), ir.I64c(299)), ir.I64c(300)), ir.I64c(300), func(blk *ir.Var) {
					b.Threads(func(tv *ir.Var) {
						i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(300)), ir.Ref(tv)))
						b.If(ir.Op(ir.Lt, ir.Ref(i), ir.LenOf(x, 0)), func() { body(i) }, nil)
					})
				})
			} else {
				b.Parallel(ir.LenOf(x, 0), body)
			}
			p := compileKernel(t, b.Kernel())
			for _, n := range []int{1, 300, 511, 512, 1500} {
				t.Run(fmt.Sprintf("%s_blocks%v_%d", c.name, blocks, n), func(t *testing.T) {
					x, y := make([]int32, n), make([]int32, n+64)
					for i := range x {
						x[i] = int32(i*7%11) - 2
					}
					for j := range y {
						y[j] = int32(3*j + 1)
					}
					want, got := make([]int32, n), make([]int32, n)
					for i := range x {
						want[i] = c.want(x, y, i)
					}
					if err := launch(p, &Args{Scalars: make([]uint64, 3), Arrays: []Array{arr(x), arr(y), arr(got)}}, 0, 1); err != nil {
						t.Fatal(err)
					}
					equal(t, "out", got, want)
				})
			}
		}
	}
}
