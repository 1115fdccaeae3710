package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// blockCorpus are the block kernels the tests compile and run: the
// suite's (suitekernels.BlockKernels) and these, which add the collectives
// at constant sizes (one warp or less, partial warps, many warps) and of
// every numeric type, atomics of every kind on shared memory, a
// collective in a uniform loop that its result steers, a block task
// between serial tasks that reads their temporaries, and one in a
// stream-parallel group.
func blockCorpus() []*ir.Kernel {
	ks := suitekernels.BlockKernels()
	for _, size := range []int{1, 7, 100, 1024} {
		ks = append(ks, constCollectives(size, ir.I32))
	}
	for _, t := range []ir.Type{ir.F32, ir.F64, ir.I64, ir.I8, ir.U16} {
		ks = append(ks, constCollectives(100, t))
	}
	ks = append(ks, constCollectives(1, ir.U64))
	ks = append(ks, sharedAtomics(), halvings(), blockTemps(), blockGroups(), alignedShared())
	seen := map[string]int{}
	for _, k := range ks {
		// The suite's blockCollectives are one name for several types;
		// a unit's entries need names of their own.
		if seen[k.Name]++; seen[k.Name] > 1 {
			k.Name = fmt.Sprintf("%s_%d", k.Name, seen[k.Name])
		}
	}
	return ks
}

// constCollectives is suitekernels.BlockCollectives with a constant block
// size: per block of size threads over x, sums[b], mins[b] and maxs[b],
// and per element the exclusive and inclusive prefix sums of its block
// (ex, in). Threads past len(x) add 0 and compare x[0].
func constCollectives(size int, elem ir.Type) *ir.Kernel {
	b := ir.NewBuilder(fmt.Sprintf("constCollectives_%d_%v", size, elem))
	x := b.Array("x", elem, 1)
	sums, mins, maxs := b.Array("sums", elem, 1), b.Array("mins", elem, 1), b.Array("maxs", elem, 1)
	ex, in := b.Array("ex", elem, 1), b.Array("in", elem, 1)
	n := ir.LenOf(x, 0)
	sz := ir.I64c(int64(size))
	b.Blocks(ir.LenOf(sums, 0), sz, func(blk *ir.Var) {
		v := b.PerThread("v", elem)
		w := b.PerThread("w", elem)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), sz), ir.Ref(t)))
			b.Assign(w, ir.Ld(x, ir.I64c(0)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() {
				b.Assign(v, ir.Ld(x, ir.Ref(i)))
				b.Assign(w, ir.Ref(v))
			}, nil)
		})
		sum := b.BlockReduce(ir.Add, v)
		lo := b.BlockReduce(ir.Min, w)
		hi := b.BlockReduce(ir.Max, w)
		e := b.BlockScan(false, v)
		c := b.BlockScan(true, v)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), sz), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() {
				b.Store(ex, ir.Ref(e), ir.Ref(i))
				b.Store(in, ir.Ref(c), ir.Ref(i))
			}, nil)
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() {
				b.Store(sums, ir.Ref(sum), ir.Ref(blk))
				b.Store(mins, ir.Ref(lo), ir.Ref(blk))
				b.Store(maxs, ir.Ref(hi), ir.Ref(blk))
			}, nil)
		})
	})
	return b.Kernel()
}

// nAtomicOps is the number of atomic operations.
const nAtomicOps = int(ir.AtomicCAS - ir.AtomicAdd + 1)

// sharedAtomicTypes are the element types of sharedAtomics' arrays.
var sharedAtomicTypes = []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64}

