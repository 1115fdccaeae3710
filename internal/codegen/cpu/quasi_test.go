package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Quasi-affine indices (quasi.go, quasimem.go) against the same
// expressions in Go: loads, stores (the last lane to write an element
// wins) and comparisons by each index of quasiIndices, in thread loops of
// blocks of several sizes (segments cut by the block's end, two batches
// of lanes) and in parallel loops, on every lane and under a mask; and
// the index error of an access out of range, which the general path
// reports.

// quasiIndex is an i64 index expression of the contiguous index t, in IR
// and in Go.
type quasiIndex struct {
	name string
	ir   func(t ir.Expr) ir.Expr
	go_  func(t int64) int64
}

func quasiIndices() []quasiIndex {
	c := ir.I64c
	op := ir.Op
	return []quasiIndex{
		{"t/32", func(t ir.Expr) ir.Expr { return op(ir.Div, t, c(32)) }, func(t int64) int64 { return t / 32 }},
		{"t%32", func(t ir.Expr) ir.Expr { return op(ir.Rem, t, c(32)) }, func(t int64) int64 { return t % 32 }},
		{"t>>4*4+3", func(t ir.Expr) ir.Expr { return op(ir.Add, op(ir.Mul, op(ir.Shr, t, c(4)), c(4)), c(3)) }, func(t int64) int64 { return t>>4*4 + 3 }},
		{"t&15*4+1", func(t ir.Expr) ir.Expr { return op(ir.Add, op(ir.Mul, op(ir.And, t, c(15)), c(4)), c(1)) }, func(t int64) int64 { return t&15*4 + 1 }},
		{"(t*8+5)/32", func(t ir.Expr) ir.Expr { return op(ir.Div, op(ir.Add, op(ir.Mul, t, c(8)), c(5)), c(32)) }, func(t int64) int64 { return (t*8 + 5) / 32 }},
		{"(t*8+5)%32", func(t ir.Expr) ir.Expr { return op(ir.Rem, op(ir.Add, op(ir.Mul, t, c(8)), c(5)), c(32)) }, func(t int64) int64 { return (t*8 + 5) % 32 }},
		{"padded(t*8+3)", func(t ir.Expr) ir.Expr {
			p := op(ir.Add, op(ir.Mul, t, c(8)), c(3))
			return op(ir.Add, p, op(ir.Div, p, c(32)))
		}, func(t int64) int64 { p := t*8 + 3; return p + p/32 }},
		{"(t+64)/32-1", func(t ir.Expr) ir.Expr { return op(ir.Sub, op(ir.Div, op(ir.Add, t, c(64)), c(32)), c(1)) }, func(t int64) int64 { return (t+64)/32 - 1 }},
		{"2000-t%32*33", func(t ir.Expr) ir.Expr { return op(ir.Sub, c(2000), op(ir.Mul, op(ir.Rem, t, c(32)), c(33))) }, func(t int64) int64 { return 2000 - t%32*33 }},
		{"t*3+2", func(t ir.Expr) ir.Expr { return op(ir.Add, op(ir.Mul, t, c(3)), c(2)) }, func(t int64) int64 { return t*3 + 2 }},
		{"(t<<1)/8", func(t ir.Expr) ir.Expr { return op(ir.Div, op(ir.Shl, t, c(1)), c(8)) }, func(t int64) int64 { return (t << 1) / 8 }},
		// No form in some batches or at all: the general path.
		{"(t+5)/32", func(t ir.Expr) ir.Expr { return op(ir.Div, op(ir.Add, t, c(5)), c(32)) }, func(t int64) int64 { return (t + 5) / 32 }},
		{"(t-40)/8+5", func(t ir.Expr) ir.Expr { return op(ir.Add, op(ir.Div, op(ir.Sub, t, c(40)), c(8)), c(5)) }, func(t int64) int64 { return (t-40)/8 + 5 }},
		{"t*3/4", func(t ir.Expr) ir.Expr { return op(ir.Div, op(ir.Mul, t, c(3)), c(4)) }, func(t int64) int64 { return t * 3 / 4 }},
	}
}

