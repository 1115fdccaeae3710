package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// CU_STREAM_NON_BLOCKING: the stream does not synchronize with the legacy
// default stream (handle 0).
const streamNonBlocking = 1

// Special CUstream values that name the default streams, not real streams.
const (
	streamLegacy    = 0x1
	streamPerThread = 0x2
)

var errStreamClosed = errors.New("cuda: stream closed")

// stream is a CUstream of a device.
type stream struct {
	d      *device
	h      uintptr
	args   []uintptr // {h}: the argument list of one-argument calls, read-only
	owned  bool      // made by NewStream: Close destroys it
	closed atomic.Bool
}

// NewStream creates a non-blocking stream; priority is clamped into
// PriorityRange (a lower number is a higher priority).
func (d *device) NewStream(priority int) (backend.Stream, error) {
	priority = min(max(priority, d.prioGreatest), d.prioLeast)
	if err := d.enter(); err != nil {
		return nil, err
	}
	var h uintptr
	r := callRes(purego.SyscallN(d.sym.streamCreateWithPriority, uintptr(unsafe.Pointer(&h)), streamNonBlocking, uintptr(int64(priority))))
	d.leave()
	if err := d.check("cuStreamCreateWithPriority", r); err != nil {
		return nil, err
	}
	return d.newStream(h, true), nil
}

func (d *device) newStream(h uintptr, owned bool) *stream {
	return &stream{d: d, h: h, args: []uintptr{h}, owned: owned}
}

// WrapStream wraps a CUstream made outside qd (for example by another
// library sharing the primary context). Close never destroys it. The legacy
// and per-thread default streams are refused: they synchronize implicitly
// with other streams, which breaks qd's explicit ordering, and qd could not
// tell its own work on them from other work.
func (d *device) WrapStream(handle uintptr) (backend.Stream, error) {
	switch handle {
	case 0, streamLegacy:
		return nil, fmt.Errorf("cuda: cannot wrap the legacy default stream (handle %#x): create a non-blocking stream and wrap that", handle)
	case streamPerThread:
		return nil, fmt.Errorf("cuda: cannot wrap the per-thread default stream (handle %#x): create a non-blocking stream and wrap that", handle)
	}
	if d.closed.Load() {
		return nil, ErrDeviceClosed
	}
	return d.newStream(handle, false), nil
}

// asStream checks that bs is a live stream of d.
func (d *device) asStream(bs backend.Stream) (*stream, error) {
	s, ok := bs.(*stream)
	if !ok || s == nil {
		return nil, fmt.Errorf("cuda: %T is not a CUDA stream", bs)
	}
	if s.d != d {
		return nil, errors.New("cuda: stream belongs to another device")
	}
	if s.closed.Load() {
		return nil, errStreamClosed
	}
	return s, nil
}

func (s *stream) Handle() uintptr { return s.h }

// Synchronize waits for the stream's work. An asynchronous failure of that
// work (a fatal kernel error) is returned here, and poisons the device.
func (s *stream) Synchronize() error {
	if s.closed.Load() {
		return errStreamClosed
	}
	return s.sync()
}

func (s *stream) sync() error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	r := callRes(purego.SyscallN(d.sym.streamSynchronize, s.args...))
	d.leave()
	return d.check("cuStreamSynchronize", r)
}

// Query reports whether the stream's work is done: CUDA_ERROR_NOT_READY is
// "not yet", not an error.
func (s *stream) Query() (bool, error) {
	if s.closed.Load() {
		return false, errStreamClosed
	}
	d := s.d
	if err := d.enter(); err != nil {
		return false, err
	}
	r := callRes(purego.SyscallN(d.sym.streamQuery, s.args...))
	d.leave()
	if r == cudaErrorNotReady {
		return false, nil
	}
	if err := d.check("cuStreamQuery", r); err != nil {
		return false, err
	}
	return true, nil
}

// WaitEvent makes later work on s wait for e's last recorded point. An
// event never recorded is complete, so waiting on it is a no-op (the driver
// treats it the same way; skipping the call saves it).
func (s *stream) WaitEvent(be backend.Event) error {
	if s.closed.Load() {
		return errStreamClosed
	}
	d := s.d
	e, err := d.asEvent(be)
	if err != nil {
		return err
	}
	if !e.recorded.Load() {
		return nil
	}
	return s.waitEvent(e.h)
}

func (s *stream) waitEvent(ev uintptr) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1], f.a[2] = s.h, ev, 0
	r := callRes(purego.SyscallN(d.sym.streamWaitEvent, f.a[:3]...))
	putFrame(f)
	d.leave()
	return d.check("cuStreamWaitEvent", r)
}

// Close waits for the stream's work, then destroys the stream (a wrapped
// stream is only waited for). It is idempotent. The stream is destroyed
// even when the wait reports an error, which Close returns.
func (s *stream) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	err := d.check("cuStreamSynchronize", callRes(purego.SyscallN(d.sym.streamSynchronize, s.args...)))
	if s.owned {
		err = errors.Join(err, d.check("cuStreamDestroy_v2", callRes(purego.SyscallN(d.sym.streamDestroy, s.args...))))
	}
	return err
}
