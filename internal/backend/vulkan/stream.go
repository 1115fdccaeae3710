package vulkan

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Stream is an in-order queue of work on one VkQueue of the device,
// ordered by its own timeline semaphore: the n-th submit signals the
// semaphore to n and waits for n-1, so the stream's work runs in order
// even where a queue overlaps submits or other streams share the queue.
// A submit waits only for values already submitted (its own previous one,
// the last Record of the events it waits for): on a device of one queue
// a wait for a signal queued behind it would deadlock the queue.
type Stream struct {
	d      *Device
	id     uint64
	sem    uint64 // the timeline semaphore
	closed atomic.Bool
	// reached is the highest value the semaphore is known to have
	// reached: a cache of reads, never ahead of the semaphore.
	reached atomic.Uint64
	nhooks  atomic.Int32 // len(hooks), read without mu by submit

	mu       sync.Mutex
	main     cmdPool     // the compute queue's command buffers
	xfer     [2]*cmdPool // transfer queues', for copies in and out (xfer.go); nil until the first
	last     uint64      // the value of the last submit
	waits    []vk.Wait   // event waits for the next submit
	waitBuf  []vk.Wait   // the wait list of a submit, reused
	cbs      [1]uintptr
	hooks    []hook   // host work after a value, by value
	err      error    // the first error a hook returned since Synchronize
	released bool     // the pool is destroyed, the semaphore given back
	capture  *capture // the capture in progress (capture.go); nil when none

	// Relays (peer.go) gate the stream: a submit made while a relay
	// registered before it is pending is held, in order, and made by the
	// relay that lifts its last gate, so that no queue ever waits for a
	// value not submitted yet. gates counts the relays registered,
	// gatesDone those done in registration order, doneAhead those done
	// out of it.
	gates, gatesDone uint64
	doneAhead        []uint64
	held             []heldSubmit
	// submitted is the value of the last submit made to the queue.
	submitted atomic.Uint64

	// hmu serialises the running of hooks, so that a Synchronize returns
	// only after every hook up to its value has run, also one that
	// another goroutine took from the list; ready is its scratch list.
	hmu   sync.Mutex
	ready []hook
}

var _ backend.Stream = (*Stream)(nil)

// cmdPool is a stream's command buffers for one queue: its pool (not
// thread-safe: used under the stream's mu), the completed buffers kept for
// reuse and the submitted ones, by value.
type cmdPool struct {
	q        *queue
	pool     uint64
	free     []uintptr
	inflight []inFlight
}

type inFlight struct {
	cb    uintptr
	value uint64
}

type hook struct {
	value uint64
	f     func() error
}

// maxFreeBuffers bounds the command buffers a stream keeps for reuse; a
// burst of work beyond it gives the extra ones back to the pool. Bursts of
// 256 launches between waits (qd bench's) allocated and freed 192 buffers
// each time with 64.
const maxFreeBuffers = 1024

// waitSlice is how long one vkWaitSemaphores may block before a wait
// loop checks the device again. The driver sleeps in the call: this is
// not a spin.
const waitSlice = 500 * time.Millisecond

var streamIDs atomic.Uint64

