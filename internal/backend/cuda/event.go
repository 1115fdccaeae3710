package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// CUevent_flags.
const (
	eventDefault       = 0
	eventDisableTiming = 2
)

var errEventClosed = errors.New("cuda: event closed")

// event is a CUevent of a device.
type event struct {
	d        *device
	h        uintptr
	args     []uintptr // {h}, read-only
	timing   bool
	recorded atomic.Bool
	closed   atomic.Bool
}

// NewEvent creates an event. Events that do not time are created with
// CU_EVENT_DISABLE_TIMING: recording and waiting on them is cheaper.
func (d *device) NewEvent(timing bool) (backend.Event, error) {
	return d.newEvent(timing)
}

func (d *device) newEvent(timing bool) (*event, error) {
	flags := uintptr(eventDisableTiming)
	if timing {
		flags = eventDefault
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	var h uintptr
	r := callRes(purego.SyscallN(d.sym.eventCreate, uintptr(unsafe.Pointer(&h)), flags))
	d.leave()
	if err := d.check("cuEventCreate", r); err != nil {
		return nil, err
	}
	return &event{d: d, h: h, args: []uintptr{h}, timing: timing}, nil
}

func (d *device) asEvent(be backend.Event) (*event, error) {
	e, ok := be.(*event)
	if !ok || e == nil {
		return nil, fmt.Errorf("cuda: %T is not a CUDA event", be)
	}
	if e.d != d {
		return nil, errors.New("cuda: event belongs to another device")
	}
	if e.closed.Load() {
		return nil, errEventClosed
	}
	return e, nil
}

// Record captures the work enqueued on bs so far.
func (e *event) Record(bs backend.Stream) error {
	if e.closed.Load() {
		return errEventClosed
	}
	s, err := e.d.asStream(bs)
	if err != nil {
		return err
	}
	if err := e.record(s.h); err != nil {
		return err
	}
	e.recorded.Store(true)
	return nil
}

func (e *event) record(stream uintptr) error {
	d := e.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1] = e.h, stream
	r := callRes(purego.SyscallN(d.sym.eventRecord, f.a[:2]...))
	putFrame(f)
	d.leave()
	return d.check("cuEventRecord", r)
}

// Synchronize blocks until the last recorded point is reached; an event
// never recorded returns at once.
func (e *event) Synchronize() error {
	if e.closed.Load() {
		return errEventClosed
	}
	if !e.recorded.Load() {
		return nil
	}
	d := e.d
	if err := d.enter(); err != nil {
		return err
	}
	r := callRes(purego.SyscallN(d.sym.eventSynchronize, e.args...))
	d.leave()
	return d.check("cuEventSynchronize", r)
}

// Query reports whether the last recorded point is reached (an event never
// recorded is).
func (e *event) Query() (bool, error) {
	if e.closed.Load() {
		return false, errEventClosed
	}
	if !e.recorded.Load() {
		return true, nil
	}
	return e.query()
}

func (e *event) query() (bool, error) {
	d := e.d
	if err := d.enter(); err != nil {
		return false, err
	}
	r := callRes(purego.SyscallN(d.sym.eventQuery, e.args...))
	d.leave()
	if r == cudaErrorNotReady {
		return false, nil
	}
	if err := d.check("cuEventQuery", r); err != nil {
		return false, err
	}
	return true, nil
}

// Elapsed is the time between e's and end's recorded points. Both must be
// timing events, recorded, and reached; the errors say which condition
// failed rather than passing the driver's INVALID_HANDLE through.
func (e *event) Elapsed(bend backend.Event) (time.Duration, error) {
	if e.closed.Load() {
		return 0, errEventClosed
	}
	end, err := e.d.asEvent(bend)
	if err != nil {
		return 0, err
	}
	if !e.timing || !end.timing {
		return 0, errors.New("cuda: Elapsed needs two timing events (created with timing on)")
	}
	if !e.recorded.Load() || !end.recorded.Load() {
		return 0, errors.New("cuda: Elapsed needs two recorded events")
	}
	d := e.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	var ms float32
	r := callRes(purego.SyscallN(d.sym.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), e.h, end.h))
	d.leave()
	if r == cudaErrorNotReady {
		return 0, errors.New("cuda: Elapsed: an event's recorded work is not complete yet (Synchronize the end event first)")
	}
	if err := d.check("cuEventElapsedTime", r); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Close destroys the event. Work waiting for it is not affected (the driver
// keeps what it needs). Close is idempotent.
func (e *event) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := e.d
	if err := d.enter(); err != nil {
		return err
	}
	r := callRes(purego.SyscallN(d.sym.eventDestroy, e.args...))
	d.leave()
	return d.check("cuEventDestroy_v2", r)
}
