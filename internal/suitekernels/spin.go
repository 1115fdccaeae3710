package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// Kernels that spin: long kernels, rendezvous (bounded spins on flags that
// another kernel or group raises, which prove that two run at once) and
// kernels that never end.

// SlowWrite spins for iters steps of a linear congruential generator (kept
// in state[0] so it cannot be optimised away), then writes x[i] = v for
// every i: a long kernel whose writes land at its end.
func SlowWrite() *ir.Kernel {
	b := ir.NewBuilder("slow_write")
	x := b.Array("x", ir.F32, 1)
	v := b.Scalar("v", ir.F32)
	state := b.Array("state", ir.I64, 1)
	iters := b.Scalar("iters", ir.I64)
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		spinBody(b, state, iters)
		b.ForRange("j", ir.LenOf(x, 0), func(j *ir.Var) { b.Store(x, ir.P(v), ir.Ref(j)) })
	})
	return b.Kernel()
}

// SlowAdd spins for iters steps (as SlowWrite), then adds 1 to every
// element of x, serially: a long kernel whose reads and writes of x come
// at its end.
func SlowAdd() *ir.Kernel {
	b := ir.NewBuilder("slow_add")
	x := b.Array("x", ir.F32, 1)
	state := b.Array("state", ir.I64, 1)
	iters := b.Scalar("iters", ir.I64)
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		spinBody(b, state, iters)
		b.ForRange("j", ir.LenOf(x, 0), func(j *ir.Var) {
			b.Store(x, ir.Op(ir.Add, ir.Ld(x, ir.Ref(j)), ir.F32c(1)), ir.Ref(j))
		})
	})
	return b.Kernel()
}

// spinBody adds, to the current block of b, iters steps of a linear
// congruential generator whose end is stored in state[0], so that they
// cannot be optimised away.
func spinBody(b *ir.Builder, state, iters *ir.Param) {
	s := b.Decl("s", ir.I64c(1))
	b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
		b.Assign(s, ir.Op(ir.Rem, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(s), ir.I64c(1664525)), ir.I64c(1013904223)), ir.I64c(2147483647)))
	})
	b.Store(state, ir.Ref(s), ir.I64c(0))
}

// rendezvousBody adds, to the current block of b, one side of a
// rendezvous: raise flags[me], then spin (at most iters steps) until
// flags[other] is raised, and record in seen[me] whether it was. Both sides
// can see each other only if they run at the same time.
func rendezvousBody(b *ir.Builder, flags, seen *ir.Param, me, other, iters ir.Expr) {
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), me))
		found := b.Decl("found", ir.I32c(0))
		b.ForRange("n", iters, func(_ *ir.Var) {
			b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), other), ir.I32c(0)), func() {
				b.Assign(found, ir.I32c(1))
				b.Break()
			}, nil)
		})
		b.Store(seen, ir.Ref(found), me)
	})
}

// Rendezvous is one side of a rendezvous, the side chosen by me.
func Rendezvous() *ir.Kernel {
	b := ir.NewBuilder("rendezvous")
	flags := b.Array("flags", ir.I32, 1)
	seen := b.Array("seen", ir.I32, 1)
	me := b.Scalar("me", ir.I64)
	other := b.Scalar("other", ir.I64)
	iters := b.Scalar("iters", ir.I64)
	rendezvousBody(b, flags, seen, ir.P(me), ir.P(other), ir.P(iters))
	return b.Kernel()
}

// RendezvousAll: raise flags[me], spin until every flag is raised, store
// how many were seen.
func RendezvousAll() *ir.Kernel {
	b := ir.NewBuilder("rendezvous_all")
	flags := b.Array("flags", ir.I32, 1)
	seen := b.Array("seen", ir.I32, 1)
	me := b.Scalar("me", ir.I64)
	iters := b.Scalar("iters", ir.I64)
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), ir.P(me)))
		count := b.Decl("count", ir.I32c(0))
		b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
			b.Assign(count, ir.I32c(0))
			b.ForRange("o", ir.LenOf(flags, 0), func(o *ir.Var) {
				b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), ir.Ref(o)), ir.I32c(0)), func() {
					b.Assign(count, ir.Op(ir.Add, ir.Ref(count), ir.I32c(1)))
				}, nil)
			})
			b.If(ir.Op(ir.Eq, ir.Conv(ir.I64, ir.Ref(count)), ir.LenOf(flags, 0)), func() { b.Break() }, nil)
		})
		b.Store(seen, ir.Ref(count), ir.P(me))
	})
	return b.Kernel()
}

// Relay: raise mine[0], spin (at most iters polls) until other[0] is
// raised, and store in seen[0] whether it was.
func Relay() *ir.Kernel {
	b := ir.NewBuilder("relay_rendezvous")
	mine, other, seen := b.Array("mine", ir.I32, 1), b.Array("other", ir.I32, 1), b.Array("seen", ir.I32, 1)
	iters := b.Scalar("iters", ir.I64)
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		// An exchange, not an add: an add whose result is unused, on an
		// array the kernel never reads, is a reduction, which raises the
		// flag only after the loop (internal/lower/reduce.go).
		b.Do(ir.AtomicE(ir.AtomicExchange, mine, ir.I32c(1), ir.I64c(0)))
		found := b.Decl("found", ir.I32c(0))
		b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
			b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, other, ir.I32c(0), ir.I64c(0)), ir.I32c(0)), func() {
				b.Assign(found, ir.I32c(1))
				b.Break()
			}, nil)
		})
		b.Store(seen, ir.Ref(found), ir.I64c(0))
	})
	return b.Kernel()
}

// WaitFlag: one thread polls flag[0] (an atomic read) until it is
// non-zero, at most iters times, then writes 1 to out[0] (2 if it gave up):
// a kernel that can only finish early if something else runs meanwhile.
func WaitFlag() *ir.Kernel {
	b := ir.NewBuilder("wait_flag")
	flag, out := b.Array("flag", ir.I32, 1), b.Array("out", ir.I32, 1)
	iters := b.Scalar("iters", ir.I64)
	seen := b.Decl("seen", ir.BoolC(false))
	b.ForRange("k", ir.P(iters), func(*ir.Var) {
		b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flag, ir.I32c(0), ir.I64c(0)), ir.I32c(0)), func() {
			b.Assign(seen, ir.BoolC(true))
			b.Break()
		}, nil)
	})
	b.Store(out, ir.Sel(ir.Ref(seen), ir.I32c(1), ir.I32c(2)), ir.I64c(0))
	return b.Kernel()
}

// RunawayKinds are the kinds of Runaway.
var RunawayKinds = []string{"loop", "serial", "range"}

// Runaway raises started[0], then never ends: in a loop of its parallel
// body ("loop"), in a loop of a serial part ("serial"), or as a parallel
// loop of 2^50 short iterations ("range").
func Runaway(kind string) *ir.Kernel {
	b := ir.NewBuilder("runaway_" + kind)
	started := b.Array("started", ir.I32, 1)
	raise := func() { b.Do(ir.AtomicE(ir.AtomicAdd, started, ir.I32c(1), ir.I64c(0))) }
	spin := func() {
		b.While(ir.BoolC(true), func() { b.Do(ir.AtomicE(ir.AtomicAdd, started, ir.I32c(1), ir.I64c(1))) })
	}
	switch kind {
	case "loop":
		b.Parallel(ir.I64c(1), func(*ir.Var) { raise(); spin() })
	case "serial":
		raise()
		spin()
	case "range":
		b.Parallel(ir.I64c(1<<50), func(i *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(i), ir.I64c(0)), raise, nil)
		})
	}
	return b.Kernel()
}