// sharedAtomics applies every atomic operation to shared arrays of every
// type they take, from every thread of a block of 64, with the old value
// unused (the reduction form) and used (summed into a per-type total);
// out_T[b*8+k] is element k of the shared array of type T after the
// block, tot_T[b] the total of the old values. Element k takes operation
// k: add, sub, min, max, and, or, xor (integers), exchange, compare and
// swap (0 → t+1); floats skip the bitwise ones.
func sharedAtomics() *ir.Kernel {
	const size = 64
	b := ir.NewBuilder("sharedAtomics")
	var outs, tots []*ir.Param
	for _, t := range sharedAtomicTypes {
		outs = append(outs, b.Array("out_"+t.String(), t, 1))
		tots = append(tots, b.Array("tot_"+t.String(), t, 1))
	}
	b.Blocks(ir.LenOf(tots[0], 0), ir.I64c(size), func(blk *ir.Var) {
		var sh []*ir.Param
		for _, t := range sharedAtomicTypes {
			sh = append(sh, b.Shared("sh_"+t.String(), t, nAtomicOps))
		}
		b.Threads(func(t *ir.Var) {
			for i, et := range sharedAtomicTypes {
				val := ir.Conv(et, ir.Op(ir.Add, ir.Ref(t), ir.I64c(1)))
				tot := b.Decl("tot", ir.Zero(et))
				for k, op := range sharedAtomicOps(et) {
					e := &ir.Atomic{Op: op, Array: sh[i], Index: []ir.Expr{ir.I64c(int64(k))}, Value: val}
					if op == ir.AtomicCAS {
						e.Compare = ir.Zero(et)
					}
					if k%2 == 0 {
						b.Do(e)
					} else {
						b.Assign(tot, ir.Op(ir.Add, ir.Ref(tot), e))
					}
				}
				b.Do(ir.AtomicE(ir.AtomicAdd, tots[i], ir.Ref(tot), ir.Ref(blk)))
			}
		})
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Lt, ir.Ref(t), ir.I64c(int64(nAtomicOps))), func() {
				for i := range sharedAtomicTypes {
					b.Store(outs[i], ir.Ld(sh[i], ir.Ref(t)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(int64(nAtomicOps))), ir.Ref(t)))
				}
			}, nil)
		})
	})
	return b.Kernel()
}

// sharedAtomicOps are the atomic operations on elements of type t.
func sharedAtomicOps(t ir.Type) []ir.AtomicOp {
	var ops []ir.AtomicOp
	for op := ir.AtomicAdd; op <= ir.AtomicCAS; op++ {
		if t.IsFloat() && (op == ir.AtomicAnd || op == ir.AtomicOr || op == ir.AtomicXor) {
			continue
		}
		ops = append(ops, op)
	}
	return ops
}

// halvings: per block of 100 threads, each thread's value x[i] (int32,
// ≥ 0) is halved until the block's sum is 0; steps[b] is the number of
// halvings, a block-level loop whose condition is a BlockReduce's result:
// every thread must see the same sum, or they would part at a barrier.
func halvings() *ir.Kernel {
	const size = 100
	b := ir.NewBuilder("halvings")
	x := b.Array("x", ir.I32, 1)
	steps := b.Array("steps", ir.I32, 1)
	b.Blocks(ir.LenOf(steps, 0), ir.I64c(size), func(blk *ir.Var) {
		v := b.PerThread("v", ir.I32)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(size)), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), ir.LenOf(x, 0)), func() { b.Assign(v, ir.Ld(x, ir.Ref(i))) }, nil)
		})
		total := b.BlockReduce(ir.Add, v)
		n := b.Decl("n", ir.I32c(0))
		// At most 40 rounds: a wrong sum shows as a wrong count, not a hang.
		b.While(ir.Op(ir.LAnd, ir.Op(ir.Gt, ir.Ref(total), ir.I32c(0)), ir.Op(ir.Lt, ir.Ref(n), ir.I32c(40))), func() {
			b.Threads(func(*ir.Var) { b.Assign(v, ir.Op(ir.Div, ir.Ref(v), ir.I32c(2))) })
			again := b.BlockReduce(ir.Add, v)
			b.Assign(total, ir.Ref(again))
			b.Assign(n, ir.Op(ir.Add, ir.Ref(n), ir.I32c(1)))
		})
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() { b.Store(steps, ir.Ref(n), ir.Ref(blk)) }, nil)
		})
	})
	return b.Kernel()
}

