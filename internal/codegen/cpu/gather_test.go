package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// The fused gathers and scatters (gather.go) against the same accesses in
// plain Go: an index in each of its integer types, in each dimension of a
// 2-D array, on every lane and under a mask, and the index error the
// general path reports.

// gatherKernel loads tab by idx[i] in dimension dim of a 2-D tab (the
// other index uniform, 1), or of a 1-D tab (dim -1), into out[i], on the
// lanes whose i%3 != 0 when masked; idx has type it.
func gatherKernel(it ir.Type, dim int, masked bool) *ir.Kernel {
	b := ir.NewBuilder("gather")
	dims := 2
	if dim < 0 {
		dims = 1
	}
	tab, idx, out := b.Array("tab", ir.F32, dims), b.Array("idx", it, 1), b.Array("out", ir.F32, 1)
	b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		v := ir.Ld(idx, ir.Ref(i))
		index := []ir.Expr{v}
		switch dim {
		case 0:
			index = []ir.Expr{v, ir.Conv(it, ir.I64c(1))}
		case 1:
			index = []ir.Expr{ir.Conv(it, ir.I64c(1)), v}
		}
		body := func() { b.Store(out, ir.Ld(tab, index...), ir.Ref(i)) }
		if masked {
			b.If(ir.Op(ir.Ne, ir.Op(ir.Rem, ir.Ref(i), ir.I64c(3)), ir.I64c(0)), body, nil)
		} else {
			body()
		}
	})
	return b.Kernel()
}

// scatterKernel is gatherKernel's store: tab[idx[i]] (in dimension dim) = x[i].
func scatterKernel(it ir.Type, dim int, masked bool) *ir.Kernel {
	b := ir.NewBuilder("scatter")
	dims := 2
	if dim < 0 {
		dims = 1
	}
	x, idx, tab := b.Array("x", ir.F32, 1), b.Array("idx", it, 1), b.Array("tab", ir.F32, dims)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := ir.Ld(idx, ir.Ref(i))
		index := []ir.Expr{v}
		switch dim {
		case 0:
			index = []ir.Expr{v, ir.Conv(it, ir.I64c(1))}
		case 1:
			index = []ir.Expr{ir.Conv(it, ir.I64c(1)), v}
		}
		body := func() { b.Store(tab, ir.Ld(x, ir.Ref(i)), index...) }
		if masked {
			b.If(ir.Op(ir.Ne, ir.Op(ir.Rem, ir.Ref(i), ir.I64c(3)), ir.I64c(0)), body, nil)
		} else {
			body()
		}
	})
	return b.Kernel()
}

// indexArg is the index array of n lanes, lane i holding perm(i) (as
// type it), with lane bad set to an out-of-range value when bad ≥ 0.
func indexArg(it ir.Type, n int, perm func(int) int, bad int) Array {
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(perm(i))
	}
	if bad >= 0 {
		vals[bad] = 1 << 20
	}
	switch it {
	case ir.I32:
		s := make([]int32, n)
		for i, v := range vals {
			s[i] = int32(v)
		}
		return arr(s)
	case ir.U32:
		s := make([]uint32, n)
		for i, v := range vals {
			s[i] = uint32(v)
		}
		return arr(s)
	case ir.U8:
		s := make([]uint8, n)
		for i, v := range vals {
			s[i] = uint8(v)
		}
		return arr(s)
	}
	return arr(vals)
}

