package qd

import (
	"slices"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Block loops (qd.Blocks) on every backend: the suite's block kernels
// (internal/suitekernels/blocks.go) against plain Go, with exact checks.

// fromHost is an array holding xs.
func fromHost[T Elem](t *testing.T, p *Program, xs []T, shape ...int) *Ndarray[T] {
	t.Helper()
	a := newNdarray[T](t, p, shape...)
	check(t, a.CopyFromHost(xs))
	return a
}

func TestBlockTreeSum(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.BlockTreeSum())
		for _, n := range []int{1, 128, 1000, 5000} {
			x := make([]int32, n)
			for i := range x {
				x[i] = int32(i%13 - 6)
			}
			blocks := (n + 127) / 128
			want := make([]int32, blocks)
			for i, v := range x {
				want[i/128] += v
			}
			out := newNdarray[int32](t, p, blocks)
			check(t, k.Launch(fromHost(t, p, x, n), out))
			if got := toSlice(t, out); !slices.Equal(got, want) {
				t.Errorf("n=%d: sums %v, want %v", n, got, want)
			}
		}
	})
}

// blockCollectivesWant computes what BlockCollectives gives: per block of
// bs, the sums, minimums and maximums (threads past n take x[0] for the
// minimum and maximum, 0 for the sums), and per element the exclusive and
// inclusive prefix sums within its block.
func blockCollectivesWant[T int32 | int64 | uint32 | float32 | float64](x []T, bs int) (sums, mins, maxs, ex, in []T) {
	n := len(x)
	blocks := (n + bs - 1) / bs
	sums, mins, maxs = make([]T, blocks), make([]T, blocks), make([]T, blocks)
	ex, in = make([]T, n), make([]T, n)
	for b := range blocks {
		var s T
		lo, hi := x[b*bs], x[b*bs]
		for t := range bs {
			i := b*bs + t
			var v T
			w := x[0]
			if i < n {
				v, w = x[i], x[i]
				ex[i] = s
			}
			s += v
			if i < n {
				in[i] = s
			}
			lo, hi = min(lo, w), max(hi, w)
		}
		sums[b], mins[b], maxs[b] = s, lo, hi
	}
	return
}

func testBlockCollectives[T int32 | int64 | uint32 | float32 | float64](t *testing.T, p *Program, elem ir.Type) {
	k := build(t, p, suitekernels.BlockCollectives(elem))
	for _, c := range []struct{ n, bs int }{{1, 1}, {100, 32}, {1000, 100}, {3000, 1024}, {700, 33}, {64, 1000}} {
		x := make([]T, c.n)
		for i := range x {
			x[i] = T(i%9 + 1) // positive and small: every sum is exact, unsigned too
			if i%5 == 0 {
				x[i] = T(20 - i%17)
			}
		}
		sums, mins, maxs, ex, in := blockCollectivesWant(x, c.bs)
		blocks := len(sums)
		gs, gmin, gmax := newNdarray[T](t, p, blocks), newNdarray[T](t, p, blocks), newNdarray[T](t, p, blocks)
		gex, gin := newNdarray[T](t, p, c.n), newNdarray[T](t, p, c.n)
		check(t, k.Launch(fromHost(t, p, x, c.n), gs, gmin, gmax, gex, gin, c.bs))
		for _, r := range []struct {
			name      string
			got, want []T
		}{{"sums", toSlice(t, gs), sums}, {"mins", toSlice(t, gmin), mins}, {"maxs", toSlice(t, gmax), maxs},
			{"exclusive", toSlice(t, gex), ex}, {"inclusive", toSlice(t, gin), in}} {
			if !slices.Equal(r.got, r.want) {
				t.Errorf("n=%d, block size %d: %s %v, want %v", c.n, c.bs, r.name, head(r.got), head(r.want))
			}
		}
	}
}

// head is the start of xs, for messages.
func head[T any](xs []T) []T { return xs[:min(len(xs), 40)] }

