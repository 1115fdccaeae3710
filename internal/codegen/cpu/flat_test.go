package cpu

import (
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestFlatAccess: short rows run as flat batches; out[i][j] = in[i][j]*2+1
// indexes both arrays by the loop's own indices. The loop runs over the
// range given by the scalars (not the arrays' shapes), so that arrays
// matching the range (contiguous across rows), arrays with longer rows or
// more rows (the general path), and arrays too small (an index error,
// reported like the general path's) all occur.
func TestFlatAccess(t *testing.T) {
	for _, dims := range []int{2, 3} {
		b := ir.NewBuilder("flat")
		in, out := b.Array("in", ir.F32, dims), b.Array("out", ir.F32, dims)
		ext := make([]ir.Expr, dims)
		for d := range dims {
			ext[d] = ir.P(b.Scalar(fmt.Sprintf("n%d", d), ir.I64))
		}
		b.ParallelN(ext, func(v []*ir.Var) {
			idx := make([]ir.Expr, dims)
			for d, x := range v {
				idx[d] = ir.Ref(x)
			}
			b.Store(out, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ld(in, idx...), ir.F32c(2)), ir.F32c(1)), idx...)
		})
		p := compileKernel(t, b.Kernel())
		type tc struct {
			rng, inShape, outShape []int
			err                    string
		}
		var cases []tc
		if dims == 2 {
			cases = []tc{
				{[]int{1000, 3}, []int{1000, 3}, []int{1000, 3}, ""},
				{[]int{7, 1}, []int{7, 1}, []int{7, 1}, ""},
				{[]int{300, 3}, []int{301, 3}, []int{300, 4}, ""}, // more rows; longer rows
				{[]int{300, 3}, []int{299, 3}, []int{300, 3}, "kernel flat: index 299 out of range [0:299) in dimension 0 of in"},
				{[]int{300, 3}, []int{300, 2}, []int{300, 3}, "kernel flat: index 2 out of range [0:2) in dimension 1 of in"},
			}
		} else {
			cases = []tc{
				{[]int{200, 2, 3}, []int{200, 2, 3}, []int{200, 2, 3}, ""},
				{[]int{50, 2, 3}, []int{50, 3, 3}, []int{51, 2, 3}, ""},
				{[]int{50, 2, 3}, []int{50, 2, 3}, []int{49, 2, 3}, "kernel flat: index 49 out of range [0:49) in dimension 0 of out"},
			}
		}
		for _, c := range cases {
			size := func(s []int) int {
				n := 1
				for _, x := range s {
					n *= x
				}
				return n
			}
			src, got := make([]float32, size(c.inShape)), make([]float32, size(c.outShape))
			for k := range src {
				src[k] = float32(k)
			}
			scal := make([]uint64, len(b.Kernel().Params))
			for d := range dims {
				scal[2+d] = uint64(c.rng[d])
			}
			for _, ch := range chunkings {
				clear(got)
				err := launch(p, &Args{Scalars: scal, Arrays: []Array{arr(src, c.inShape...), arr(got, c.outShape...)}}, ch.chunk, ch.workers)
				if c.err != "" {
					wantErr(t, err, c.err)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				// Every point of the range, at its place in each array.
				for flat := range size(c.rng) {
					ix, rem := make([]int, dims), flat
					for d := dims - 1; d >= 0; d-- {
						ix[d], rem = rem%c.rng[d], rem/c.rng[d]
					}
					at := func(shape []int) int {
						o := 0
						for d := range dims {
							o = o*shape[d] + ix[d]
						}
						return o
					}
					if want := src[at(c.inShape)]*2 + 1; got[at(c.outShape)] != want {
						t.Fatalf("range %v in %v out %v chunk %d: out%v = %v, want %v", c.rng, c.inShape, c.outShape, ch.chunk, ix, got[at(c.outShape)], want)
					}
				}
			}
		}
	}
}