// quasiCase builds the body over lane t (an i64 expression) that, for
// index e, sets out[t] = tab[e] + 1000·(e < 7) on the lanes with t%3 != 0
// when masked, and tab2[e] = t, beside its Go run.
func quasiBody(b *ir.Builder, e quasiIndex, t ir.Expr, masked bool, tab, tab2, out *ir.Param) {
	body := func() {
		x := b.Decl("x", e.ir(t))
		flag := b.Decl("flag", ir.I32c(0))
		b.If(ir.Op(ir.Lt, ir.Ref(x), ir.I64c(7)), func() { b.Assign(flag, ir.I32c(1000)) }, nil)
		b.Store(out, ir.Op(ir.Add, ir.Ld(tab, ir.Ref(x)), ir.Ref(flag)), t)
		b.Store(tab2, ir.Conv(ir.I32, t), e.ir(t))
	}
	if masked {
		b.If(ir.Op(ir.Ne, ir.Op(ir.Rem, t, ir.I64c(3)), ir.I64c(0)), body, nil)
		return
	}
	body()
}

func quasiWant(e quasiIndex, n int, masked bool, tab []int32) (out, tab2 []int32) {
	out, tab2 = make([]int32, n), make([]int32, len(tab))
	for t := range int64(n) {
		if masked && t%3 == 0 {
			continue
		}
		x := e.go_(t)
		out[t] = tab[x]
		if x < 7 {
			out[t] += 1000
		}
		tab2[x] = int32(t)
	}
	return out, tab2
}

func TestQuasiIndices(t *testing.T) {
	const n, size = 1500, 13000 // n lanes; tab and tab2 hold size elements
	tab := make([]int32, size)
	for i := range tab {
		tab[i] = int32(7*i + 1)
	}
	for _, e := range quasiIndices() {
		for _, masked := range []bool{false, true} {
			kernels := map[string]*ir.Kernel{}
			b := ir.NewBuilder("par")
			tb, tb2, out := b.Array("tab", ir.I32, 1), b.Array("tab2", ir.I32, 1), b.Array("out", ir.I32, 1)
			b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) { quasiBody(b, e, ir.Ref(i), masked, tb, tb2, out) })
			kernels["parallel"] = b.Kernel()
			for _, bs := range []int64{256, 300, 1024} {
				b := ir.NewBuilder("blk")
				tb, tb2, out := b.Array("tab", ir.I32, 1), b.Array("tab2", ir.I32, 1), b.Array("out", ir.I32, 1)
				b.Blocks(ir.I64c(1), ir.I64c(bs), func(*ir.Var) {
					b.Threads(func(tv *ir.Var) { quasiBody(b, e, ir.Ref(tv), masked, tb, tb2, out) })
				})
				kernels[fmt.Sprint("block", bs)] = b.Kernel()
			}
			for name, k := range kernels {
				t.Run(fmt.Sprintf("%s_%s_masked%v", e.name, name, masked), func(t *testing.T) {
					p := compileKernel(t, k)
					lanes := n
					if name != "parallel" {
						fmt.Sscanf(name, "block%d", &lanes)
					}
					wantOut, wantTab2 := quasiWant(e, lanes, masked, tab)
					out, tab2 := make([]int32, lanes), make([]int32, size)
					if err := launch(p, &Args{Scalars: make([]uint64, 3), Arrays: []Array{arr(tab), arr(tab2), arr(out)}}, 0, 1); err != nil {
						t.Fatal(err)
					}
					equal(t, "out", out, wantOut)
					equal(t, "tab2", tab2, wantTab2)
				})
			}
		}
	}
}