func TestBlockCollectives(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		t.Run("int32", func(t *testing.T) { testBlockCollectives[int32](t, p, ir.I32) })
		t.Run("int64", func(t *testing.T) { testBlockCollectives[int64](t, p, ir.I64) })
		t.Run("uint32", func(t *testing.T) { testBlockCollectives[uint32](t, p, ir.U32) })
		t.Run("float32", func(t *testing.T) { testBlockCollectives[float32](t, p, ir.F32) })
		t.Run("float64", func(t *testing.T) { testBlockCollectives[float64](t, p, ir.F64) })
		// A block size the device cannot launch is an error, not a crash.
		k := build(t, p, suitekernels.BlockCollectives(ir.I32))
		x := newNdarray[int32](t, p, 10)
		one := newNdarray[int32](t, p, 1)
		for _, bs := range []int{0, -3, 1025} {
			err := k.Launch(x, one, one, one, x, x, bs)
			if err == nil {
				t.Errorf("block size %d: the launch succeeded", bs)
			} else {
				t.Logf("block size %d: %v", bs, err)
			}
		}
	})
}

func TestBlockTranspose(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.BlockTranspose())
		for _, sh := range [][2]int{{1, 1}, {8, 8}, {13, 29}, {64, 40}} {
			n, m := sh[0], sh[1]
			x := make([]float32, n*m)
			for i := range x {
				x[i] = float32(i)
			}
			out := newNdarray[float32](t, p, m, n)
			check(t, k.Launch(fromHost(t, p, x, n, m), out))
			got := toSlice(t, out)
			for i := range n {
				for j := range m {
					if got[j*n+i] != x[i*m+j] {
						t.Fatalf("%dx%d: out[%d][%d] = %v, want %v", n, m, j, i, got[j*n+i], x[i*m+j])
					}
				}
			}
		}
	})
}

func TestBlockHistogram(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.BlockHistogram())
		const n = 100000
		x := make([]int32, n)
		want := make([]int32, 16)
		for i := range x {
			x[i] = int32(i * i % 16)
			want[x[i]]++
		}
		// More blocks than a device runs at once, and fewer: each block's
		// bins start at zero either way.
		for _, nb := range []int{1, 3, 50, 2000} {
			hist := newNdarray[int32](t, p, 16)
			check(t, k.Launch(fromHost(t, p, x, n), hist, nb))
			if got := toSlice(t, hist); !slices.Equal(got, want) {
				t.Errorf("%d blocks: %v, want %v", nb, got, want)
			}
		}
	})
}

func TestBlockRecords(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.BlockRecords())
		const blocks = 5
		out := newNdarray[float32](t, p, blocks*32)
		check(t, k.Launch(out))
		got := toSlice(t, out)
		for b := range blocks {
			for th := range 32 {
				if want := float32(100*b + 31 - th); got[b*32+th] != want {
					t.Fatalf("out[%d] = %v, want %v", b*32+th, got[b*32+th], want)
				}
			}
		}
	})
}

// blocksSource is a kernel file with block loops written as a user
// writes them; blocksNative runs the same kernels natively.
const blocksSource = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func reverse(x []float32, bs int) {
	for b := range qd.Blocks(len(x)/bs, bs) {
		buf := qd.Shared[[1024]float32]()
		for t := range b.Threads() {
			buf[t] = x[b.Index()*b.Size()+t]
		}
		for t := range b.Threads() {
			x[b.Index()*b.Size()+t] = buf[b.Size()-1-t]
		}
	}
}

type cell struct {
	N   int32
	Sum float32
}

// Helpers take a block loop's values: a shared array, a per-thread value,
// the block itself.
func loadTile(tile *[64]float32, x []float32, b qd.Block, t int) { tile[t] = x[b.Index()*64+t] }

func rowSum(b qd.Block, v qd.PerThread[int32]) int32 { return qd.BlockSum(b, v) }

func setMine(v qd.PerThread[int32], t int) { v[t] = int32(t) }

