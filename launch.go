package qd

import (
	"context"
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// launch is the body of LaunchOn, Launch and LaunchContext. It is a
// method of the handle, so that LaunchOn is one call and inlines into its
// caller: every frame on the stack at the driver's call costs a
// mispredicted return after it (see the common launch below).
func (k *Kernel) launch(ctx context.Context, s *Stream, args []any) error {
	kc, err := k.core()
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
		return closedErr("kernel " + kc.name)
	}
	// Hold the stream for the launch: its Close waits for launches in
	// flight, so it never destroys the stream under an enqueue.
	sc := s.c
	if !sc.hold() {
		return closedErr("stream")
	}
	defer sc.inflight.leave()
	var mm *launchMemo // the kernel's memo, taken by this launch
	plain := kc.relaunchable(ctx)
	if plain {
		if mm = kc.memo.Swap(nil); mm != nil {
			if ok, err := kc.relaunch(mm, kc.sig.Load(), sc, args); ok {
				if err != nil {
					// A failed launch is ended, as backend.Launch wants;
					// the kernel may make a memo again.
					mm.l.End(sc.b)
					kc.memoMade.Store(false)
					return err
				}
				kc.keep(mm)
				return nil
			}
			defer func() {
				if mm != nil {
					kc.keep(mm)
				}
			}()
		}
	}
	cl, _ := kc.calls.Get().(*call)
	if cl == nil {
		cl = new(call)
	}
	cp := sc.capturing()
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
			// The common launch, enqueued here rather than through
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
						kc.keep(m)
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
			err = kc.enqueueCall(cl, sc, cp)
		}
		kc.zeroAfterLaunch(cl, err)
	}
	if cp != nil {
		kc.captured(cp, args)
		cp.launched(kc.name)
		sc.did()
		err = failed(cp, cp.refuseErr("kernel "+kc.name, err))
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

// checkCapture refuses what a launch on a stream of capture cp (nil: a
// stream outside every capture) cannot do while captures are in
// progress: a slice argument in a capture, an array a capture allocated
// outside that capture.
func (kc *kernelCore) checkCapture(cl *call, cp *capture) error {
	if cp != nil && len(cl.hosts) > 0 {
		name := kc.plan.Kernel.Params[cl.hosts[0].param].Name
		return cp.refuse("kernel "+kc.name, fmt.Sprintf("parameter %s is a Go slice: a graph cannot copy Go memory, and the launch would wait for the copy back; pass an *Ndarray (and a HostArray with CopyFromHostOn and CopyToHostOn for the host side)", name))
	}
	for _, a := range cl.arrays {
		if o := a.st.cap; o != nil && o != cp {
			return fmt.Errorf("%w: kernel %s: an Ndarray argument was made by NewNdarrayOn inside the capture on %s: only that capture's streams may use it", ErrCapturing, kc.name, o.origin.describe())
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
// backend can (each replay then traces them, Graph.LaunchOn), their launch
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
	return kc.enqueue(cl, s, lt)
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
func (kc *kernelCore) enqueue(cl *call, s *streamCore, lt launchTrace) error {
	l, err := kc.mod.mod.Begin(s.b, &cl.b)
	if err != nil {
		return fmt.Errorf("qd: kernel %s: %w", kc.name, err)
	}
	err = kc.p.kc(kc, cl, l, s, lt)
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