// TestQuasi2D: a 2-D tile read and written by t/32 and t%32 in both
// orders (a transpose through it), with an extent that cuts the last
// segment, and a 2-D parallel loop whose rows index by j/8 and j%8.
func TestQuasi2D(t *testing.T) {
	b := ir.NewBuilder("tile")
	in, out := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	b.Blocks(ir.I64c(1), ir.I64c(300), func(*ir.Var) {
		tile := b.Shared("tile", ir.F32, 10, 33)
		b.Threads(func(tv *ir.Var) {
			ty, tx := ir.Op(ir.Div, ir.Ref(tv), ir.I64c(32)), ir.Op(ir.Rem, ir.Ref(tv), ir.I64c(32))
			b.Store(tile, ir.Ld(in, ty, tx), ty, tx)
		})
		b.Threads(func(tv *ir.Var) {
			ty, tx := ir.Op(ir.Div, ir.Ref(tv), ir.I64c(32)), ir.Op(ir.Rem, ir.Ref(tv), ir.I64c(32))
			b.If(ir.Op(ir.LAnd, ir.Op(ir.Lt, tx, ir.I64c(10)), ir.Op(ir.Lt, ty, ir.I64c(32))), func() {
				b.Store(out, ir.Ld(tile, tx, ty), tx, ty)
			}, nil)
		})
	})
	p := compileKernel(t, b.Kernel())
	inS, outS := make([]float32, 10*32), make([]float32, 10*32)
	for i := range inS {
		inS[i] = float32(i) + 0.5
	}
	want := make([]float32, 10*32)
	var tile [10][33]float32
	for tv := range 300 {
		tile[tv/32][tv%32] = inS[tv/32*32+tv%32]
	}
	for tv := range 300 {
		if ty, tx := tv/32, tv%32; tx < 10 && ty < 32 {
			want[tx*32+ty] = tile[tx][ty]
		}
	}
	if err := launch(p, &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(inS, 10, 32), arr(outS, 10, 32)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	equal(t, "out", outS, want)

	b = ir.NewBuilder("rows")
	x, y := b.Array("x", ir.I32, 3), b.Array("y", ir.I32, 2)
	b.Parallel2(ir.LenOf(y, 0), ir.LenOf(y, 1), func(i, j *ir.Var) {
		b.Store(y, ir.Ld(x, ir.Ref(i), ir.Op(ir.Div, ir.Ref(j), ir.I64c(8)), ir.Op(ir.Rem, ir.Ref(j), ir.I64c(8))), ir.Ref(i), ir.Ref(j))
	})
	p = compileKernel(t, b.Kernel())
	const rows, cols = 3, 1000 // cols/8 = 125 rows of x per row of y
	xs, ys := make([]int32, rows*125*8), make([]int32, rows*cols)
	for i := range xs {
		xs[i] = int32(3*i + 2)
	}
	if err := launch(p, &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(xs, rows, 125, 8), arr(ys, rows, cols)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		for j := range cols {
			if w := xs[i*1000+j]; ys[i*cols+j] != w {
				t.Fatalf("y[%d][%d] = %d, want %d", i, j, ys[i*cols+j], w)
			}
		}
	}
}

// TestQuasiIndexError: an access by a form out of range reports the
// first lane's index as the general path does.
func TestQuasiIndexError(t *testing.T) {
	for _, c := range []struct {
		name    string
		index   func(t ir.Expr) ir.Expr
		n, want int
	}{
		{"t/32 past the end", func(t ir.Expr) ir.Expr { return ir.Op(ir.Div, t, ir.I64c(32)) }, 20, 20},
		{"t%32*8 past the end", func(t ir.Expr) ir.Expr { return ir.Op(ir.Mul, ir.Op(ir.Rem, t, ir.I64c(32)), ir.I64c(8)) }, 100, 104},
		{"t/32-1 below zero", func(t ir.Expr) ir.Expr { return ir.Op(ir.Sub, ir.Op(ir.Div, t, ir.I64c(32)), ir.I64c(1)) }, 100, -1},
	} {
		for _, store := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s_store%v", c.name, store), func(t *testing.T) {
				b := ir.NewBuilder("oob")
				tab, out := b.Array("tab", ir.I32, 1), b.Array("out", ir.I32, 1)
				b.Blocks(ir.I64c(1), ir.I64c(1024), func(*ir.Var) {
					b.Threads(func(tv *ir.Var) {
						if store {
							b.Store(tab, ir.I32c(1), c.index(ir.Ref(tv)))
						} else {
							b.Store(out, ir.Ld(tab, c.index(ir.Ref(tv))), ir.Ref(tv))
						}
					})
				})
				p := compileKernel(t, b.Kernel())
				err := launch(p, &Args{Scalars: make([]uint64, 2), Arrays: []Array{arr(make([]int32, c.n)), arr(make([]int32, 1024))}}, 0, 1)
				want := fmt.Sprintf("index %d out of range [0:%d) in dimension 0 of tab", c.want, c.n)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want %q", err, want)
				}
			})
		}
	}
}
