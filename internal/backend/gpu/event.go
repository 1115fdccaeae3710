package gpu

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

var errEventClosed = backend.ClosedError("gpu: event closed")

// event is an event of a device.
type event struct {
	d        *Device
	h        uintptr
	args     []uintptr // {h}, read-only
	timing   bool
	recorded atomic.Bool
	closed   atomic.Bool
	cap      atomic.Pointer[capture] // the capture of the last Record, if any (graph.go)
}

// NewEvent creates an event. Events that do not time are created with the
// driver's disable-timing flag: recording and waiting on them is cheaper.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	return d.newEvent(timing)
}

func (d *Device) newEvent(timing bool) (*event, error) {
	flags := d.codes.EventDisableTiming
	if timing {
		flags = 0
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	var h uintptr
	r := res(purego.SyscallN(d.c.EventCreate.Addr, uintptr(unsafe.Pointer(&h)), flags))
	d.leave()
	if err := d.check(&d.c.EventCreate, r); err != nil {
		return nil, err
	}
	return &event{d: d, h: h, args: []uintptr{h}, timing: timing}, nil
}

func (d *Device) asEvent(be backend.Event) (*event, error) {
	e, ok := be.(*event)
	if !ok || e == nil {
		return nil, fmt.Errorf("%s: %T is not an event of this backend", d.Arch(), be)
	}
	if e.d != d {
		return nil, fmt.Errorf("%s: event belongs to another device", d.Arch())
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
	c := s.cap.Load()
	if err := e.record(s.h); err != nil {
		return err
	}
	e.cap.Store(c)
	e.recorded.Store(true)
	return nil
}

// captured refuses a host wait for an event recorded in a capture.
func (e *event) captured(call string) error {
	if e.cap.Load() != nil {
		return fmt.Errorf("%s: %s: %w", e.d.Arch(), call, errCapturedEvent)
	}
	return nil
}

func (e *event) record(stream uintptr) error {
	f := getFrame()
	f.a[0], f.a[1] = e.h, stream
	err := e.d.runOn(&e.d.c.EventRecord, f.a[:2])
	putFrame(f)
	return err
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
	if err := e.captured("Synchronize"); err != nil {
		return err
	}
	return e.d.run(&e.d.c.EventSynchronize, e.args)
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
	if err := e.captured("Query"); err != nil {
		return false, err
	}
	return e.query()
}

func (e *event) query() (bool, error) { return e.d.poll(&e.d.c.EventQuery, e.args) }

// Elapsed is the time between e's and end's recorded points. Both must be
// timing events, recorded, and reached; the errors say which condition
// failed rather than passing the driver's invalid-handle code through.
func (e *event) Elapsed(bend backend.Event) (time.Duration, error) {
	if e.closed.Load() {
		return 0, errEventClosed
	}
	d := e.d
	end, err := d.asEvent(bend)
	if err != nil {
		return 0, err
	}
	if !e.timing || !end.timing {
		return 0, fmt.Errorf("%s: Elapsed needs two timing events (created with timing on)", d.Arch())
	}
	if !e.recorded.Load() || !end.recorded.Load() {
		return 0, fmt.Errorf("%s: Elapsed needs two recorded events", d.Arch())
	}
	if err := errors.Join(e.captured("Elapsed"), end.captured("Elapsed")); err != nil {
		return 0, err
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	var ms float32
	r := res(purego.SyscallN(d.c.EventElapsed.Addr, uintptr(unsafe.Pointer(&ms)), e.h, end.h))
	d.leave()
	if r == d.codes.NotReady {
		return 0, fmt.Errorf("%s: Elapsed: an event's recorded work is not complete yet (Synchronize the end event first)", d.Arch())
	}
	if err := d.check(&d.c.EventElapsed, r); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Close destroys the event. Work waiting for it is not affected (the
// driver keeps what it needs). Close is idempotent.
func (e *event) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil
	}
	return e.d.run(&e.d.c.EventDestroy, e.args)
}
