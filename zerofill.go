package qd

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
)

// The zero fill of stream-ordered arrays, enqueued by their first use.
//
// NewNdarrayOn promises a zeroed array. A GPU fills memory with a driver
// call (cuMemsetD8Async) that costs the host 3.5–4.5 µs on an H100 host,
// three times the allocation and free together, and often for nothing:
// the first thing a pipeline does with a new array is copy data into all
// of it. So the fill is not enqueued by NewNdarrayOn but by the array's
// first use, on that use's stream, right before it; it is left out when
// the first use writes every element (a whole-array copy into it or
// FillOn) or when the array is closed unused. What every reader sees is
// unchanged: zeros until something writes.
//
// States: pending (no fill yet), filling (the fill is enqueued on one
// stream, with an event recorded after it) and done. A use on the fill's
// stream is ordered after the fill by the stream; a use on another stream
// waits for the event until a query finds it complete, since the user
// may have ordered that stream only after the allocation. The state
// changes under the mutex; a use of an array that is done costs one
// atomic load.
//
// A first use inside a graph capture must not enqueue the fill on its
// capturing stream: the graph would zero the array again at every replay.
// The fill is finished outside the capture instead (zeroOutside).

const (
	zeroDone uint32 = iota
	zeroPending
	zeroFilling
)

// zeroFill is a storage's fill state.
type zeroFill struct {
	state atomic.Uint32
	mu    sync.Mutex
	on    *streamCore   // zeroFilling: the stream the fill is on
	ev    backend.Event // zeroFilling: recorded on `on` after the fill
}

// zeroed orders work about to be enqueued on s after the array's zero
// fill, enqueueing the fill first if it is pending. overwrite says the
// work writes every element: a pending fill is then left for
// overwritten, called once the work is enqueued, to drop. The caller
// holds s's gate (streamCore.enter), or s is a stream outside every
// capture that nothing else uses, and has pinned the array.
//
// s may belong to another Program (a copy between Programs): the caller
// has then enqueued the fill on a stream of the array's own Program
// (fillOwn), and s waits for it through an event.
func (st *storage) zeroed(s *streamCore, overwrite bool) error {
	z := &st.zero
	if z.state.Load() == zeroDone {
		return nil
	}
	o := st.owner
	z.mu.Lock()
	defer z.mu.Unlock()
	if c := s.capturing(); c != nil && st.cap != c {
		return o.zeroOutside(st, s, c)
	}
	switch z.state.Load() {
	case zeroPending:
		if overwrite {
			return nil
		}
		if s.p != o {
			return fmt.Errorf("qd: internal error: the zero fill of an array of another Program was not enqueued before its use")
		}
		return st.fillOn(s)
	case zeroFilling:
		if s == z.on {
			return nil
		}
		if done, err := z.ev.Query(); err == nil && done {
			z.finish(o)
			return nil
		}
		return s.waitEventOf(z.ev, o)
	}
	return nil
}

// fillOn enqueues the pending fill on on, a stream of the array's
// Program whose gate the caller holds, outside every capture, with z.mu.
func (st *storage) fillOn(on *streamCore) error {
	z, o := &st.zero, st.owner
	zr, ok := st.buf.(backend.Zeroer)
	if !ok {
		return fmt.Errorf("qd: the %s backend cannot zero memory on a stream: %w", o.arch, ErrUnsupported)
	}
	ev, err := o.evpool.Get()
	if err != nil {
		return err
	}
	if err := zr.Zero(on.b); err != nil {
		o.evpool.Put(ev)
		return err
	}
	if err := ev.Record(on.b); err != nil {
		// Unordered for other streams: wait for the fill here.
		o.evpool.Put(ev)
		if err := on.b.Synchronize(); err != nil {
			return err
		}
		z.state.Store(zeroDone)
		return nil
	}
	z.on, z.ev = on, ev
	z.state.Store(zeroFilling)
	st.noteUse(on)
	return nil
}

// fillOwn enqueues a pending fill on a stream of the array's own Program
// before an operation on another Program's stream uses the array
// (copyBetween), holding that stream's gate and none of the other
// Program's: the fill is enqueued under the gate of the stream it goes
// on, as all work is (gate.go), and the operation then waits for it
// (zeroed). The stream is the allocation stream, or the default stream
// once that is closed.
func (st *storage) fillOwn() error {
	z := &st.zero
	if z.state.Load() != zeroPending {
		return nil
	}
	on := st.fillStream()
	if on == nil {
		return closedErr("the array's Program")
	}
	defer on.inflight.leave()
	cs, ok := on.enter()
	if !ok {
		return closedErr("stream")
	}
	defer on.exit()
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.state.Load() != zeroPending {
		return nil
	}
	if cs != nil {
		return st.owner.zeroOutside(st, on, cs)
	}
	return st.fillOn(on)
}

