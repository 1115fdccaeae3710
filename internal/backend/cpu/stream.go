package cpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
)

// errStreamClosed is returned for work enqueued on a closed stream; package
// qd checks for closed streams before reaching the backend, so users see
// qd.ErrClosed instead.
var errStreamClosed = backend.ClosedError("cpu backend: stream is closed")

type opKind uint8

const (
	opRun    opKind = iota + 1 // run a task of a launch
	opEnd                      // release a launch
	opSignal                   // complete an event record
	opWait                     // wait for an event record
	opFunc                     // run fn (copies)
	opMark                     // trace: read the clock for a start mark
	opSpan                     // trace: read the clock and record a span
)

type op struct {
	kind opKind
	l    *launch
	task int
	sig  *signal
	fn   func() error
	mark *mark // opMark, opSpan
}

// stream is an in-order queue. Ops run on a drain goroutine started when
// work arrives and ended when the queue is empty, so idle streams cost no
// goroutine.
//
// The producer and the drain goroutine meet on mu once per batch, not once
// per op: drain takes the whole queue at once (swapping in a spare slice),
// runs it outside the lock, and counts finished ops in an atomic, taking
// the lock after an op only to store an error or to wake a Synchronize.
// With a lock per op, the mutex handoff between the launching goroutine
// and the drain goroutine was the largest item of a launch's profile.
type stream struct {
	dev *Device
	id  uint64

	mu      sync.Mutex
	idle    sync.Cond // broadcast when done catches up with a waiter's target
	q       []op      // ops not yet taken by drain
	spare   []op      // the previous batch's storage, reused by the next
	running bool
	enq     uint64 // ops enqueued
	err     error  // first error since the last Synchronize
	closed  bool
	cap     *capture // the capture the stream records into, if any (capture.go)

	// done counts finished ops. waiters counts Synchronize calls waiting;
	// each increments it under mu before it reads done, so drain, which
	// bumps done before it reads waiters, either sees the waiter and
	// broadcasts under mu, or the waiter sees the new done.
	done    atomic.Uint64
	waiters atomic.Int32
}

var streamIDs atomic.Uint64

func newStream(d *Device) *stream {
	s := &stream{dev: d, id: streamIDs.Add(1)}
	s.idle.L = &s.mu
	return s
}

// Handle identifies the stream; CPU streams have no native handle.
func (s *stream) Handle() uintptr { return uintptr(s.id) }

func (s *stream) enqueue(o op) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return errStreamClosed
		}
		if c := s.cap; c != nil {
			s.mu.Unlock()
			if ok, err := c.record(s, o); ok || err != nil {
				return err
			}
			continue // the capture ended meanwhile: queue o
		}
		s.q = append(s.q, o)
		s.enq++
		s.startLocked()
		s.mu.Unlock()
		return nil
	}
}

// enqueueAll queues ops at once, or none of them (a graph replay's lane;
// the stream is not capturing, which the caller checked).
func (s *stream) enqueueAll(ops []op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.busyLocked(); err != nil {
		return err
	}
	s.q = append(s.q, ops...)
	s.enq += uint64(len(ops))
	s.startLocked()
	return nil
}

// busyLocked says why s cannot take a replay or begin a capture: it is
// closed, or capturing. The caller holds mu.
func (s *stream) busyLocked() error {
	switch {
	case s.closed:
		return errStreamClosed
	case s.cap != nil:
		return errCapturing
	}
	return nil
}

// startLocked starts the drain goroutine if it is not running; the caller
// holds mu.
func (s *stream) startLocked() {
	if !s.running {
		s.running = true
		go s.drain()
	}
}

func (s *stream) drain() {
	s.mu.Lock()
	for len(s.q) > 0 {
		batch := s.q
		s.q = s.spare[:0]
		s.mu.Unlock()
		for i := range batch {
			o := batch[i]
			batch[i] = op{} // drop references to launches and closures
			if o.kind == opSignal {
				s.signal(o.sig)
				continue
			}
			err := s.execute(o)
			if err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
			s.done.Add(1)
			if s.waiters.Load() > 0 {
				s.mu.Lock()
				s.idle.Broadcast()
				s.mu.Unlock()
			}
		}
		s.mu.Lock()
		s.spare = batch[:0]
	}
	s.running = false
	s.mu.Unlock()
}

func (s *stream) execute(o op) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cpu backend: internal error in stream %d: %v", s.id, r)
		}
	}()
	switch o.kind {
	case opRun:
		// A task's error belongs to its launch, not to the stream it ran
		// on: End reports it on the launch stream (see launch.fail).
		if err := o.l.run(o.task); err != nil {
			o.l.fail(err)
		}
	case opEnd:
		o.l.m.pick.record(o.l)
		err := o.l.takeErr()
		o.l.release()
		return err
	case opWait:
		// Errors do not travel with events: each is reported once, by the
		// stream of the launch that raised it.
		<-o.sig.done
	case opFunc:
		return o.fn()
	case opMark:
		o.mark.start = o.mark.t.rec.Now()
	case opSpan:
		o.mark.finish()
	}
	return nil
}

// signal runs an event's marker op: it completes the event and counts the
// op as done in one step under mu, so that the host never sees one without
// the other. Query and Synchronize read done under mu, and a host that saw
// the event complete (set under mu) reaches mu after this step: a stream
// whose last recorded event is reached is done, and an event recorded
// before a Synchronize returned is reached.
func (s *stream) signal(g *signal) {
	s.mu.Lock()
	g.complete()
	s.done.Add(1)
	if s.waiters.Load() > 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
}

// Synchronize waits for the work enqueued so far and returns the first error
// that work reported since the last call.
func (s *stream) Synchronize() error {
	s.mu.Lock()
	if s.cap != nil {
		s.mu.Unlock()
		return errCapturing
	}
	target := s.enq
	s.waiters.Add(1)
	for s.done.Load() < target {
		s.idle.Wait()
	}
	s.waiters.Add(-1)
	err := s.err
	s.err = nil
	s.mu.Unlock()
	return err
}

func (s *stream) Query() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cap != nil {
		return false, errCapturing
	}
	return s.done.Load() == s.enq, nil
}

func (s *stream) WaitEvent(e backendEvent) error {
	ev, err := s.dev.event(e)
	if err != nil {
		return err
	}
	sig := ev.last()
	switch {
	case sig == nil:
		return nil // never recorded: nothing to wait for
	case sig.cap != nil:
		return s.waitCaptured(sig)
	case s.isCapturing():
		return fmt.Errorf("%w: a capturing stream cannot wait for an event recorded outside its capture", errCaptureCross)
	case sig.isDone():
		return nil // keep the queue short
	}
	return s.enqueue(op{kind: opWait, sig: sig})
}

// Close waits for the enqueued work, then refuses more. A capturing stream
// cannot be closed.
func (s *stream) Close() error {
	err := s.Synchronize()
	if errors.Is(err, errCapturing) {
		return err
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}