//qd:kernel
func helpers(x, out []float32, sums []int32) {
	for b := range qd.Blocks(len(x)/64, 64) {
		tile := qd.Shared[[64]float32]()
		v := qd.NewPerThread[int32](b)
		for t := range b.Threads() {
			loadTile(tile, x, b, t)
			setMine(v, t)
		}
		s := rowSum(b, v)
		for t := range b.Threads() {
			out[b.Index()*64+t] = tile[63-t]
			if t == 0 {
				sums[b.Index()] = s
			}
		}
	}
}

//qd:kernel
func cells(x []float32, out []cell) {
	for b := range qd.Blocks(len(out), 64) {
		acc := qd.Shared[[4]cell]()
		mine := qd.NewPerThread[cell](b)
		for t := range b.Threads() {
			if i := b.Index()*64 + t; i < len(x) {
				mine[t] = cell{N: 1, Sum: x[i]}
				qd.AtomicAdd(&acc[t%4].N, 1)
			}
		}
		n := qd.NewPerThread[int32](b)
		for t := range b.Threads() {
			n[t] = mine[t].N
		}
		total := qd.BlockSum(b, n)
		for t := range b.Threads() {
			if t == 0 {
				out[b.Index()] = cell{N: total + acc[0].N + acc[1].N + acc[2].N + acc[3].N, Sum: float32(b.Size())}
			}
		}
	}
}
`

func TestBlocksFromSource(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, blocksSource)
		rev := kernelOf(t, m, "reverse")
		for _, bs := range []int{1, 7, 256, 1024} {
			n := bs * 3
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i)
			}
			a := fromHost(t, p, x, n)
			check(t, rev.Launch(a, bs))
			got := toSlice(t, a)
			for i := range got {
				b, th := i/bs, i%bs
				if want := float32(b*bs + bs - 1 - th); got[i] != want {
					t.Fatalf("block size %d: x[%d] = %v, want %v", bs, i, got[i], want)
				}
			}
		}
		type cell struct {
			N   int32
			Sum float32
		}
		hk := kernelOf(t, m, "helpers")
		hx := make([]float32, 128)
		for i := range hx {
			hx[i] = float32(i)
		}
		hout, hsums := newNdarray[float32](t, p, 128), newNdarray[int32](t, p, 2)
		check(t, hk.Launch(fromHost(t, p, hx, 128), hout, hsums))
		got := toSlice(t, hout)
		for i := range got {
			if want := float32(i/64*64 + 63 - i%64); got[i] != want {
				t.Fatalf("helpers: out[%d] = %v, want %v", i, got[i], want)
			}
		}
		if got := toSlice(t, hsums); !slices.Equal(got, []int32{2016, 2016}) {
			t.Errorf("helpers: sums %v, want [2016 2016]", got)
		}
		cells := kernelOf(t, m, "cells")
		x := newNdarray[float32](t, p, 200)
		out := newNdarray[cell](t, p, 4)
		check(t, cells.Launch(x, out))
		want := []cell{{128, 64}, {128, 64}, {128, 64}, {16, 64}}
		if got := toSlice(t, out); !slices.Equal(got, want) {
			t.Errorf("cells: %v, want %v", got, want)
		}
	})
}

// The rules of block loops are positioned errors, in the user's terms.
func TestBlocksErrors(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	head := "package k\n\nimport \"github.com/quadrants-go/qd\"\n\n//qd:kernel\nfunc k(x []float32, n int) {\n"
	cases := []struct{ name, body, want string }{
		{"blocks in if", "if n > 0 {\nfor b := range qd.Blocks(n, 32) {\n_ = b.Index()\n}\n}\n", "8:1: kernel k: a qd.Blocks loop must be a top-level statement"},
		{"nested blocks", "for b := range qd.Blocks(n, 32) {\n_ = b.Index()\nfor c := range qd.Blocks(n, 32) {\n_ = c.Index()\n}\n}\n", "9:1: kernel k: qd.Blocks loops do not nest"},
		{"threads outside", "for i := range n {\n_ = i\n}\n", ""},
		{"size too big", "for b := range qd.Blocks(n, 2048) {\n_ = b.Index()\n}\n", "block size 2048 is outside 1..1024"},
		{"size from memory", "for b := range qd.Blocks(n, int(x[0])) {\n_ = b.Index()\n}\n", "must be a constant or computed from scalar parameters"},
		{"store at block level", "for b := range qd.Blocks(n, 32) {\nx[b.Index()] = 1\n}\n", "8:1: kernel k: a store at the level of a qd.Blocks loop"},
		{"shared in thread loop", "for b := range qd.Blocks(n, 32) {\nfor t := range b.Threads() {\ns := qd.Shared[[32]float32]()\ns[t] = 1\n}\n}\n", "qd.Shared is a statement of the block"},
		{"shared not array", "for b := range qd.Blocks(n, 32) {\n_ = b.Index()\ns := qd.Shared[float32]()\n_ = s\n}\n", "qd.Shared takes an array type"},
		{"shared too big", "for b := range qd.Blocks(n, 32) {\n_ = b.Index()\ns := qd.Shared[[20000]float32]()\n_ = s\n}\n", "a block has at most 49152"},
		{"per-thread other index", "for b := range qd.Blocks(n, 32) {\nv := qd.NewPerThread[float32](b)\nfor t := range b.Threads() {\nv[t] = 1\nx[t] = v[0]\n}\n}\n", "index v with the thread loop's variable"},
		{"per-thread at block level", "for b := range qd.Blocks(n, 32) {\nv := qd.NewPerThread[float32](b)\ny := v[0]\n_ = y\n}\n", "per-thread value v is read or written as v[t] inside a thread loop"},
		{"thread assigns uniform", "for b := range qd.Blocks(n, 32) {\ns := float32(0)\nfor t := range b.Threads() {\ns = x[t]\n}\nx[0] = s\n}\n", "thread loop assigns \"s\""},
		{"sum in thread loop", "for b := range qd.Blocks(n, 32) {\nv := qd.NewPerThread[float32](b)\nfor t := range b.Threads() {\nx[t] = qd.BlockSum(b, v)\n}\n}\n", "qd.BlockSum is a statement of the block"},
		{"sum of non per-thread", "for b := range qd.Blocks(n, 32) {\ns := qd.BlockSum(b, qd.PerThread[float32](nil))\n_ = s\n}\n", "is not one"},
		{"nested threads", "for b := range qd.Blocks(n, 32) {\nfor t := range b.Threads() {\nfor u := range b.Threads() {\nx[t+u] = 1\n}\n}\n}\n", "thread loops do not nest"},
		{"parallel loop in block", "for b := range qd.Blocks(n, 32) {\n_ = b.Index()\nfor i := range n {\nx[i] = 1\n}\n}\n", "loops there run alike in every thread"},
		{"block escapes", "for b := range qd.Blocks(n, 32) {\nc := b\n_ = c\n}\n", "is a qd.Block"},
		{"two per-thread values at once", "for b := range qd.Blocks(n, 32) {\nv, w := qd.NewPerThread[float32](b), qd.NewPerThread[int32](b)\nfor t := range b.Threads() {\nv[t], w[t] = x[t], 1\n}\nfor t := range b.Threads() {\nx[t] = v[t] + float32(w[t])\n}\n}\n", ""},
		{"per-thread beside a value", "for b := range qd.Blocks(n, 32) {\nv, k := qd.NewPerThread[float32](b), 2\nfor t := range b.Threads() {\nv[t] = x[t]\nx[t] = v[t] * float32(k)\n}\n}\n", "8:9: kernel k: assign qd.NewPerThread[float32] to a variable of its own (x := qd.NewPerThread[float32](b)), not in one statement with other values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(p, head+c.body+"}\n")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want == "":
			case err == nil:
				t.Fatalf("compiled; want an error with %q", c.want)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("error:\n%v\nwant it to contain %q", err, c.want)
			case c.name == "per-thread beside a value" && strings.Count(err.Error(), "kernel k:") > 1:
				t.Errorf("one mistake, several errors (a cascade):\n%v", err)
			}
		})
	}
}