// blockTemps: a block task between serial tasks, reading a kernel-level
// local that they set (a per-launch temporary), with a size from a
// scalar: out[b*bs+t] = k*t + b, then out[0] += 1 serially.
func blockTemps() *ir.Kernel {
	b := ir.NewBuilder("blockTemps")
	out := b.Array("out", ir.I64, 1)
	bs := b.Scalar("bs", ir.I64)
	k := b.Decl("k", ir.Op(ir.Add, ir.Ld(out, ir.I64c(0)), ir.I64c(2)))
	b.Blocks(ir.Op(ir.Div, ir.LenOf(out, 0), ir.P(bs)), ir.P(bs), func(blk *ir.Var) {
		b.Threads(func(t *ir.Var) {
			b.Store(out, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(k), ir.Ref(t)), ir.Ref(blk)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.P(bs)), ir.Ref(t)))
		})
	})
	b.Store(out, ir.Op(ir.Add, ir.Ld(out, ir.I64c(0)), ir.I64c(1)), ir.I64c(0))
	return b.Kernel()
}

// blockGroups has block loops in two stream-parallel groups.
func blockGroups() *ir.Kernel {
	b := ir.NewBuilder("blockGroups")
	x := b.Array("x", ir.F32, 1)
	y := b.Array("y", ir.F32, 1)
	for _, a := range []*ir.Param{x, y} {
		b.Group(func() {
			b.Blocks(ir.I64c(4), ir.I64c(32), func(blk *ir.Var) {
				sh := b.Shared("sh", ir.F32, 32)
				b.Threads(func(t *ir.Var) { b.Store(sh, ir.Conv(ir.F32, ir.Ref(t)), ir.Ref(t)) })
				b.Threads(func(t *ir.Var) {
					b.Store(a, ir.Ld(sh, ir.Op(ir.Sub, ir.I64c(31), ir.Ref(t))), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(32)), ir.Ref(t)))
				})
			})
		})
	}
	return b.Kernel()
}

// alignedShared has a shared array of 3 bytes and one of 16-byte
// records (four float32s, aligned as a vector is), which must start at
// byte 16: thread t < 8 of a block of 8 writes record t with t, t+1,
// t+2, t+3 and then reads record 7-t's leaves into out[b*32+t*4+l].
func alignedShared() *ir.Kernel {
	b := ir.NewBuilder("alignedShared")
	out := b.Array("out", ir.F32, 1)
	b.Blocks(ir.Op(ir.Div, ir.LenOf(out, 0), ir.I64c(32)), ir.I64c(8), func(blk *ir.Var) {
		small := b.Shared("small", ir.U8, 3)
		recs := b.Shared("recs", ir.Invalid, 8)
		recs.Rec = &ir.Record{Name: "vec4", Size: 16, Align: 16}
		for l := range 4 {
			recs.Rec.Leaves = append(recs.Rec.Leaves, ir.Leaf{Path: fmt.Sprintf("[%d]", l), Type: ir.F32, Offset: 4 * l})
		}
		b.Threads(func(t *ir.Var) {
			b.Store(small, ir.One(ir.U8), ir.Op(ir.Rem, ir.Ref(t), ir.I64c(3)))
			for l := range 4 {
				b.StoreLeaf(recs, l, ir.Conv(ir.F32, ir.Op(ir.Add, ir.Ref(t), ir.I64c(int64(l)))), ir.Ref(t))
			}
		})
		b.Threads(func(t *ir.Var) {
			for l := range 4 {
				at := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(32)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(t), ir.I64c(4)), ir.I64c(int64(l))))
				b.Store(out, ir.LdLeaf(recs, l, ir.Op(ir.Sub, ir.I64c(7), ir.Ref(t))), at)
			}
		})
	})
	return b.Kernel()
}

// sharedBounds: with index checks, thread t of 32 stores t+1 at sh[t+1]:
// the last store is out of range, skipped and recorded at the site that
// names sh; out[b*32+t] = sh[t].
func sharedBounds() *ir.Kernel {
	b := ir.NewBuilder("sharedBounds")
	out := b.Array("out", ir.I32, 1)
	b.Blocks(ir.I64c(2), ir.I64c(32), func(blk *ir.Var) {
		sh := b.Shared("sh", ir.I32, 32)
		b.Threads(func(t *ir.Var) {
			b.Store(sh, ir.Conv(ir.I32, ir.Op(ir.Add, ir.Ref(t), ir.I64c(1))), ir.Op(ir.Add, ir.Ref(t), ir.I64c(1)))
		})
		b.Threads(func(t *ir.Var) {
			b.Store(out, ir.Ld(sh, ir.Ref(t)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(32)), ir.Ref(t)))
		})
	})
	return b.Kernel()
}