func TestFusedGatherScatter(t *testing.T) {
	const side, n = 200, 1100 // more lanes than a batch; tab is side×side or side
	perm := func(i int) int { return (i*7 + 3) % side }
	for _, it := range []ir.Type{ir.I64, ir.I32, ir.U32, ir.U8} {
		for _, dim := range []int{-1, 0, 1} {
			for _, masked := range []bool{false, true} {
				name := fmt.Sprintf("%v_dim%d_masked%v", it, dim, masked)
				shape := []int{side, side}
				if dim < 0 {
					shape = []int{side}
				}
				at := func(i int) int { // tab's element of lane i
					switch dim {
					case 0:
						return perm(i)*side + 1
					case 1:
						return side + perm(i)
					}
					return perm(i)
				}
				active := func(i int) bool { return !masked || i%3 != 0 }
				t.Run("gather_"+name, func(t *testing.T) {
					p := compileKernel(t, gatherKernel(it, dim, masked))
					tab, out := make([]float32, side*side), make([]float32, n)
					for i := range tab {
						tab[i] = float32(i) + 0.5
					}
					a := &Args{Scalars: make([]uint64, 3), Arrays: []Array{arr(tab, shape...), indexArg(it, n, perm, -1), arr(out)}}
					if err := launch(p, a, 0, 1); err != nil {
						t.Fatal(err)
					}
					for i := range out {
						want := float32(0)
						if active(i) {
							want = tab[at(i)]
						}
						if out[i] != want {
							t.Fatalf("out[%d] = %v, want %v", i, out[i], want)
						}
					}
				})
				t.Run("scatter_"+name, func(t *testing.T) {
					p := compileKernel(t, scatterKernel(it, dim, masked))
					x, tab, want := make([]float32, n), make([]float32, side*side), make([]float32, side*side)
					for i := range x {
						x[i] = float32(i) + 0.25
						if active(i) {
							want[at(i)] = x[i] // the last lane to write wins
						}
					}
					a := &Args{Scalars: make([]uint64, 3), Arrays: []Array{arr(x), indexArg(it, n, perm, -1), arr(tab, shape...)}}
					if err := launch(p, a, 0, 1); err != nil {
						t.Fatal(err)
					}
					equal(t, "tab", tab, want)
				})
				if it == ir.U8 {
					continue // an 8-bit index cannot be out of range of 2^20
				}
				t.Run("error_"+name, func(t *testing.T) {
					bad := 700 // an active lane of the second batch
					d := dim
					if d < 0 {
						d = 0
					}
					want := fmt.Sprintf("index %d out of range [0:%d) in dimension %d of tab", 1<<20, side, d)
					for _, k := range []*ir.Kernel{gatherKernel(it, dim, masked), scatterKernel(it, dim, masked)} {
						p := compileKernel(t, k)
						tab, v := make([]float32, side*side), make([]float32, n)
						arrays := []Array{arr(tab, shape...), indexArg(it, n, perm, bad), arr(v)}
						if k.Name == "scatter" {
							arrays = []Array{arr(v), indexArg(it, n, perm, bad), arr(tab, shape...)}
						}
						err := launch(p, &Args{Scalars: make([]uint64, 3), Arrays: arrays}, 0, 1)
						if err == nil || !strings.Contains(err.Error(), want) {
							t.Errorf("%s: error %v, want %q", k.Name, err, want)
						}
					}
				})
			}
		}
	}
}

// privateAtomicKernel is a block kernel of blocks of 300 threads whose
// threads apply op with x[i] to bins[idx[i]] of a shared array of 8 bins
// (the old value to old[i] unless unused; with 3 in place of x[i] when
// three), then copy the bins to out[block][k].
func privateAtomicKernel(op ir.AtomicOp, typ ir.Type, unused, three bool) *ir.Kernel {
	b := ir.NewBuilder("private")
	x, idx, old, out := b.Array("x", typ, 1), b.Array("idx", ir.I32, 1), b.Array("old", typ, 1), b.Array("out", typ, 2)
	b.Blocks(ir.LenOf(out, 0), ir.I64c(300), func(blk *ir.Var) {
		bins := b.Shared("bins", typ, 8)
		b.Threads(func(t *ir.Var) {
			i := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(300)), ir.Ref(t))
			val := ir.Ld(x, i)
			if three {
				val = ir.IntC(typ, 3)
			}
			var e ir.Expr
			if op == ir.AtomicCAS {
				e = &ir.Atomic{Op: op, Array: bins, Index: []ir.Expr{ir.Ld(idx, i)}, Value: val, Compare: ir.Ld(x, ir.Op(ir.Rem, i, ir.I64c(7)))}
			} else {
				e = ir.AtomicE(op, bins, val, ir.Ld(idx, i))
			}
			if unused {
				b.Do(e)
			} else {
				b.Store(old, e, i)
			}
		})
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Lt, ir.Ref(t), ir.I64c(8)), func() {
				b.Store(out, ir.Ld(bins, ir.Ref(t)), ir.Ref(blk), ir.Ref(t))
			}, nil)
		})
	})
	return b.Kernel()
}

