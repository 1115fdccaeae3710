package qd

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// Stream-parallel launches: fork and join.
//
// A kernel of several qd.StreamParallel groups runs its first group on the
// launch stream s and every other group on a stream borrowed from the
// Program's pool. The borrowed stream first waits for an event recorded on
// s (the fork), and s then waits for an event recorded after the group's
// tasks (the join), so the host never blocks. Inside a capture the
// borrowed streams join the capture by their fork wait and stay with it
// until it ends (a stream handed to other work while still in the capture
// would capture that work too).

// runTasks runs the plan's tasks on s, in capture cp (nil: outside every
// capture): tasks outside groups, and the first group's, on s itself;
// every other group on a borrowed stream, forked from s and joined back
// into it. The caller holds s's gate (gate.go).
func (p *Program) runTasks(k *kernelCore, cl *call, l backend.Launch, s *streamCore, cp *capture, lt launchTrace) error {
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
	call := k.call
	fork, m, err := s.pointHeld(cp)
	if err != nil {
		return fail("fork", err)
	}
	defer p.putEvent(fork, cp)
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
		// In a capture the borrowed stream joins it by this wait, to
		// leave it with the capture's other streams when it ends;
		// outside, nothing else uses it, so no gate is needed.
		if m == nil {
			err = ps.b.WaitEvent(fork)
		} else {
			err = ps.waitPoint(m, call, fork)
		}
		if err != nil {
			// Not forked: nothing to join back.
			runErr = fail("fork", err)
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
		if err := p.joinHeld(s, cp, ps, call); err != nil {
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
