package cpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// errStreamClosed is returned for work enqueued on a closed stream; package
// qd checks for closed streams before reaching the backend, so users see
// qd.ErrClosed instead.
var errStreamClosed = errors.New("cpu backend: stream is closed")

type opKind uint8

const (
	opRun    opKind = iota + 1 // run a task of a launch
	opEnd                      // release a launch
	opSignal                   // complete an event record
	opWait                     // wait for an event record
	opFunc                     // run fn (copies)
)

type op struct {
	kind opKind
	l    *launch
	task int
	sig  *signal
	fn   func() error
}

// stream is an in-order queue. Ops run on a drain goroutine started when
// work arrives and ended when the queue is empty, so idle streams cost no
// goroutine.
type stream struct {
	dev *Device
	id  uint64

	mu      sync.Mutex
	idle    sync.Cond // broadcast when done catches up with a waiter's target
	q       []op
	head    int
	running bool
	enq     uint64 // ops enqueued
	done    uint64 // ops finished
	waiters int
	err     error // first error since the last Synchronize
	closed  bool
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
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errStreamClosed
	}
	s.q = append(s.q, o)
	s.enq++
	if !s.running {
		s.running = true
		go s.drain()
	}
	s.mu.Unlock()
	return nil
}

func (s *stream) drain() {
	s.mu.Lock()
	for s.head < len(s.q) {
		o := s.q[s.head]
		s.q[s.head] = op{}
		s.head++
		s.mu.Unlock()
		err := s.execute(o)
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.done++
		if s.waiters > 0 {
			s.idle.Broadcast()
		}
	}
	// Reuse the queue's storage once it has drained.
	s.q = s.q[:0]
	s.head = 0
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
		return o.l.run(o.task)
	case opEnd:
		o.l.release()
	case opSignal:
		o.sig.complete()
	case opWait:
		<-o.sig.done
	case opFunc:
		return o.fn()
	}
	return nil
}

// Synchronize waits for the work enqueued so far and returns the first error
// that work reported since the last call.
func (s *stream) Synchronize() error {
	s.mu.Lock()
	target := s.enq
	s.waiters++
	for s.done < target {
		s.idle.Wait()
	}
	s.waiters--
	err := s.err
	s.err = nil
	s.mu.Unlock()
	return err
}

func (s *stream) Query() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done == s.enq, nil
}

func (s *stream) WaitEvent(e backendEvent) error {
	ev, err := s.dev.event(e)
	if err != nil {
		return err
	}
	sig := ev.last()
	if sig == nil || sig.isDone() {
		return nil // nothing to wait for: keep the queue short
	}
	return s.enqueue(op{kind: opWait, sig: sig})
}

// Close waits for the enqueued work, then refuses more.
func (s *stream) Close() error {
	err := s.Synchronize()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}
