package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// members is the lanes of s in a batch of n lanes, by definition.
func members(s laneSet, n int) []bool {
	in := make([]bool, n)
	for k := range in {
		in[k] = (s.lo <= k && k < s.hi) != s.inv
	}
	return in
}

// representable reports whether a lane membership is one run or all lanes
// but one run, the only sets a laneSet holds.
func representable(in []bool) bool {
	runs := 0
	for k, b := range in {
		if b && (k == 0 || !in[k-1]) {
			runs++
		}
	}
	return runs <= 1 || runs == 2 && in[0] && in[len(in)-1]
}

// TestLaneSetAlgebra checks runs, not and intersect against lane-by-lane
// membership for every small lane set.
func TestLaneSetAlgebra(t *testing.T) {
	for n := range 7 {
		var sets []laneSet
		for lo := -1; lo <= n+1; lo++ {
			for hi := -1; hi <= n+1; hi++ {
				sets = append(sets, laneSet{lo: lo, hi: hi}, laneSet{lo: lo, hi: hi, inv: true})
			}
		}
		for _, a := range sets {
			ma := members(a, n)
			r, k := a.runs(n)
			got := make([]bool, n)
			for i, x := range r[:k] {
				if x.lo >= x.hi || x.lo < 0 || x.hi > n || i > 0 && r[i-1].hi >= x.lo {
					t.Fatalf("n=%d %+v: runs %v are not sorted, disjoint and non-empty", n, a, r[:k])
				}
				for l := x.lo; l < x.hi; l++ {
					got[l] = true
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(ma) {
				t.Fatalf("n=%d %+v: runs %v, members %v", n, a, r[:k], ma)
			}
			if fmt.Sprint(members(a.not(), n)) == fmt.Sprint(ma) && n > 0 {
				t.Fatalf("n=%d %+v: not() has the same members", n, a)
			}
			// activeIn, for the all-lanes mask and for lists with holes.
			iota := make([]int32, n)
			for k := range iota {
				iota[k] = int32(k)
			}
			masks := []mask{{idx: iota, all: true}, {}}
			for bits := range 1 << n {
				var l []int32
				for k := range n {
					if bits>>k&1 != 0 {
						l = append(l, int32(k))
					}
				}
				masks = append(masks, mask{idx: l})
			}
			for _, m := range masks {
				want := false
				for _, k := range m.idx {
					want = want || ma[k]
				}
				if got := activeIn(m, a, n); got != want {
					t.Fatalf("n=%d: activeIn(%v, %+v) = %v, want %v", n, m, a, got, want)
				}
			}
			for _, b := range sets {
				mb := members(b, n)
				want := make([]bool, n)
				for l := range want {
					want[l] = ma[l] && mb[l]
				}
				s, ok := intersect(a, b, n)
				if ok != representable(want) {
					t.Fatalf("n=%d %+v ∩ %+v: ok=%v, want %v (%v)", n, a, b, ok, !ok, want)
				}
				if ok && fmt.Sprint(members(s, n)) != fmt.Sprint(want) {
					t.Fatalf("n=%d %+v ∩ %+v = %+v, members %v, want %v", n, a, b, s, members(s, n), want)
				}
			}
		}
	}
}

// condGen makes random conditions over the innermost index j, comparisons
// with uniform values joined by &&, || and !, together with their
// plain-Go meaning.
type condGen struct {
	r *rand.Rand
	j *ir.Var
	u *ir.Param // a uniform i64 scalar
}

func (g *condGen) cond(depth int) (ir.Expr, func(j, u int64) bool) {
	if depth <= 0 || g.r.IntN(3) == 0 {
		ops := []ir.BinOp{ir.Lt, ir.Le, ir.Gt, ir.Ge, ir.Eq, ir.Ne}
		op := ops[g.r.IntN(len(ops))]
		off := int64(g.r.IntN(9) - 4)
		k := int64(g.r.IntN(40) - 5)
		lhs := ir.Op(ir.Add, ir.Ref(g.j), ir.I64c(off))
		var rhs ir.Expr = ir.I64c(k)
		useU := g.r.IntN(2) == 0
		if useU {
			rhs = ir.Op(ir.Sub, ir.P(g.u), ir.I64c(k))
		}
		flip := g.r.IntN(2) == 0
		e := ir.Op(op, lhs, rhs)
		if flip {
			e = ir.Op(op, rhs, lhs)
		}
		return e, func(j, u int64) bool {
			x, y := j+off, k
			if useU {
				y = u - k
			}
			if flip {
				x, y = y, x
			}
			return cmpRef(op, x, y)
		}
	}
	switch g.r.IntN(3) {
	case 0:
		x, fx := g.cond(depth - 1)
		return ir.Un(ir.Not, x), func(j, u int64) bool { return !fx(j, u) }
	case 1:
		x, fx := g.cond(depth - 1)
		y, fy := g.cond(depth - 1)
		return ir.Op(ir.LAnd, x, y), func(j, u int64) bool { return fx(j, u) && fy(j, u) }
	}
	x, fx := g.cond(depth - 1)
	y, fy := g.cond(depth - 1)
	return ir.Op(ir.LOr, x, y), func(j, u int64) bool { return fx(j, u) || fy(j, u) }
}

// TestLaneSetKernels runs random nests of ifs on lane-set conditions, in
// 1-D batches and in 2-D row batches (where branches run as sub-batches),
// and compares every element with the conditions evaluated in Go. The
// else branch reads the element two to the left: a branch run on a lane
// it must not run on would read out of range at the start of a row.
func TestLaneSetKernels(t *testing.T) {
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 11))
		rows, m := 1+r.IntN(3), []int{1, 2, 20, 300, Batch + 40}[r.IntN(5)]
		b := ir.NewBuilder("sets")
		in, out, u := b.Array("in", ir.I64, 2), b.Array("out", ir.I64, 2), b.Scalar("u", ir.I64)
		var c1, c2 ir.Expr
		var f1, f2 func(j, u int64) bool
		b.Parallel2(ir.LenOf(out, 0), ir.LenOf(out, 1), func(i, j *ir.Var) {
			g := &condGen{r: r, j: j, u: u}
			c1, f1 = g.cond(3)
			c2, f2 = g.cond(2)
			I, J := ir.Ref(i), ir.Ref(j)
			b.If(c1, func() {
				b.If(c2, func() {
					b.Store(out, ir.Op(ir.Add, ir.Ld(in, I, J), ir.I64c(100)), I, J)
				}, func() {
					b.Store(out, ir.I64c(7), I, J)
				})
			}, func() {
				guard := ir.Op(ir.Ge, J, ir.I64c(2))
				b.If(guard, func() {
					b.Store(out, ir.Ld(in, I, ir.Op(ir.Sub, J, ir.I64c(2))), I, J)
				}, func() {
					b.Store(out, ir.I64c(-1), I, J)
				})
			})
		})
		p := compileKernel(t, b.Kernel())
		uv := int64(r.IntN(30))
		src := make([]int64, rows*m)
		for k := range src {
			src[k] = int64(k * 3)
		}
		for _, ch := range chunkings {
			got := make([]int64, rows*m)
			args := &Args{Scalars: []uint64{0, 0, uint64(uv)}, Arrays: []Array{arr(src, rows, m), arr(got, rows, m)}}
			if err := launch(p, args, ch.chunk, ch.workers); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, printKernel(b.Kernel()))
			}
			for i := range rows {
				for j := range m {
					var want int64
					switch {
					case f1(int64(j), uv) && f2(int64(j), uv):
						want = src[i*m+j] + 100
					case f1(int64(j), uv):
						want = 7
					case j >= 2:
						want = src[i*m+j-2]
					default:
						want = -1
					}
					if got[i*m+j] != want {
						t.Fatalf("seed %d, %d×%d, chunk %d: out[%d][%d] = %d, want %d\n%s",
							seed, rows, m, ch.chunk, i, j, got[i*m+j], want, printKernel(b.Kernel()))
					}
				}
			}
		}
	}
}

