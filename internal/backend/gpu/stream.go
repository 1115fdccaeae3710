package gpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// Special stream values that name a vendor's default streams, not real
// streams (CUDA's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD; HIP's null
// stream and hipStreamPerThread).
const (
	streamLegacy    = 0x1
	streamPerThread = 0x2
)

var errStreamClosed = backend.ClosedError("gpu: stream closed")

// stream is a stream of a device.
type stream struct {
	d      *Device
	h      uintptr
	args   []uintptr // {h}: the argument list of one-argument calls, read-only
	owned  bool      // made by NewStream: Close destroys it
	closed atomic.Bool

	pmu     sync.Mutex
	pending []pendingRecord // violation records of launches (debug.go)
	kept    error           // a violation found early, for the next Synchronize

	cap atomic.Pointer[capture] // the capture the stream is in, if any (graph.go)
}

// NewStream creates a non-blocking stream; priority is clamped into
// PriorityRange (a lower number is a higher priority).
func (d *Device) NewStream(priority int) (backend.Stream, error) {
	priority = min(max(priority, d.props.PriorityGreatest), d.props.PriorityLeast)
	if err := d.enter(); err != nil {
		return nil, err
	}
	var h uintptr
	r := res(purego.SyscallN(d.c.StreamCreate.Addr, uintptr(unsafe.Pointer(&h)), d.codes.StreamNonBlocking, uintptr(int64(priority))))
	d.leave()
	if err := d.check(&d.c.StreamCreate, r); err != nil {
		return nil, err
	}
	return d.newStream(h, true), nil
}

func (d *Device) newStream(h uintptr, owned bool) *stream {
	return &stream{d: d, h: h, args: []uintptr{h}, owned: owned}
}

// WrapStream wraps a stream made outside qd (for example by another
// library sharing the device's context). Close never destroys it. The
// default streams are refused: they synchronize implicitly with other
// streams, which breaks qd's explicit ordering, and qd could not tell its
// own work on them from other work.
func (d *Device) WrapStream(handle uintptr) (backend.Stream, error) {
	switch handle {
	case 0, streamLegacy:
		return nil, fmt.Errorf("%s: cannot wrap the legacy default stream (handle %#x): create a non-blocking stream and wrap that", d.Arch(), handle)
	case streamPerThread:
		return nil, fmt.Errorf("%s: cannot wrap the per-thread default stream (handle %#x): create a non-blocking stream and wrap that", d.Arch(), handle)
	}
	if d.closed.Load() {
		return nil, ErrDeviceClosed
	}
	return d.newStream(handle, false), nil
}

// asStream checks that bs is a live stream of d.
func (d *Device) asStream(bs backend.Stream) (*stream, error) {
	s, ok := bs.(*stream)
	if !ok || s == nil {
		return nil, fmt.Errorf("%s: %T is not a stream of this backend", d.Arch(), bs)
	}
	if s.d != d {
		return nil, fmt.Errorf("%s: stream belongs to another device", d.Arch())
	}
	if s.closed.Load() {
		return nil, errStreamClosed
	}
	return s, nil
}

func (s *stream) Handle() uintptr { return s.h }

// Synchronize waits for the stream's work. An asynchronous failure of that
// work (a fatal kernel error) is returned here, and marks the device lost.
func (s *stream) Synchronize() error {
	if s.closed.Load() {
		return errStreamClosed
	}
	if s.cap.Load() != nil {
		return fmt.Errorf("%s: Synchronize: %w", s.d.Arch(), errCapturing)
	}
	err := s.d.run(&s.d.c.StreamSynchronize, s.args)
	if verr := s.harvest(err == nil, false); err == nil {
		err = verr
	}
	return err
}

// Query reports whether the stream's work is done: the driver's "not
// ready" is "not yet", not an error.
func (s *stream) Query() (bool, error) {
	if s.closed.Load() {
		return false, errStreamClosed
	}
	if s.cap.Load() != nil {
		return false, fmt.Errorf("%s: Query: %w", s.d.Arch(), errCapturing)
	}
	return s.d.poll(&s.d.c.StreamQuery, s.args)
}

// WaitEvent makes later work on s wait for e's last recorded point. An
// event never recorded is complete, so waiting on it is a no-op (the
// drivers treat it the same way; skipping the call saves it).
func (s *stream) WaitEvent(be backend.Event) error {
	if s.closed.Load() {
		return errStreamClosed
	}
	e, err := s.d.asEvent(be)
	if err != nil {
		return err
	}
	return s.waitFor(e)
}

// waitFor is WaitEvent (and Device.WaitPeerEvent) once e is checked: a
// wait that joins a capture, or crosses one's boundary, is admitted or
// refused first.
func (s *stream) waitFor(e *event) error {
	if !e.recorded.Load() {
		return nil
	}
	if ec := e.cap.Load(); ec != nil || s.cap.Load() != nil {
		if err := s.admit(ec); err != nil {
			return err
		}
	}
	return s.waitEvent(e.h)
}

func (s *stream) waitEvent(ev uintptr) error {
	f := getFrame()
	f.a[0], f.a[1], f.a[2] = s.h, ev, 0
	err := s.d.runOn(&s.d.c.StreamWaitEvent, f.a[:3])
	putFrame(f)
	return err
}

// Close waits for the stream's work, then destroys the stream (a wrapped
// stream is only waited for). It is idempotent. The stream is destroyed
// even when the wait reports an error, which Close returns.
func (s *stream) Close() error {
	if s.cap.Load() != nil {
		return fmt.Errorf("%s: Close: %w", s.d.Arch(), errCapturing)
	}
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	err := d.check(&d.c.StreamSynchronize, res(purego.SyscallN(d.c.StreamSynchronize.Addr, s.args...)))
	err = errors.Join(err, d.freeCached(s, false))
	if verr := s.harvest(err == nil, false); err == nil {
		err = verr
	}
	if s.owned {
		err = errors.Join(err, d.check(&d.c.StreamDestroy, res(purego.SyscallN(d.c.StreamDestroy.Addr, s.args...))))
	}
	return err
}
