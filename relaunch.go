package qd

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
)

// Relaunching with the same arguments.
//
// Programs launch a kernel with the same arguments again and again (the
// step of a time loop, a benchmark). When the backend's launch holds
// nothing but its packed arguments (backend.Reusable: GPU kernels without
// temporaries or index checks), a kernel keeps its last such launch, a
// launchMemo, and a later launch whose arguments are the same (the same
// Go types, the same scalar bits, the same Ndarrays) enqueues it again:
// no bind, no pack, no launch block from the pool. It still pins its
// arrays, checks their zero fill, and notes their use as every launch
// does. Anything else (other arguments, a capture or a trace under way, a
// context, stream-parallel groups) takes the general path, which then
// keeps its own launch in the memo. A kernel makes one memo at most, so a
// launch allocates nothing. TestRelaunch covers the cases.

// memoSlot holds a kernel's memo. A kernel makes one memo at most (claim),
// and one launch at a time holds it: take lends it out, give hands it
// back, and drop forgets it when its launch failed (the kernel may then
// make another).
type memoSlot struct {
	m    atomic.Pointer[launchMemo]
	made atomic.Bool // the memo exists
}

func (ms *memoSlot) take() *launchMemo  { return ms.m.Swap(nil) }
func (ms *memoSlot) give(m *launchMemo) { ms.m.Store(m) }
func (ms *memoSlot) drop()              { ms.made.Store(false) }

// claim reports whether the caller may make the kernel's memo: none
// exists yet.
func (ms *memoSlot) claim() bool { return ms.made.CompareAndSwap(false, true) }

// launchMemo is a kernel's launch that can be enqueued again, and the
// arguments it was packed for, under the kernel's argSig.
type launchMemo struct {
	l       backend.Launch
	bits    []uint64  // per argument: a scalar's bits, 0 for an array
	cores   []*ndCore // per argument: an array's core
	scratch []uint64  // a launch's scalar bits, to compare with bits
}

// relaunchable reports whether a launch may use or make the memo: no
// context, no capture or trace anywhere in the Program, one group, and not
// the built-in fill kernel (whose launch marks its array filled).
func (kc *kernelCore) relaunchable(ctx context.Context) bool {
	p := kc.p
	return ctx == nil && kc.plan.Groups <= 1 && !kc.fills && p.ncap.Load() == 0 && p.tracer.Load() == nil
}

// relaunch enqueues mm's launch on s if args are the arguments it was
// packed for. ok false means it did nothing and mm is unchanged.
func (kc *kernelCore) relaunch(mm *launchMemo, sig *argSig, s *streamCore, args []any) (ok bool, err error) {
	if !sig.matches(args) {
		return false, nil
	}
	sig.readScalars(args, mm.scratch)
	for i, b := range mm.bits {
		if mm.scratch[i] != b { // 0 in both for arrays
			return false, nil
		}
	}
	for _, sa := range sig.arrays {
		h := (*ndHandle)(efaceOf(&args[sa.index]).data)
		if h == nil || h.c != mm.cores[sa.index] {
			return false, nil
		}
	}
	// As bind and zeroArrays: pin, so that a Close waits for the enqueue,
	// and order the launch after the array's zero fill ([NewNdarrayOn]'s,
	// which a launch on its own stream finds in progress). Failing either,
	// the general path redoes it and reports the error.
	for j, sa := range sig.arrays {
		core := mm.cores[sa.index]
		pinned := core.pin()
		if !pinned || (core.st.zero.state.Load() != zeroDone && core.st.zeroed(s, false) != nil) {
			if pinned {
				core.unpin()
			}
			for _, prev := range sig.arrays[:j] {
				mm.cores[prev.index].unpin()
			}
			return false, nil
		}
	}
	for i := range kc.plan.Tasks {
		if err = mm.l.Run(i, s.b); err != nil {
			err = fmt.Errorf("qd: kernel %s: %w", kc.name, err)
			break
		}
	}
	for _, sa := range sig.arrays {
		core := mm.cores[sa.index]
		core.noteUse(s)
		core.unpin()
	}
	return true, err
}

// remember keeps l, just enqueued with the arguments fast-bound in c, as
// the kernel's memo, in mm (the memo this launch took, or nil: then a new
// one, the kernel's first). It reports whether it kept l, which the caller
// then does not End; mm's earlier launch is ended on s.
func (kc *kernelCore) remember(mm *launchMemo, l backend.Launch, cl *call, sig *argSig, s *streamCore) (*launchMemo, bool) {
	r, ok := l.(backend.Reusable)
	if !ok || !r.Reusable() {
		return mm, false
	}
	n := len(sig.types)
	if mm == nil {
		if !kc.memo.claim() {
			return nil, false // another launch holds the kernel's memo
		}
		mm = &launchMemo{bits: make([]uint64, n), cores: make([]*ndCore, n), scratch: make([]uint64, n)}
	} else if mm.l != nil {
		mm.l.End(s.b) // a reusable launch holds nothing: End cannot fail
	}
	mm.l = l
	copy(mm.bits, cl.b.Scalars[:n])
	clear(mm.cores)
	for j, sa := range sig.arrays {
		mm.cores[sa.index] = cl.arrays[j]
	}
	return mm, true
}