// TestHeatBorder is the demo's heat step: an if on the border whose else
// branch reads the four neighbours, out of range on the border lanes. The
// branches run as sub-batches of each row; no lane may read out of range.
func TestHeatBorder(t *testing.T) {
	b := ir.NewBuilder("heat")
	in, out := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	b.Parallel2(ir.LenOf(in, 0), ir.LenOf(in, 1), func(i, j *ir.Var) {
		I, J := ir.Ref(i), ir.Ref(j)
		one := ir.I64c(1)
		h := b.DeclZero("h", ir.F32)
		border := ir.Op(ir.LOr, ir.Op(ir.LOr, ir.Op(ir.LOr, ir.Op(ir.Eq, I, ir.I64c(0)), ir.Op(ir.Eq, J, ir.I64c(0))),
			ir.Op(ir.Eq, I, ir.Op(ir.Sub, ir.LenOf(in, 0), one))), ir.Op(ir.Eq, J, ir.Op(ir.Sub, ir.LenOf(in, 1), one)))
		b.If(border, func() {
			b.Assign(h, ir.Ld(in, I, J))
		}, func() {
			sum := ir.Op(ir.Add, ir.Op(ir.Add, ir.Ld(in, ir.Op(ir.Sub, I, one), J), ir.Ld(in, ir.Op(ir.Add, I, one), J)),
				ir.Op(ir.Add, ir.Ld(in, I, ir.Op(ir.Sub, J, one)), ir.Ld(in, I, ir.Op(ir.Add, J, one))))
			b.Assign(h, ir.Op(ir.Add, ir.Ld(in, I, J), ir.Op(ir.Mul, ir.F32c(0.2), ir.Op(ir.Sub, sum, ir.Op(ir.Mul, ir.F32c(4), ir.Ld(in, I, J))))))
		})
		b.Store(out, ir.Ref(h), I, J)
	})
	p := compileKernel(t, b.Kernel())
	for _, shape := range [][2]int{{1, 1}, {3, 3}, {2, 700}, {5, rowMin}, {40, 33}, {3, Batch + 2}} {
		n, m := shape[0], shape[1]
		src := make([]float32, n*m)
		for k := range src {
			src[k] = float32(k%17) * 0.25
		}
		want := make([]float32, n*m)
		for i := range n {
			for j := range m {
				c := src[i*m+j]
				if i == 0 || j == 0 || i == n-1 || j == m-1 {
					want[i*m+j] = c
					continue
				}
				want[i*m+j] = c + 0.2*((src[(i-1)*m+j]+src[(i+1)*m+j])+(src[i*m+j-1]+src[i*m+j+1])-4*c)
			}
		}
		for _, ch := range chunkings {
			got := make([]float32, n*m)
			if err := launch(p, &Args{Arrays: []Array{arr(src, n, m), arr(got, n, m)}}, ch.chunk, ch.workers); err != nil {
				t.Fatalf("%v chunk %d: %v", shape, ch.chunk, err)
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("%v chunk %d: out[%d][%d] = %v, want %v", shape, ch.chunk, k/m, k%m, got[k], want[k])
				}
			}
		}
	}
}
