package suitekernels

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

// Stream-parallel kernels: groups (qd.StreamParallel blocks), each run on a
// stream of its own.

// TwoGroups: group 1 sets a to v, group 2 sets b to 2v.
func TwoGroups() *ir.Kernel {
	b := ir.NewBuilder("two_groups")
	x := b.Array("a", ir.F32, 1)
	y := b.Array("b", ir.F32, 1)
	v := b.Scalar("v", ir.F32)
	b.Group(func() {
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.P(v), ir.Ref(i)) })
	})
	b.Group(func() {
		b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) { b.Store(y, ir.Op(ir.Mul, ir.F32c(2), ir.P(v)), ir.Ref(i)) })
	})
	return b.Kernel()
}

// LoopsInGroups ("groups"): the first group sets a to 1, then adds 1 to it,
// in two loops that must run in order; the second sets b to 10.
func LoopsInGroups() *ir.Kernel {
	b := ir.NewBuilder("groups")
	xa := b.Array("a", ir.F32, 1)
	xb := b.Array("b", ir.F32, 1)
	b.Group(func() {
		b.Parallel(ir.LenOf(xa, 0), func(i *ir.Var) { b.Store(xa, ir.F32c(1), ir.Ref(i)) })
		b.Parallel(ir.LenOf(xa, 0), func(i *ir.Var) {
			b.Store(xa, ir.Op(ir.Add, ir.Ld(xa, ir.Ref(i)), ir.F32c(1)), ir.Ref(i))
		})
	})
	b.Group(func() {
		b.Parallel(ir.LenOf(xb, 0), func(i *ir.Var) { b.Store(xb, ir.F32c(10), ir.Ref(i)) })
	})
	return b.Kernel()
}

// CopyGroups: two groups copy src, one to d1 and one to d2.
func CopyGroups() *ir.Kernel {
	b := ir.NewBuilder("copy_groups")
	src := b.Array("src", ir.F32, 1)
	d1 := b.Array("d1", ir.F32, 1)
	d2 := b.Array("d2", ir.F32, 1)
	for _, d := range []*ir.Param{d1, d2} {
		b.Group(func() {
			b.Parallel(ir.LenOf(d, 0), func(i *ir.Var) { b.Store(d, ir.Ld(src, ir.Ref(i)), ir.Ref(i)) })
		})
	}
	return b.Kernel()
}

// Groups ("groups<g>") has g groups, group i one small parallel loop
// writing x[i] = i+1.
func Groups(g int) *ir.Kernel { return groups(fmt.Sprintf("groups%d", g), g) }

// ThreeGroups is Groups(3) named "three_groups".
func ThreeGroups() *ir.Kernel { return groups("three_groups", 3) }

func groups(name string, g int) *ir.Kernel {
	b := ir.NewBuilder(name)
	x := b.Array("x", ir.F32, 1)
	for i := range g {
		b.Group(func() {
			b.Parallel(ir.I64c(1), func(_ *ir.Var) { b.Store(x, ir.F32c(float32(i+1)), ir.I64c(int64(i))) })
		})
	}
	return b.Kernel()
}

// RendezvousGroups has g groups, group i spinning until every other group
// has raised its flag.
func RendezvousGroups(g int) *ir.Kernel {
	b := ir.NewBuilder("rendezvous_groups")
	flags := b.Array("flags", ir.I32, 1)
	seen := b.Array("seen", ir.I32, 1)
	iters := b.Scalar("iters", ir.I64)
	for i := range g {
		b.Group(func() {
			b.Parallel(ir.I64c(1), func(_ *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), ir.I64c(int64(i))))
				count := b.Decl("count", ir.I32c(0))
				b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
					b.Assign(count, ir.I32c(0))
					b.ForRange("o", ir.I64c(int64(g)), func(o *ir.Var) {
						b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), ir.Ref(o)), ir.I32c(0)), func() {
							b.Assign(count, ir.Op(ir.Add, ir.Ref(count), ir.I32c(1)))
						}, nil)
					})
					b.If(ir.Op(ir.Eq, ir.Ref(count), ir.I32c(int32(g))), func() { b.Break() }, nil)
				})
				b.Store(seen, ir.Ref(count), ir.I64c(int64(i)))
			})
		})
	}
	return b.Kernel()
}

// BadGroup: two groups write x[0] and x[99]; launched on an x shorter than
// 100, the second group's write is out of range.
func BadGroup() *ir.Kernel {
	b := ir.NewBuilder("bad_group")
	x := b.Array("x", ir.F32, 1)
	b.Group(func() { b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.I64c(0)) }) })
	b.Group(func() { b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.I64c(99)) }) })
	return b.Kernel()
}
