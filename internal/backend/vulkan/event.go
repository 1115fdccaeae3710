package vulkan

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
)

// Event is a point of a stream: the stream's timeline semaphore and the
// value of its last submit when Record ran. The semaphore outlives the
// stream (the device keeps it), so an event recorded on a stream closed
// since stays valid; value 0 is a point every semaphore has reached.
//
// A timing event owns a query pool of one timestamp: Record submits a
// command buffer that writes it after the stream's earlier work.
type Event struct {
	d      *Device
	timing bool
	qpool  uint64 // timing events: the timestamp's query pool
	closed atomic.Bool

	mu    sync.Mutex
	sem   uint64
	value uint64
	src   *Stream // the stream of the recorded point; nil for a capture's

	stamped bool // the recorded point carries a timestamp
	// captured: the last Record was on a capturing stream: it marks
	// point of capture cap (capture.go).
	captured bool
	cap      *capture
	capPoint *node
}

var _ backend.Event = (*Event)(nil)

// NewEvent makes an event; a timing event needs timestamps on the compute
// queue family, which some devices lack.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	e := &Event{d: d, timing: timing}
	if timing {
		if d.lim.timestampBits == 0 {
			return nil, fmt.Errorf("vulkan: %w: timing events: %s has no timestamps on its compute queues", backend.ErrUnsupported, d.phys.Name)
		}
		p, err := d.vd.CreateTimestampPool(1)
		if err != nil {
			return nil, d.wrap(err)
		}
		e.qpool = p
	}
	d.mu.Lock()
	if d.closing.Load() {
		d.mu.Unlock()
		d.vd.DestroyQueryPool(e.qpool)
		return nil, errDeviceClosed
	}
	d.events[e] = struct{}{}
	d.mu.Unlock()
	return e, nil
}

// point is the last recorded point: value 0 when never recorded.
func (e *Event) point() (sem, value uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sem, e.value
}

// pointOf is point with the stream it was recorded on (nil when never
// recorded, or in a capture).
func (e *Event) pointOf() (sem, value uint64, src *Stream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sem, e.value, e.src
}

// Record captures the work enqueued on bs so far, replacing the point
// recorded before. A timing event submits its timestamp's write; other
// events submit nothing (only the event waits bs has pending, which come
// before the point).
func (e *Event) Record(bs backend.Stream) error {
	if e.closed.Load() {
		return errEventClosed
	}
	s, err := e.d.stream(bs)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := s.capture
	s.mu.Unlock()
	if c != nil {
		// A point of the capture: a stream that waits for it joins the
		// capture (capture.go).
		c.mu.Lock()
		p := c.point(s)
		c.mu.Unlock()
		e.mu.Lock()
		e.sem, e.value, e.src, e.stamped, e.captured, e.cap, e.capPoint = s.sem, 0, nil, false, true, c, p
		e.mu.Unlock()
		return nil
	}
	var v uint64
	if e.timing {
		// Two Records of one timing event on different streams at once
		// would share the query: the point of each stays right, the
		// timestamp is the later write's.
		v, err = s.submit(func(cb uintptr) { e.d.vd.CmdTimestamp(cb, e.qpool, 0) })
	} else {
		v, err = s.point()
	}
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.sem, e.value, e.src, e.stamped, e.captured, e.cap, e.capPoint = s.sem, v, s, e.timing, false, nil, nil
	e.mu.Unlock()
	return nil
}

// Synchronize blocks until the last recorded point is reached; an event
// never recorded returns at once.
func (e *Event) Synchronize() error {
	if _, err := e.d.event(e); err != nil {
		return err
	}
	sem, v := e.point()
	if v == 0 {
		return nil
	}
	return e.d.waitValue(sem, v)
}

// Query reports whether the last recorded point is reached (an event
// never recorded is).
func (e *Event) Query() (bool, error) {
	if _, err := e.d.event(e); err != nil {
		return false, err
	}
	return e.reached()
}

func (e *Event) reached() (bool, error) {
	sem, v := e.point()
	if v == 0 {
		return true, nil
	}
	got, err := e.d.vd.SemaphoreValue(sem)
	if err != nil {
		return false, e.d.wrap(err)
	}
	return got >= v, nil
}

// Elapsed is the time from e's recorded point to end's, from the
// timestamps their Records wrote, in the device's timestampPeriod. Both
// must be timing events, recorded and reached.
func (e *Event) Elapsed(bend backend.Event) (time.Duration, error) {
	if _, err := e.d.event(e); err != nil {
		return 0, err
	}
	end, err := e.d.event(bend)
	if err != nil {
		return 0, err
	}
	if !e.timing || !end.timing {
		return 0, fmt.Errorf("vulkan: Elapsed needs two timing events (created with timing on)")
	}
	var ticks [2]uint64
	for i, ev := range []*Event{e, end} {
		ev.mu.Lock()
		stamped := ev.stamped
		ev.mu.Unlock()
		if !stamped {
			return 0, fmt.Errorf("vulkan: Elapsed needs two recorded events")
		}
		ok, err := ev.reached()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("vulkan: Elapsed: an event's recorded work is not complete yet (Synchronize the end event first)")
		}
		t, ok, err := e.d.vd.Timestamp(ev.qpool, 0)
		if err != nil {
			return 0, e.d.wrap(err)
		}
		if !ok {
			return 0, fmt.Errorf("vulkan: Elapsed: an event's timestamp is not available although its point is reached")
		}
		ticks[i] = t
	}
	ns := float64(int64(ticks[1]-ticks[0])) * e.d.lim.timestampPeriod
	return time.Duration(ns), nil
}

// Close releases the event. A timing event first waits for its last
// Record, whose submit still writes its query. Waits that other streams
// have submitted for the event are not affected: they wait for the
// stream's semaphore, which lives on. Close is idempotent.
func (e *Event) Close() error {
	if e.closed.Load() {
		return nil
	}
	var err error
	if e.timing && e.d.usable() == nil {
		if sem, v := e.point(); v > 0 {
			err = e.d.waitValue(sem, v)
		}
	}
	e.release()
	return err
}

// release destroys the event's query pool, once.
func (e *Event) release() {
	if !e.closed.CompareAndSwap(false, true) {
		return
	}
	e.d.vd.DestroyQueryPool(e.qpool)
	e.d.mu.Lock()
	delete(e.d.events, e)
	e.d.mu.Unlock()
}

// capturedOn reports whether the event's last Record marks a point of a
// capture, and which.
func (e *Event) capturedOn() (*capture, *node, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cap, e.capPoint, e.captured
}