// NewStream makes a stream on the next queue of the compute family, round
// robin. Priorities are not supported (PriorityRange is 0, 0).
func (d *Device) NewStream(priority int) (backend.Stream, error) {
	s, err := d.newStream()
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (d *Device) newStream() (*Stream, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	sem, value, err := d.timeline()
	if err != nil {
		return nil, err
	}
	pool, err := d.vd.CreateCommandPool()
	if err != nil {
		d.giveTimeline(sem)
		return nil, d.wrap(err)
	}
	q := d.queues[int((d.nextQueue.Add(1)-1)%uint32(len(d.queues)))]
	s := &Stream{d: d, id: streamIDs.Add(1), sem: sem, main: cmdPool{q: q, pool: pool}, last: value}
	s.reached.Store(value)
	d.mu.Lock()
	if d.closing.Load() {
		d.mu.Unlock()
		d.vd.DestroyCommandPool(pool)
		d.giveTimeline(sem)
		return nil, errDeviceClosed
	}
	d.streams[s] = struct{}{}
	d.mu.Unlock()
	return s, nil
}

// Handle identifies the stream: Vulkan has no stream objects.
func (s *Stream) Handle() uintptr { return uintptr(s.id) }

// submit records a command buffer with record (which may be nil: a submit
// of no commands, which still waits and signals) and submits it to the
// stream's queue, signalling the semaphore to the value it returns, after
// the stream's previous submit and every event wait added since. The
// stream's writes become visible to later submits that wait for the
// value; for host reads of them, record vk.Device.CmdHostReadBarrier
// last. Command buffers are reused once the semaphore shows them done.
func (s *Stream) submit(record func(cb uintptr)) (uint64, error) {
	return s.submitTo(onCompute, record)
}

// submitTo is submit, on the queue route picks (xfer.go).
func (s *Stream) submitTo(r route, record func(cb uintptr)) (uint64, error) {
	if err := s.d.usable(); err != nil {
		return 0, err
	}
	if s.nhooks.Load() > 0 {
		s.poll(false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, errStreamClosed
	}
	if s.capture != nil {
		if len(s.waits) > 0 {
			return 0, errCaptureCross
		}
		if record != nil {
			s.capture.add(s, record)
		}
		return s.last, nil
	}
	c := &s.main
	if r != onCompute && record != nil {
		var err error
		if c, err = s.xferLocked(r); err != nil {
			return 0, err
		}
	}
	var cb uintptr
	if record != nil {
		var err error
		if cb, err = s.commandBufferLocked(c); err != nil {
			return 0, err
		}
		if err := s.d.vd.Begin(cb, vk.CommandBufferUsageOneTimeSubmit); err != nil {
			c.free = append(c.free, cb)
			return 0, s.d.wrap(err)
		}
		record(cb)
		if err := s.d.vd.End(cb); err != nil {
			c.free = append(c.free, cb)
			return 0, s.d.wrap(err)
		}
	}
	return s.submitOnLocked(c, cb)
}

// submitLocked submits cb (0: no command buffer) with the stream's waits,
// or holds it while a relay gates the stream. The caller holds mu, which
// keeps the stream's values in submit order.
func (s *Stream) submitLocked(cb uintptr) (uint64, error) { return s.submitOnLocked(&s.main, cb) }

// submitOnLocked is submitLocked for a command buffer of c, on c's queue.
func (s *Stream) submitOnLocked(c *cmdPool, cb uintptr) (uint64, error) {
	value := s.last + 1
	if s.gates > s.gatesDone {
		s.held = append(s.held, heldSubmit{c: c, cb: cb, waits: slices.Clone(s.waits), value: value, gate: s.gates})
	} else if err := s.queueSubmitLocked(c.q, cb, s.waits, value); err != nil {
		if cb != 0 {
			c.free = append(c.free, cb) // Begin resets it
		}
		return 0, err
	}
	s.last = value
	clear(s.waits)
	s.waits = s.waits[:0]
	if cb != 0 {
		c.inflight = append(c.inflight, inFlight{cb, value})
	}
	return value, nil
}

// queueSubmitLocked submits cb to the queue, signalling value after the
// stream's previous value and waits.
func (s *Stream) queueSubmitLocked(q *queue, cb uintptr, waits []vk.Wait, value uint64) error {
	w := s.waitBuf[:0]
	if value > 1 {
		w = append(w, vk.Wait{Semaphore: s.sem, Value: value - 1})
	}
	w = append(w, waits...)
	s.waitBuf = w[:0]
	var cbs []uintptr
	if cb != 0 {
		s.cbs[0] = cb
		cbs = s.cbs[:]
	}
	q.mu.Lock()
	err := s.d.vd.Submit(q.h, cbs, w, s.sem, value)
	q.mu.Unlock()
	if err != nil {
		return s.d.wrap(err)
	}
	s.submitted.Store(value)
	return nil
}

// heldSubmit is a submit held while relays gate the stream: it waits for
// the relays numbered up to gate.
type heldSubmit struct {
	c     *cmdPool
	cb    uintptr
	waits []vk.Wait
	value uint64
	gate  uint64
}

// gateLocked registers a relay that gates the stream's later submits and
// returns its number, for liftGate.
func (s *Stream) gateLocked() uint64 {
	s.gates++
	return s.gates
}

// liftGate marks relay g done and makes the held submits it was the last
// gate of. A submit that fails then (the device lost, out of memory) is
// the stream's error, and the semaphore is raised past every held value
// from the host, so that nothing waits for them forever.
func (s *Stream) liftGate(g uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doneAhead = append(s.doneAhead, g)
	for {
		i := slices.Index(s.doneAhead, s.gatesDone+1)
		if i < 0 {
			break
		}
		s.doneAhead = slices.Delete(s.doneAhead, i, i+1)
		s.gatesDone++
	}
	if s.released {
		// Closed on a lost device while the relay ran: nothing can be
		// submitted, and the command pools are gone.
		clear(s.held)
		s.held = nil
		return
	}
	n := 0
	for n < len(s.held) && s.held[n].gate <= s.gatesDone {
		h := &s.held[n]
		if err := s.queueSubmitLocked(h.c.q, h.cb, h.waits, h.value); err != nil {
			if s.err == nil {
				s.err = err
			}
			// The value from the host instead, once the one before is
			// reached (a host signal must stay below the pending ones),
			// so that nothing waits for it forever; the later held
			// submits go on. Both fail only on a lost device, whose
			// waits end by themselves.
			if s.d.waitValue(s.sem, h.value-1) == nil {
				_ = s.d.vd.SignalSemaphore(s.sem, h.value)
			}
		}
		n++
	}
	clear(s.held[:n])
	s.held = slices.Delete(s.held, 0, n)
}

// submitRecorded submits cb, recorded by its owner (a graph exec), with
// the stream's waits and extra; the stream does not recycle it.
func (s *Stream) submitRecorded(cb uintptr, extra []vk.Wait) (uint64, error) {
	if err := s.d.usable(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, errStreamClosed
	}
	if s.capture != nil {
		return 0, fmt.Errorf("vulkan: %w: a graph launched on a capturing stream", backend.ErrUnsupported)
	}
	s.waits = append(s.waits, extra...)
	v, err := s.submitLocked(cb)
	if err == nil {
		s.main.inflight = s.main.inflight[:len(s.main.inflight)-1] // the exec's, not the stream's
	}
	return v, err
}

// commandBufferLocked returns a command buffer to record: a completed one
// when there is one, else a new one from the pool.
func (s *Stream) commandBufferLocked(c *cmdPool) (uintptr, error) {
	if len(c.free) == 0 && len(c.inflight) > 0 && c.inflight[0].value <= s.reached.Load() {
		s.recycleLocked(s.reached.Load())
	}
	if len(c.free) == 0 && len(c.inflight) > 0 {
		if v, err := s.value(); err == nil {
			s.recycleLocked(v)
		}
	}
	if n := len(c.free); n > 0 {
		cb := c.free[n-1]
		c.free = c.free[:n-1]
		return cb, nil
	}
	cb, err := s.d.vd.AllocateCommandBuffer(c.pool)
	return cb, s.d.wrap(err)
}

// recycleLocked moves the command buffers of values up to v to the free
// list (or back to the pool beyond maxFreeBuffers).
func (s *Stream) recycleLocked(v uint64) {
	s.main.recycle(s.d.vd, v)
	for _, c := range s.xfer {
		if c != nil {
			c.recycle(s.d.vd, v)
		}
	}
}

func (c *cmdPool) recycle(vd *vk.Device, v uint64) {
	i := 0
	for ; i < len(c.inflight) && c.inflight[i].value <= v; i++ {
		if cb := c.inflight[i].cb; len(c.free) < maxFreeBuffers {
			c.free = append(c.free, cb)
		} else {
			vd.FreeCommandBuffer(c.pool, cb)
		}
	}
	if i > 0 {
		n := copy(c.inflight, c.inflight[i:])
		c.inflight = c.inflight[:n]
	}
}

// value reads the semaphore (and notes what it read).
func (s *Stream) value() (uint64, error) {
	v, err := s.d.vd.SemaphoreValue(s.sem)
	if err != nil {
		return 0, s.d.wrap(err)
	}
	s.noteReached(v)
	return v, nil
}

// valueReached reads the semaphore and reports whether it reached v.
func (s *Stream) valueReached(v uint64) bool {
	got, err := s.value()
	return err == nil && got >= v
}

func (s *Stream) noteReached(v uint64) {
	for {
		old := s.reached.Load()
		if v <= old || s.reached.CompareAndSwap(old, v) {
			return
		}
	}
}

// point is the value the work enqueued so far reaches: the last submit's,
// after a submit of the event waits added since, which count as work (a
// Record, Synchronize or FreeOn after a WaitEvent comes after the event).
func (s *Stream) point() (uint64, error) {
	if err := s.d.usable(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, errStreamClosed
	}
	if s.capture != nil {
		if len(s.waits) > 0 {
			return 0, errCaptureCross
		}
		return s.last, nil
	}
	if len(s.waits) > 0 {
		return s.submitLocked(0)
	}
	return s.last, nil
}

// onComplete makes f run on the host once the stream's semaphore reaches
// value: by the Synchronize or Query that sees it reached, by a later
// submit, or by Close. The first error a hook returns is returned by the
// next Synchronize (or Close). On a released stream f runs at once.
// Hooks must not enqueue work on the stream they are hooked to.
func (s *Stream) onComplete(value uint64, f func() error) {
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		_ = f() // the stream's work is done and its errors reported
		return
	}
	if s.capture != nil {
		// Host work of captured commands: once the graph can no longer
		// run (capture.go).
		c := s.capture
		s.mu.Unlock()
		c.mu.Lock()
		c.hooks = append(c.hooks, f)
		c.mu.Unlock()
		return
	}
	i := len(s.hooks)
	for i > 0 && s.hooks[i-1].value > value {
		i--
	}
	s.hooks = append(s.hooks, hook{})
	copy(s.hooks[i+1:], s.hooks[i:])
	s.hooks[i] = hook{value, f}
	s.nhooks.Store(int32(len(s.hooks)))
	s.mu.Unlock()
}

// poll reads the semaphore and runs the hooks it shows due; without block
// it leaves them to a goroutine already running hooks.
func (s *Stream) poll(block bool) {
	if v, err := s.value(); err == nil {
		s.runHooks(v, block)
	}
}

// runHooks runs the hooks of values up to v, in order, outside mu.
func (s *Stream) runHooks(v uint64, block bool) {
	if block {
		s.hmu.Lock()
	} else if !s.hmu.TryLock() {
		return
	}
	defer s.hmu.Unlock()
	s.mu.Lock()
	i := 0
	for i < len(s.hooks) && s.hooks[i].value <= v {
		i++
	}
	if i == 0 {
		s.mu.Unlock()
		return
	}
	s.ready = append(s.ready[:0], s.hooks[:i]...)
	n := copy(s.hooks, s.hooks[i:])
	clear(s.hooks[n:])
	s.hooks = s.hooks[:n]
	s.nhooks.Store(int32(n))
	s.mu.Unlock()
	if err := runAll(s.ready); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

// runAll runs hooks in order, dropping them, and returns the first error.
func runAll(hs []hook) error {
	var first error
	for i := range hs {
		f := hs[i].f
		hs[i] = hook{}
		if err := f(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Synchronize waits for the work enqueued so far, runs the hooks it
// reached and returns the first error a hook returned since the last
// call.
func (s *Stream) Synchronize() error {
	if s.capturing() {
		return errCapturing
	}
	target, err := s.point()
	if err != nil {
		return err
	}
	if err := s.d.waitValue(s.sem, target); err != nil {
		return err
	}
	s.noteReached(target)
	s.mu.Lock()
	s.recycleLocked(target)
	s.mu.Unlock()
	s.runHooks(target, true)
	s.mu.Lock()
	err, s.err = s.err, nil
	s.mu.Unlock()
	return err
}

// Query reports whether the work enqueued so far is done (the semaphore
// reached the last submit's value), running the hooks of the values the
// semaphore reached.
func (s *Stream) Query() (bool, error) {
	if s.capturing() {
		return false, errCapturing
	}
	target, err := s.point()
	if err != nil {
		return false, err
	}
	v, err := s.value()
	if err != nil {
		return false, err
	}
	s.runHooks(v, false)
	return v >= target, nil
}

// WaitEvent makes the stream's next submit wait for e's last Record,
// which is submitted already: waits are only ever for submitted signals.
// An event never recorded, recorded on this stream, or already reached
// needs no wait.
func (s *Stream) WaitEvent(be backend.Event) error {
	if _, err := s.d.stream(s); err != nil {
		return err
	}
	e, err := s.d.event(be)
	if err != nil {
		return err
	}
	if c, p, ok := e.capturedOn(); ok {
		// A point of a capture: s joins it (or, capturing it already,
		// depends on that point). Another capture's point is refused.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed.Load() {
			return errStreamClosed
		}
		if s.capture != nil && s.capture != c {
			return errCaptureCross
		}
		if s.capture == nil && len(s.waits) > 0 {
			if _, err := s.submitLocked(0); err != nil {
				return err
			}
		}
		if err := c.join(s, p); err != nil {
			return err
		}
		s.capture = c
		return nil
	}
	sem, value, src := e.pointOf()
	if value == 0 || sem == s.sem {
		return nil
	}
	if v, err := s.d.vd.SemaphoreValue(sem); err != nil {
		return s.d.wrap(err)
	} else if v >= value {
		return nil
	}
	if src != nil && src.submitted.Load() < value {
		// Held behind a relay of its stream: a wait for it in a submit
		// would wait for a value not submitted yet (see Stream).
		return s.d.relayWait(s, s.d, sem, value)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return errStreamClosed
	}
	if s.capture != nil {
		return errCaptureCross
	}
	for i := range s.waits {
		if s.waits[i].Semaphore == sem {
			s.waits[i].Value = max(s.waits[i].Value, value)
			return nil
		}
	}
	s.waits = append(s.waits, vk.Wait{Semaphore: sem, Value: value})
	return nil
}

// Close waits for the enqueued work, runs the remaining hooks and
// releases the stream: its command pool, and its semaphore, which the
// device keeps for a later stream (events recorded on this one may still
// name it). The first error not yet reported is returned. Close is
// idempotent.
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	var err error
	target := s.last
	if len(s.waits) > 0 && s.d.usable() == nil {
		if v, serr := s.submitLocked(0); serr == nil {
			target = v
		} else {
			err = serr
		}
	}
	s.closed.Store(true)
	s.mu.Unlock()
	if s.d.usable() == nil {
		err = errors.Join(err, s.d.waitValue(s.sem, target))
	}
	return errors.Join(err, s.release())
}

// release marks the stream closed, runs its remaining hooks and frees
// what it holds; its work must be done (or the device lost). It returns
// the errors not yet reported. Device.Close calls it for streams still
// open.
func (s *Stream) release() error {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	s.released = true
	hooks := s.hooks
	s.hooks = nil
	s.nhooks.Store(0)
	err := s.err
	s.err = nil
	pools := []uint64{s.main.pool}
	for _, c := range s.xfer {
		if c != nil {
			pools = append(pools, c.pool)
		}
	}
	s.main, s.xfer = cmdPool{}, [2]*cmdPool{}
	s.mu.Unlock()
	err = errors.Join(err, runAll(hooks))
	d := s.d
	for _, p := range pools {
		d.vd.DestroyCommandPool(p)
	}
	d.mu.Lock()
	delete(d.streams, s)
	d.timelines = append(d.timelines, s.sem)
	d.mu.Unlock()
	return err
}

// waitValue blocks until timeline semaphore sem reaches value, in slices
// of waitSlice so that a device lost meanwhile is noticed.
func (d *Device) waitValue(sem, value uint64) error {
	for {
		ok, err := d.vd.WaitSemaphore(sem, value, waitSlice)
		if err != nil {
			return d.wrap(err)
		}
		if ok {
			return nil
		}
		if l := d.lost.Load(); l != nil {
			return l
		}
	}
}

// capturing reports whether the stream is capturing a graph.
func (s *Stream) capturing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capture != nil
}
