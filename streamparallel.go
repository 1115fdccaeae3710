package qd

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

func (p *Program) kc(k *kernelCore, cl *call, l backend.Launch, s *streamCore, lt launchTrace) error {
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
	cl.streams = resize(cl.streams, k.plan.Groups)
	streams := cl.streams
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
	cl.next = groupStarts(k, resize(cl.next, k.plan.Groups))
	next := cl.next
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

// groupStarts fills starts (one entry per group) with the index of the
// first task of each group (groups are contiguous and in id order).
func groupStarts(kc *kernelCore, starts []int) []int {
	for i := range starts {
		starts[i] = len(kc.plan.Tasks)
	}
	for i := len(kc.plan.Tasks) - 1; i >= 0; i-- {
		if g := kc.plan.Tasks[i].Group; g >= 1 && g <= len(starts) {
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