// fillStream holds and returns the stream of the array's own Program that
// a fill for another Program's stream goes on: the allocation stream, or
// the default stream once that is closed; nil if the Program is closed.
func (st *storage) fillStream() *streamCore {
	if h := st.home; h != nil && h.hold() {
		return h
	}
	if d := st.owner.def.c; d.hold() {
		return d
	}
	return nil
}

// zeroOutside is zeroed for an array first used inside capture c (which
// did not allocate it). A fill enqueued on s would be recorded into the
// graph and zero the array again at every replay, and s cannot wait for
// a fill enqueued outside the capture, so the fill is finished now, on
// the host's time and outside the capture: on a pooled stream ordered
// after s's work from before the capture (which the user ordered after
// the allocation), waited for at once. Even a first use that overwrites
// every element is filled: it runs only when the graph is launched, and
// the array reads as zeros until then. The caller holds z.mu.
func (p *Program) zeroOutside(st *storage, s *streamCore, c *capture) error {
	z := &st.zero
	switch z.state.Load() {
	case zeroFilling:
		if err := z.ev.Synchronize(); err != nil {
			return err
		}
		z.finish(p)
	case zeroPending:
		zr, ok := st.buf.(backend.Zeroer)
		if !ok {
			return fmt.Errorf("qd: the %s backend cannot zero memory on a stream: %w", p.arch, ErrUnsupported)
		}
		ps, err := p.pool.Get()
		if err != nil {
			return err
		}
		defer p.pool.Put(ps)
		// The caller holds s's gate (gate.go), so s's pre event, which
		// marks its work from before it joined c, stays as it is.
		if pre := c.preOf(s); pre != nil {
			err = ps.b.WaitEvent(pre)
		}
		if err == nil {
			err = zr.Zero(ps.b)
		}
		if err == nil {
			err = ps.b.Synchronize()
		}
		if err != nil {
			return fmt.Errorf("zeroing an array made by NewNdarrayOn, first used in the capture on %s: %w", c.origin.describe(), err)
		}
		z.state.Store(zeroDone)
	}
	return nil
}

// zeroUse is an array an operation uses: the operation must come after the
// array's zero fill, unless it overwrites every element.
type zeroUse struct {
	st        *storage
	overwrite bool
}

// zeroFirst runs zeroed for each array an operation on s uses.
func zeroFirst(s *streamCore, zs []zeroUse) error {
	for _, z := range zs {
		if err := z.st.zeroed(s, z.overwrite); err != nil {
			return err
		}
	}
	return nil
}

// zeroAfter drops the pending fills of the arrays the operation
// overwrote, once it is enqueued (err == nil).
func zeroAfter(zs []zeroUse, err error) {
	if err != nil {
		return
	}
	for _, z := range zs {
		if z.overwrite {
			z.st.overwritten()
		}
	}
}

// overwritten marks a pending fill as not needed once work that writes
// every element is enqueued.
func (st *storage) overwritten() {
	st.zero.state.CompareAndSwap(zeroPending, zeroDone)
}

// finish ends the filling state. The caller holds z.mu.
func (z *zeroFill) finish(p *Program) {
	p.evpool.Put(z.ev)
	z.on, z.ev = nil, nil
	z.state.Store(zeroDone)
}

// release gives back what the fill state holds, when the storage is
// freed: a fill never enqueued is simply dropped.
func (z *zeroFill) release(p *Program) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.state.Load() == zeroFilling {
		z.finish(p)
	}
	z.state.Store(zeroDone)
}

// zeroArrays orders a launch on s after the zero fill of its array
// arguments. The fill kernel overwrites its array (unless a view).
func (kc *kernelCore) zeroArrays(cl *call, s *streamCore) error {
	for i, a := range cl.arrays {
		if a.st.zero.state.Load() == zeroDone {
			continue
		}
		if err := a.st.zeroed(s, kc.fills && i == 0 && !a.view); err != nil {
			return fmt.Errorf("qd: kernel %s: %w", kc.name, err)
		}
	}
	return nil
}

// zeroAfterLaunch is zeroAfter for the fill kernel's array.
func (kc *kernelCore) zeroAfterLaunch(cl *call, err error) {
	if err == nil && kc.fills && len(cl.arrays) > 0 && !cl.arrays[0].view {
		cl.arrays[0].st.overwritten()
	}
}