// TestPrivateAtomics: the atomics of a block on its shared arrays, run
// with plain loads and stores, give what the threads' atomics give in
// thread order.
func TestPrivateAtomics(t *testing.T) {
	const blocks, size = 3, 300
	n := blocks * size
	ops := []ir.AtomicOp{ir.AtomicAdd, ir.AtomicSub, ir.AtomicMin, ir.AtomicMax, ir.AtomicExchange, ir.AtomicCAS, ir.AtomicAnd, ir.AtomicOr, ir.AtomicXor}
	for _, op := range ops {
		for _, c := range []struct{ unused, three bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%v_unused%v_three%v", op, c.unused, c.three), func(t *testing.T) {
				unused := c.unused
				p := compileKernel(t, privateAtomicKernel(op, ir.I32, unused, c.three))
				x, idx := make([]int32, n), make([]int32, n)
				for i := range x {
					x[i], idx[i] = int32(i*37%101-50), int32(i*5%8)
					if c.three {
						x[i] = 3
					}
				}
				wantOld, wantOut := make([]int32, n), make([]int32, blocks*8)
				for blk := range blocks {
					bins := make([]int32, 8)
					for t := range size {
						i := blk*size + t
						b := &bins[idx[i]]
						wantOld[i] = *b
						switch op {
						case ir.AtomicAdd:
							*b += x[i]
						case ir.AtomicSub:
							*b -= x[i]
						case ir.AtomicMin:
							*b = min(*b, x[i])
						case ir.AtomicMax:
							*b = max(*b, x[i])
						case ir.AtomicExchange:
							*b = x[i]
						case ir.AtomicCAS:
							if cmp := x[i%7]; *b == cmp {
								*b = x[i]
							}
						case ir.AtomicAnd:
							*b &= x[i]
						case ir.AtomicOr:
							*b |= x[i]
						case ir.AtomicXor:
							*b ^= x[i]
						}
					}
					copy(wantOut[blk*8:], bins)
				}
				mk := func() (*Args, [2][]int32) {
					old, out := make([]int32, n), make([]int32, blocks*8)
					return &Args{Scalars: make([]uint64, 4), Arrays: []Array{arr(x), arr(idx), arr(old), arr(out, blocks, 8)}}, [2][]int32{old, out}
				}
				runBlockCase(t, p, mk, func(t *testing.T, got [2][]int32) {
					if !unused {
						equal(t, "old", got[0], wantOld)
					}
					equal(t, "out", got[1], wantOut)
				})
			})
		}
	}
}

