package qd

import (
	"context"
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// The launch path.
//
// Kernel.Launch, LaunchOn and LaunchContext (below) all run launch, which
// takes one of four routes, fastest first:
//
//  1. Rerun (relaunch.go). While a kernel is launched with the same
//     arguments again and again, and the backend says its last launch can
//     be enqueued again (backend.Reusable), that launch, the kernel's memo,
//     is enqueued again: no bind, no pack, no launch block.
//  2. Fast bind and the inline enqueue (fastbind.go, and launch below).
//     Arguments of the Go types an earlier launch taught (argSig) are read
//     with one type check each, and a launch with one group, outside every
//     capture and trace, is enqueued in launch itself; it may become the
//     kernel's memo.
//  3. General bind (args.go): every argument checked, with an error in the
//     user's terms for what is wrong; the first success teaches route 2.
//  4. enqueueCall: a traced launch, a launch with Go slice arguments
//     (hostslices.go), a stream-parallel launch (streamparallel.go), or a
//     launch in a capture (capture.go).
//
// What every route keeps:
//   - The launch holds its stream (streamCore.enter, gate.go) from reading
//     the stream's capture state to its last enqueue: it is wholly inside
//     the capture it read, or wholly outside every capture.
//   - Its arrays are pinned (bind, relaunch) before anything is enqueued,
//     so that a Close waits for the enqueue; their uses are noted only after
//     it, so that a host read in another goroutine cannot wait for, and
//     forget, a use whose work is not on the stream yet (tracker.go).
//   - Arrays from NewNdarrayOn get their zero fill before the first work
//     that reads them (zerofill.go).
//   - Every launch begun is ended (backend.Launch.End), also after a
//     failed Run; a memo's launch is ended when the memo is replaced.

// Launch runs the kernel on the Program's default stream. See LaunchOn.
func (k *Kernel) Launch(args ...any) error {
	return k.launch(nil, onDefault, args)
}

// onDefault stands for the Program's default stream in launch.
var onDefault = new(Stream)

// LaunchOn enqueues the kernel on stream s with the given arguments, one per
// parameter: for a scalar parameter a value of its exact Go type (an int32
// for an int parameter is refused, as in a Go call), or an untyped constant
// such as 2 or 0.5, which Go passes as an int or a float64 and LaunchOn
// converts as a Go call of the kernel would, so it must fit (2 for a
// float32, but not 1<<40 for an int32 nor 2.5 for an int); for an array
// parameter a *Ndarray of its element type and number of dimensions, or a
// Go slice of the parameter's type ([]T, [][]T, [][][]T; rectangular). Ndarray launches
// return without waiting for the kernel. Slices are copied to the device
// before the kernel and back after it, in the order of s, and LaunchOn then
// waits for the copy back, so the slices hold the results when it returns.
// Slices of one launch (and the rows of one multi-dimensional slice) must
// not overlap in memory when the kernel writes either of them: the copies
// would lose writes that natively show through both. Such a launch fails
// with an *ArgumentError naming both; slices the kernel only reads may
// overlap.
//
// Errors in arguments are *ArgumentError values naming the kernel and the
// parameter. Errors raised while the kernel runs (an index out of range on
// the CPU) are reported once, whichever stream-parallel group raised them:
// by the next Synchronize of s, by [Program.Synchronize], or by this call when it
// waits for slices. Streams that wait for s (WaitStream, WaitEvent) are
// ordered after the failed work but do not report its error.
func (k *Kernel) LaunchOn(s *Stream, args ...any) error {
	return k.launch(nil, s, args)
}

// LaunchContext is LaunchOn with a context that can stop the launch. When
// ctx is already done, nothing is enqueued and the error wraps ctx's
// (errors.Is(err, context.Canceled), or DeadlineExceeded).
//
// On the CPU, once ctx is done the launch's work stops: tasks not started
// are skipped, and a running task ends at its next check (every iteration
// of a loop in the kernel, and every 65,536 iterations of a parallel
// range), leaving its arrays partly written. The launch then fails like a
// kernel that raised an error: the next Synchronize of s (or this call,
// when it waits for slices) returns an error naming the kernel and
// wrapping context.Cause(ctx) (ctx.Err() unless a cause was given). Later
// work on s runs as usual.
//
// On a GPU the context is checked only before the launch is enqueued: a
// GPU kernel, once enqueued, runs to its end, and nothing short of ending
// the process stops it. Give kernels that may run long a bound: a maximum
// iteration count, or a flag array that their loops read with an atomic
// (qd.AtomicAdd(&stop[0], 0)) and that a one-line kernel launched on
// another stream sets. [Stream.SynchronizeContext] stops waiting for such work.
func (k *Kernel) LaunchContext(ctx context.Context, s *Stream, args ...any) error {
	if ctx == nil {
		return fmt.Errorf("%w: kernel %s: nil context", ErrInvalidArgument, k.Name())
	}
	if ctx.Err() != nil {
		return fmt.Errorf("qd: kernel %s: not launched: %w", k.Name(), context.Cause(ctx))
	}
	return k.launch(ctx, s, args)
}

// launch is the body of LaunchOn, Launch and LaunchContext. It is a
// method of the handle, so that LaunchOn is one call and inlines into its
// caller: every frame on the stack at the driver's call costs a
// mispredicted return after it (see the inline enqueue below).
func (k *Kernel) launch(ctx context.Context, s *Stream, args []any) error {
	kc, err := k.core(args)
	if err != nil {
		return err
	}
	if s == onDefault {
		s = kc.p.def
	}
	if s == nil || s.c == nil {
		return fmt.Errorf("%w: kernel %s: nil stream", ErrInvalidArgument, kc.name)
	}
	p := kc.p
	if s.c.p != p {
		return fmt.Errorf("%w: kernel %s: the stream belongs to another Program", ErrForeign, kc.name)
	}
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	if kc.closed.Load() {
		// A Close racing this launch is harmless: modules stay loaded until
		// the Program closes (the backends unload nothing earlier).
		return closedErr(kc.call)
	}
	// Hold the stream for the launch: its capture state stays as read here
	// until the last enqueue, and its Close waits for the launch. A launch
	// of several tasks holds it alone, so that no other goroutine's work
	// lands between its tasks.
	sc := s.c
	var cp *capture
	var ok bool
	if alone := len(kc.plan.Tasks) > 1; alone {
		cp, ok = sc.enterAlone()
		defer sc.leaveLaunch(ok, true)
	} else {
		cp, ok = sc.enter()
		defer sc.leaveLaunch(ok, false)
	}
	if !ok {
		return closedErr("stream")
	}

	// Route 1: the memo.
	var mm *launchMemo // the kernel's memo, taken by this launch
	plain := cp == nil && kc.relaunchable(ctx)
	if plain {
		if mm = kc.memo.take(); mm != nil {
			if ok, err := kc.relaunch(mm, kc.sig.Load(), sc, args); ok {
				if err != nil {
					// A failed launch is ended, as backend.Launch wants;
					// the kernel may make a memo again.
					mm.l.End(sc.b)
					kc.memo.drop()
					return err
				}
				kc.memo.give(mm)
				return nil
			}
			defer func() {
				if mm != nil {
					kc.memo.give(mm)
				}
			}()
		}
	}

	// Routes 2 and 3: bind.
	cl, _ := kc.calls.Get().(*call)
	if cl == nil {
		cl = new(call)
	}
	if cp != nil {
		// The context was checked before the launch; a graph's replays
		// run whatever becomes of it.
		ctx = nil
	}
	cl.b.Ctx = ctx
	sig := kc.sig.Load()
	fast := sig != nil && kc.bindFast(cl, sig, args)
	if !fast {
		if err = kc.bind(cl, args); err == nil && sig == nil {
			kc.learnSig(args)
		}
	}
	if err == nil && p.ncap.Load() > 0 {
		err = kc.checkCapture(cl, cp)
	}
	if err == nil {
		err = kc.zeroArrays(cl, sc)
	}
	if err == nil {
		if cp == nil && len(cl.hosts) == 0 && kc.plan.Groups <= 1 && p.tracer.Load() == nil {
			// Route 2's inline enqueue, here rather than through
			// enqueueCall: each frame between LaunchOn and the driver call
			// is a return after it, and the driver's deep call leaves the
			// processor's return predictions stale (about 30 ns a frame on
			// a GPU host). Tasks run as in runTasks with one group.
			var l backend.Launch
			if l, err = kc.mod.mod.Begin(sc.b, &cl.b); err != nil {
				err = fmt.Errorf("qd: kernel %s: %w", kc.name, err)
			} else {
				for i := range kc.plan.Tasks {
					if err = l.Run(i, sc.b); err != nil {
						err = fmt.Errorf("qd: kernel %s: %w", kc.name, err)
						break
					}
				}
				kept := false
				if err == nil && fast && plain {
					// Keep the launch for later launches with the same
					// arguments (relaunch.go).
					var m *launchMemo
					if m, kept = kc.remember(mm, l, cl, sig, sc); kept {
						kc.memo.give(m)
						mm = nil // given back
					}
				}
				if !kept {
					if err2 := l.End(sc.b); err2 != nil {
						err = errors.Join(err, err2)
					}
				}
			}
		} else {
			// Route 4.
			err = kc.enqueueCall(cl, sc, cp)
		}
		kc.zeroAfterLaunch(cl, err)
	}
	if cp != nil {
		kc.captured(cp, args)
		cp.launched(kc.name)
		sc.did()
		err = failed(cp, cp.refuseErr(kc.call, err))
	}
	// bind pinned the Ndarray arguments, so a Close waits for this launch
	// to be enqueued. Their uses are noted only now, after the enqueue, so
	// that a host read in another goroutine cannot wait, and forget the
	// use, before the work is on the stream. A failed launch may have
	// enqueued some tasks: its uses are noted too.
	for i, a := range cl.arrays {
		a.noteUse(sc)
		a.unpin()
		cl.arrays[i] = nil
	}
	cl.arrays = cl.arrays[:0]
	clear(cl.b.Arrays) // drop buffers (and wrapped slices) from the pool
	cl.b.Ctx = nil
	kc.calls.Put(cl)
	return err
}

// leaveLaunch ends a launch's hold of sc (taken alone or shared), if it
// took one.
func (sc *streamCore) leaveLaunch(held, alone bool) {
	switch {
	case !held:
	case alone:
		sc.exitAlone()
	default:
		sc.exit()
	}
}

// checkCapture refuses what a launch on a stream of capture cp (nil: a
// stream outside every capture) cannot do while captures are in
// progress: a slice argument in a capture, an array a capture allocated
// outside that capture.
func (kc *kernelCore) checkCapture(cl *call, cp *capture) error {
	if cp != nil && len(cl.hosts) > 0 {
		name := kc.plan.Kernel.Params[cl.hosts[0].param].Name
		return cp.refuse(kc.call, fmt.Sprintf("parameter %s is a Go slice: a graph cannot copy Go memory, and the launch would wait for the copy back; pass an *Ndarray (and a HostArray with CopyFromHostOn and CopyToHostOn for the host side)", name))
	}
	for _, a := range cl.arrays {
		if o := a.st.cap; o != nil && o != cp {
			return fmt.Errorf("qd: %w: kernel %s: an Ndarray argument was made by NewNdarrayOn inside the capture on %s: only that capture's streams may use it", ErrCapturing, kc.name, o.origin.describe())
		}
	}
	return nil
}

// captured records the Ndarray arguments of a launch in capture cp.
func (kc *kernelCore) captured(cp *capture, args []any) {
	for i, prm := range kc.plan.Kernel.Params {
		if i >= len(args) || prm.Dims == 0 {
			continue
		}
		if nd, ok := args[i].(ndArg); ok && nd.core() != nil {
			cp.uses(nd.core(), args[i], fmt.Sprintf("the Ndarray passed as %s to kernel %s", prm.Name, kc.name))
		}
	}
}

// enqueueCall enqueues a bound call on s (of capture cp, or nil), traced
// when a trace is on. In a capture its tasks' spans are captured where the
// backend can (each replay then traces them, [Graph.LaunchOn]), their launch
// numbered within the capture.
func (kc *kernelCore) enqueueCall(cl *call, s *streamCore, cp *capture) error {
	// The only cost of tracing when it is off: one atomic load.
	var lt launchTrace
	if tr := kc.p.acquireTracer(); tr != nil && (cp == nil || tr.tracesCaptures()) {
		id := uint64(0)
		if cp == nil {
			id = tr.launches.Add(1)
		} else {
			id = cp.tracedLaunch()
		}
		lt = launchTrace{tr: tr, id: id}
		defer tr.done()
	} else if tr != nil {
		tr.done()
	}
	if len(cl.hosts) > 0 {
		return kc.launchWithHostSlices(cl, s, lt)
	}
	return kc.enqueue(cl, s, cp, lt)
}

// launchTrace is a launch's trace: the tracer (nil when tracing is off)
// and the launch's number in the trace.
type launchTrace struct {
	tr *tracer
	id uint64
}

// enqueue runs the plan's tasks on s: tasks outside stream-parallel groups,
// and the first group's, on s itself; every other group on a pooled stream
// that first waits for an event recorded on s (fork), while s waits for an
// event recorded after each group (join). The host never blocks.
func (kc *kernelCore) enqueue(cl *call, s *streamCore, cp *capture, lt launchTrace) error {
	l, err := kc.mod.mod.Begin(s.b, &cl.b)
	if err != nil {
		return fmt.Errorf("qd: kernel %s: %w", kc.name, err)
	}
	err = kc.p.runTasks(kc, cl, l, s, cp, lt)
	if err2 := l.End(s.b); err2 != nil {
		err = errors.Join(err, err2)
	}
	return err
}

// run enqueues one task, bracketed by trace marks when tracing is on.
func (kc *kernelCore) run(l backend.Launch, task int, s *streamCore, lt launchTrace) error {
	if lt.tr != nil {
		return lt.tr.runTraced(kc, l, task, s, lt.id)
	}
	return runTask(l, task, s)
}

func runTask(l backend.Launch, task int, s *streamCore) error {
	return l.Run(task, s.b)
}
