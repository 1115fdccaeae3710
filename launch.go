package qd

import (
	"context"
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// launch is the body of LaunchOn, Launch and LaunchContext. It is a
// method of the handle, so that LaunchOn is one call and inlines into its
// caller: every frame on the stack at the driver's call costs a
// mispredicted return after it (see the common launch below).
func (h *Kernel) launch(ctx context.Context, s *Stream, args []any) error {
	k, err := h.core()
	if err != nil {
		return err
	}
	if s == onDefault {
		s = k.p.def
	}
	if s == nil || s.c == nil {
		return fmt.Errorf("%w: kernel %s: nil stream", ErrInvalidArgument, k.name)
	}
	p := k.p
	if s.c.p != p {
		return fmt.Errorf("%w: kernel %s: the stream belongs to another Program", ErrForeign, k.name)
	}
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	if k.closed.Load() {
		// A Close racing this launch is harmless: modules stay loaded until
		// the Program closes (the backends unload nothing earlier).
		return closedErr("kernel " + k.name)
	}
	// Hold the stream for the launch: its Close waits for launches in
	// flight, so it never destroys the stream under an enqueue.
	sc := s.c
	if !sc.hold() {
		return closedErr("stream")
	}
	defer sc.inflight.leave()
	var mm *launchMemo // the kernel's memo, taken by this launch
	plain := k.relaunchable(ctx)
	if plain {
		if mm = k.memo.Swap(nil); mm != nil {
			if ok, err := k.relaunch(mm, k.sig.Load(), sc, args); ok {
				if err != nil {
					// A failed launch is ended, as backend.Launch wants;
					// the kernel may make a memo again.
					mm.l.End(sc.b)
					k.memoMade.Store(false)
					return err
				}
				k.keep(mm)
				return nil
			}
			defer func() {
				if mm != nil {
					k.keep(mm)
				}
			}()
		}
	}
	c, _ := k.calls.Get().(*call)
	if c == nil {
		c = new(call)
	}
	cp := sc.capturing()
	if cp != nil {
		// The context was checked before the launch; a graph's replays
		// run whatever becomes of it.
		ctx = nil
	}
	c.b.Ctx = ctx
	sig := k.sig.Load()
	fast := sig != nil && k.bindFast(c, sig, args)
	if !fast {
		if err = k.bind(c, args); err == nil && sig == nil {
			k.learnSig(args)
		}
	}
	if err == nil && p.ncap.Load() > 0 {
		err = k.checkCapture(c, cp)
	}
	if err == nil {
		err = k.zeroArrays(c, sc)
	}
	if err == nil {
		if cp == nil && len(c.hosts) == 0 && k.plan.Groups <= 1 && p.tracer.Load() == nil {
			// The common launch, enqueued here rather than through
			// enqueueCall: each frame between LaunchOn and the driver call
			// is a return after it, and the driver's deep call leaves the
			// processor's return predictions stale (about 30 ns a frame on
			// a GPU host). Tasks run as in runTasks with one group.
			var l backend.Launch
			if l, err = k.mod.mod.Begin(sc.b, &c.b); err != nil {
				err = fmt.Errorf("qd: kernel %s: %w", k.name, err)
			} else {
				for i := range k.plan.Tasks {
					if err = l.Run(i, sc.b); err != nil {
						err = fmt.Errorf("qd: kernel %s: %w", k.name, err)
						break
					}
				}
				kept := false
				if err == nil && fast && plain {
					// Keep the launch for later launches with the same
					// arguments (relaunch.go).
					var m *launchMemo
					if m, kept = k.remember(mm, l, c, sig, sc); kept {
						k.keep(m)
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
			err = k.enqueueCall(c, sc, cp)
		}
		k.zeroAfterLaunch(c, err)
	}
	if cp != nil {
		k.captured(cp, args)
		cp.launched(k.name)
		sc.did()
		err = failed(cp, cp.refuseErr("kernel "+k.name, err))
	}
	// bind pinned the Ndarray arguments, so a Close waits for this launch
	// to be enqueued. Their uses are noted only now, after the enqueue, so
	// that a host read in another goroutine cannot wait, and forget the
	// use, before the work is on the stream. A failed launch may have
	// enqueued some tasks: its uses are noted too.
	for i, a := range c.arrays {
		a.noteUse(sc)
		a.unpin()
		c.arrays[i] = nil
	}
	c.arrays = c.arrays[:0]
	clear(c.b.Arrays) // drop buffers (and wrapped slices) from the pool
	c.b.Ctx = nil
	k.calls.Put(c)
	return err
}

// checkCapture refuses what a launch on a stream of capture cp (nil: a
// stream outside every capture) cannot do while captures are in
// progress: a slice argument in a capture, an array a capture allocated
// outside that capture.
func (k *kernelCore) checkCapture(c *call, cp *capture) error {
	if cp != nil && len(c.hosts) > 0 {
		name := k.plan.Kernel.Params[c.hosts[0].param].Name
		return cp.refuse("kernel "+k.name, fmt.Sprintf("parameter %s is a Go slice: a graph cannot copy Go memory, and the launch would wait for the copy back; pass an *Ndarray (and a HostArray with CopyFromHostOn and CopyToHostOn for the host side)", name))
	}
	for _, a := range c.arrays {
		if o := a.st.cap; o != nil && o != cp {
			return fmt.Errorf("%w: kernel %s: an Ndarray argument was made by NewNdarrayOn inside the capture on %s: only that capture's streams may use it", ErrCapturing, k.name, o.origin.describe())
		}
	}
	return nil
}

// captured records the Ndarray arguments of a launch in capture cp.
func (k *kernelCore) captured(cp *capture, args []any) {
	for i, prm := range k.plan.Kernel.Params {
		if i >= len(args) || prm.Dims == 0 {
			continue
		}
		if nd, ok := args[i].(ndArg); ok && nd.core() != nil {
			cp.uses(nd.core(), args[i], fmt.Sprintf("the Ndarray passed as %s to kernel %s", prm.Name, k.name))
		}
	}
}

// enqueueCall enqueues a bound call on s (of capture cp, or nil), traced
// when a trace is on. In a capture its tasks' spans are captured where the
// backend can (each replay then traces them, Graph.LaunchOn), their launch
// numbered within the capture.
func (k *kernelCore) enqueueCall(c *call, s *streamCore, cp *capture) error {
	// The only cost of tracing when it is off: one atomic load.
	var lt launchTrace
	if tr := k.p.acquireTracer(); tr != nil && (cp == nil || tr.tracesCaptures()) {
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
	if len(c.hosts) > 0 {
		return k.launchWithHostSlices(c, s, lt)
	}
	return k.enqueue(c, s, lt)
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
func (k *kernelCore) enqueue(c *call, s *streamCore, lt launchTrace) error {
	l, err := k.mod.mod.Begin(s.b, &c.b)
	if err != nil {
		return fmt.Errorf("qd: kernel %s: %w", k.name, err)
	}
	err = k.p.runTasks(k, c, l, s, lt)
	if err2 := l.End(s.b); err2 != nil {
		err = errors.Join(err, err2)
	}
	return err
}

// run enqueues one task, bracketed by trace marks when tracing is on.
func (k *kernelCore) run(l backend.Launch, task int, s *streamCore, lt launchTrace) error {
	if lt.tr != nil {
		return lt.tr.runTraced(k, l, task, s, lt.id)
	}
	return runTask(l, task, s)
}

func (p *Program) runTasks(k *kernelCore, c *call, l backend.Launch, s *streamCore, lt launchTrace) error {
	tasks := k.plan.Tasks
	if k.plan.Groups <= 1 {
		for i := range tasks {
			if err := k.run(l, i, s, lt); err != nil {
				return fmt.Errorf("qd: kernel %s: %w", k.name, err)
			}
		}
		return nil
	}
	// Group g runs on streams[g-1]; group 1 on the launch stream itself.
	// The per-group scratch lives in the pooled call, so a stream-parallel
	// launch allocates nothing for it.
	c.streams = resize(c.streams, k.plan.Groups)
	streams := c.streams
	defer clear(streams)
	streams[0] = s
	// The groups' own streams and events fail without a task's name:
	// the error names the kernel and the step.
	fail := func(what string, err error) error {
		return fmt.Errorf("qd: kernel %s: stream-parallel %s: %w", k.name, what, err)
	}
	fork, err := p.evpool.Get()
	if err != nil {
		return fail("fork", err)
	}
	cp := s.capturing()
	defer p.putEvent(fork, cp)
	m := s.mark()
	if err := fork.Record(s.b); err != nil {
		return fail("fork", err)
	}
	var runErr error
	c.next = groupStarts(k, resize(c.next, k.plan.Groups))
	next := c.next
	for g := 1; g < len(streams); g++ {
		if next[g] >= len(tasks) || tasks[next[g]].Group != g+1 {
			continue // an empty group needs no stream
		}
		ps, err := p.pool.Get()
		if err != nil {
			runErr = fail("group stream", err)
			break
		}
		if m != nil {
			// The pooled stream joins the capture, to leave it with the
			// capture's other streams when the capture ends.
			runErr = p.admitWait(ps, m, "kernel "+k.name)
		}
		if runErr == nil {
			if err := ps.b.WaitEvent(fork); err != nil {
				runErr = fail("fork", err)
			}
		}
		if runErr != nil {
			// Not forked: nothing to join back.
			p.giveBackGroupStream(ps, cp)
			break
		}
		streams[g] = ps
	}
	if runErr == nil {
		// Breadth-first: the first task of every group, then the second...,
		// so that GPU hardware queues see independent work early.
		for more := true; more && runErr == nil; {
			more = false
			for g := range streams {
				i := next[g]
				if i >= len(tasks) || tasks[i].Group != g+1 {
					continue
				}
				more = true
				next[g]++
				if err := k.run(l, i, streams[g], lt); err != nil {
					runErr = fmt.Errorf("qd: kernel %s: %w", k.name, err)
					break
				}
			}
		}
	}
	// Join every borrowed stream, also after an error: the launch's
	// temporaries are released in the order of s, after the groups.
	for _, ps := range streams[1:] {
		if ps == nil {
			continue
		}
		ps.did()
		if err := p.join(s, ps); err != nil {
			// s cannot wait for ps on the device, so the host does: End,
			// enqueued on s next, must not free what ps still uses. (In
			// a capture nothing has run: the capture fails instead.)
			if cp == nil {
				ps.b.Synchronize()
			}
			if runErr == nil {
				runErr = fail("join", err)
			}
		}
		p.giveBackGroupStream(ps, cp)
	}
	return runErr
}

// giveBackGroupStream returns a stream-parallel launch's pooled stream
// ps: to the pool, or, if it joined capture cp, to cp until it ends.
func (p *Program) giveBackGroupStream(ps *streamCore, cp *capture) {
	if cp != nil && ps.cap.Load() == cp {
		cp.keepPooled(ps)
	} else {
		p.pool.Put(ps)
	}
}

func runTask(l backend.Launch, task int, s *streamCore) error {
	return l.Run(task, s.b)
}

// groupStarts fills starts (one entry per group) with the index of the
// first task of each group (groups are contiguous and in id order).
func groupStarts(k *kernelCore, starts []int) []int {
	for i := range starts {
		starts[i] = len(k.plan.Tasks)
	}
	for i := len(k.plan.Tasks) - 1; i >= 0; i-- {
		if g := k.plan.Tasks[i].Group; g >= 1 && g <= len(starts) {
			starts[g-1] = i
		}
	}
	return starts
}

// join makes s wait for the work enqueued so far on o, a stream of p.
// Inside a capture, s joins o's capture if it is outside every capture,
// and is refused if it captures and o is not in its capture.
func (p *Program) join(s, o *streamCore) error {
	m := o.mark()
	if m != nil || s.capturing() != nil {
		if err := p.admitWait(s, m, "Stream.WaitStream"); err != nil {
			return err
		}
	}
	return failed(m.capture(), failed(s.capturing(), s.waitOn(o)))
}

// launchWithHostSlices surrounds the kernel with the copies of its slice
// arguments on s and waits for the copies back. On a backend that can use
// host memory directly, the packed slices are the kernel's memory.
func (k *kernelCore) launchWithHostSlices(c *call, s *streamCore, lt launchTrace) error {
	p := k.p
	hw, direct := p.dev.(backend.HostWrapper)
	var errs []error
	bufs := 0
	synced := false
	defer func() {
		if !direct && bufs > 0 && !synced {
			// An error left copies enqueued: wait for them before freeing
			// their buffers and letting go of the host memory.
			s.b.Synchronize()
		}
		for i := range c.hosts[:bufs] {
			if !direct {
				c.hosts[i].buf.Close()
			}
			c.hosts[i] = hostCopy{}
		}
	}()
	for i := range c.hosts {
		h := &c.hosts[i]
		var err error
		if direct {
			h.buf, err = hw.WrapHost(h.packed, h.bytes)
		} else {
			// An empty slice still needs a valid address to pass.
			h.buf, err = p.dev.Alloc(max(h.bytes, 1))
		}
		if err != nil {
			return fmt.Errorf("qd: kernel %s: memory for a slice argument: %w", k.name, err)
		}
		bufs++
		c.b.Arrays[h.param].Buf = h.buf
		if !direct && h.bytes > 0 {
			in := func() error { return h.buf.CopyFromHost(s.b, h.packed, h.bytes) }
			if err := k.copyTraced(lt, s, "copy in ", h.param, in); err != nil {
				return fmt.Errorf("qd: kernel %s: copying a slice argument in: %w", k.name, err)
			}
		}
	}
	errs = append(errs, k.enqueue(c, s, lt))
	if !direct {
		for _, h := range c.hosts {
			if h.bytes > 0 {
				out := func() error { return h.buf.CopyToHost(s.b, h.packed, h.bytes) }
				errs = append(errs, k.copyTraced(lt, s, "copy out ", h.param, out))
			}
		}
	}
	// Wait for the kernel and the copies back; Synchronize also reports the
	// kernel's own errors.
	errs = append(errs, s.b.Synchronize())
	synced = true
	for _, h := range c.hosts {
		if h.unpack != nil {
			h.unpack()
		}
	}
	return errors.Join(errs...)
}

// copyTraced runs copy, as a span named after the parameter when tracing
// is on.
func (k *kernelCore) copyTraced(lt launchTrace, s *streamCore, what string, param int, copy func() error) error {
	if lt.tr == nil {
		return copy()
	}
	span := trace.Span{Kernel: what + k.name + "." + k.plan.Kernel.Params[param].Name, Kind: "copy", Launch: lt.id, Task: -1}
	return lt.tr.timed(s, span, copy)
}