// TestBitFieldIndex: an index that is a bit field of a vector, x>>s&m,
// x&m or x>>s (gather.go), loads, stores and adds to a block's shared
// array as the same expression in Go does, in each index type, with a
// constant count and a uniform one (cnt, which may reach the width: the
// general path then runs).
func TestBitFieldIndex(t *testing.T) {
	type field struct {
		name  string
		shift int64 // -1: none; -2: the parameter cnt
		mask  int64 // -1: none
	}
	fields := []field{{"x>>8&255", 8, 255}, {"x&127", -1, 127}, {"x>>24", 24, -1}, {"x>>cnt&15", -2, 15}, {"x>>cnt", -2, -1}}
	const n = 1000 // two batches of lanes, and a block's threads
	for _, it := range []ir.Type{ir.U32, ir.I32, ir.I64} {
		for _, fl := range fields {
			for _, cnt := range []uint32{3, 28, 40} {
				if fl.shift != -2 && cnt != 3 {
					continue
				}
				name := fmt.Sprintf("%v_%s_cnt%d", it, fl.name, cnt)
				// The index in IR over x[i], and in Go.
				index := func(b *ir.Builder, x, cntP *ir.Param, i ir.Expr) ir.Expr {
					e := ir.Ld(x, i)
					switch {
					case fl.shift >= 0:
						e = ir.Op(ir.Shr, e, ir.U32c(uint32(fl.shift)))
					case fl.shift == -2:
						e = ir.Op(ir.Shr, e, ir.P(cntP))
					}
					if fl.mask >= 0 {
						e = ir.Op(ir.And, e, ir.IntC(it, fl.mask))
					}
					return e
				}
				goIndex := func(x int64) int64 {
					s := uint64(fl.shift)
					if fl.shift == -2 {
						s = uint64(cnt)
					}
					switch it {
					case ir.U32:
						v := uint32(x)
						if fl.shift != -1 {
							v >>= s
						}
						if fl.mask >= 0 {
							v &= uint32(fl.mask)
						}
						return int64(v)
					case ir.I32:
						v := int32(x)
						if fl.shift != -1 {
							v >>= s
						}
						if fl.mask >= 0 {
							v &= int32(fl.mask)
						}
						return int64(v)
					}
					v := x
					if fl.shift != -1 {
						v >>= s
					}
					if fl.mask >= 0 {
						v &= fl.mask
					}
					return v
				}
				// Values whose index lands in [0, 256): non-negative for
				// the fields without a mask; negative ones elsewhere too.
				xs := make([]int64, n)
				for i := range xs {
					v := int64(i*2654435761) & 0x7fffffff
					if fl.mask >= 0 && i%5 == 0 && it != ir.U32 {
						v = -v
					}
					xs[i] = v
				}
				if fl.mask < 0 && fl.shift == -2 && cnt < 24 {
					continue // x>>3 of 32-bit values is past 256
				}
				xArr := func() Array {
					switch it {
					case ir.U32:
						s := make([]uint32, n)
						for i, v := range xs {
							s[i] = uint32(v)
						}
						return arr(s)
					case ir.I32:
						s := make([]int32, n)
						for i, v := range xs {
							s[i] = int32(v)
						}
						return arr(s)
					}
					return arr(xs)
				}
				tab := make([]float32, 256)
				for i := range tab {
					tab[i] = float32(i) + 0.5
				}
				t.Run("load_"+name, func(t *testing.T) {
					b := ir.NewBuilder("load")
					x, cntP, tb, outP := b.Array("x", it, 1), b.Scalar("cnt", ir.U32), b.Array("tab", ir.F32, 1), b.Array("out", ir.F32, 1)
					b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(outP, ir.Ld(tb, index(b, x, cntP, ir.Ref(i))), ir.Ref(i)) })
					p := compileKernel(t, b.Kernel())
					out := make([]float32, n)
					if err := launch(p, &Args{Scalars: []uint64{0, uint64(cnt), 0, 0}, Arrays: []Array{xArr(), {}, arr(tab), arr(out)}}, 0, 1); err != nil {
						t.Fatal(err)
					}
					for i := range out {
						if w := tab[goIndex(xs[i])]; out[i] != w {
							t.Fatalf("out[%d] = %v, want %v", i, out[i], w)
						}
					}
				})
				t.Run("store_"+name, func(t *testing.T) {
					b := ir.NewBuilder("store")
					x, cntP, tb := b.Array("x", it, 1), b.Scalar("cnt", ir.U32), b.Array("tab", ir.F32, 1)
					b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
						b.Store(tb, ir.Conv(ir.F32, ir.Ref(i)), index(b, x, cntP, ir.Ref(i)))
					})
					p := compileKernel(t, b.Kernel())
					got, want := make([]float32, 256), make([]float32, 256)
					for i := range xs {
						want[goIndex(xs[i])] = float32(i)
					}
					if err := launch(p, &Args{Scalars: []uint64{0, uint64(cnt), 0}, Arrays: []Array{xArr(), {}, arr(got)}}, 0, 1); err != nil {
						t.Fatal(err)
					}
					equal(t, "tab", got, want)
				})
				t.Run("add_"+name, func(t *testing.T) {
					b := ir.NewBuilder("add")
					x, cntP, out := b.Array("x", it, 1), b.Scalar("cnt", ir.U32), b.Array("out", ir.U32, 1)
					b.Blocks(ir.I64c(1), ir.I64c(n), func(*ir.Var) {
						bins := b.Shared("bins", ir.U32, 256)
						b.Threads(func(tv *ir.Var) { b.Do(ir.AtomicE(ir.AtomicAdd, bins, ir.U32c(1), index(b, x, cntP, ir.Ref(tv)))) })
						b.Threads(func(tv *ir.Var) {
							b.If(ir.Op(ir.Lt, ir.Ref(tv), ir.I64c(256)), func() { b.Store(out, ir.Ld(bins, ir.Ref(tv)), ir.Ref(tv)) }, nil)
						})
					})
					p := compileKernel(t, b.Kernel())
					got, want := make([]uint32, 256), make([]uint32, 256)
					for _, v := range xs {
						want[goIndex(v)]++
					}
					if err := launch(p, &Args{Scalars: []uint64{0, uint64(cnt), 0}, Arrays: []Array{xArr(), {}, arr(got)}}, 0, 1); err != nil {
						t.Fatal(err)
					}
					equal(t, "bins", got, want)
				})
			}
		}
	}
}
