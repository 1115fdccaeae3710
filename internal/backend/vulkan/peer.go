package vulkan

import (
	"fmt"
	"sync"

	"github.com/quadrants-go/qd/internal/backend"
)

// Work between devices (backend.Peer). Every Program opens a VkDevice of
// its own, and Vulkan orders submits only by the semaphores of one
// VkDevice and gives no device the memory of another (external memory and
// semaphores are extensions that not every driver has: lavapipe 22.3 has
// neither for timeline semaphores). So work between two devices goes
// through the host, without blocking the caller: a relay.
//
// A relay is a goroutine that gates the stream: the stream's later
// submits are held on the host (Stream.gateLocked) while the goroutine
// waits for the points its work needs (another device's event, the
// stream's own earlier work) and does that work (copies through staging
// memory on the other device's helper stream); then it makes the held
// submits. No queue ever waits for a signal not submitted yet: a device
// of one queue (lavapipe) would stall the helper copies queued behind
// such a wait, and the relays waiting for them, for good. A relay waits
// only for points made before it, so relays cannot wait for each other
// in a cycle.
//
// A goroutine holds each device it touches (Device.enter), and a device's
// Close, after its queues are idle, waits for those holds before it
// destroys anything: a relay still waiting for another device's point,
// or about to signal, keeps the semaphores it names alive. An error of a
// relay's work (a device lost, a device closed under a copy) goes to the
// stream, whose next Synchronize returns it; the gate is lifted all the
// same, so that nothing waits forever.

var _ backend.Peer = (*Device)(nil)

// enter holds d for a relay: false once d is closing.
func (d *Device) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing.Load() {
		return false
	}
	d.relays.Add(1)
	return true
}

// leave ends a hold of enter.
func (d *Device) leave() { d.relays.Done() }

// relay gates the later submits of s (Stream.gateLocked) until run, on a
// goroutine, has returned; point is the value of s that stands for that
// (reached once run has returned and s's work before it is done). run
// uses the devices of others (and s's device, held as well) only.
func (d *Device) relay(s *Stream, others []*Device, run func() error) (point uint64, err error) {
	held := make([]*Device, 0, len(others)+1)
	release := func() {
		for _, h := range held {
			h.leave()
		}
	}
	for _, o := range append([]*Device{d}, others...) {
		if !o.enter() {
			release()
			return 0, errDeviceClosed
		}
		held = append(held, o)
	}
	s.mu.Lock()
	switch {
	case s.closed.Load():
		err = errStreamClosed
	case s.capture != nil:
		err = errCaptureCross
	}
	if err != nil {
		s.mu.Unlock()
		release()
		return 0, err
	}
	g := s.gateLocked()
	// The stream's point after the relay: held until it is done, so that
	// a Synchronize, a Record or Close after this waits for it.
	point, err = s.submitLocked(0)
	if err != nil {
		s.mu.Unlock()
		s.liftGate(g)
		release()
		return 0, err
	}
	s.mu.Unlock()
	go func() {
		defer release()
		if err := run(); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
		s.liftGate(g)
	}()
	return point, nil
}

// WaitPeerEvent makes work enqueued later on bs wait for the last Record
// of be, an event of another Vulkan device, through a relay; an event
// never recorded, or reached already, needs none.
func (d *Device) WaitPeerEvent(bs backend.Stream, be backend.Event) error {
	s, err := d.stream(bs)
	if err != nil {
		return err
	}
	e, ok := be.(*Event)
	if !ok || e == nil {
		return fmt.Errorf("vulkan: WaitPeerEvent: %T is not an event of this backend", be)
	}
	if e.d == d {
		return s.WaitEvent(e)
	}
	o := e.d
	if _, err := o.event(e); err != nil {
		return err
	}
	if _, _, ok := e.capturedOn(); ok {
		return errCaptureCross
	}
	sem, value := e.point()
	if value == 0 {
		return nil
	}
	if got, err := o.vd.SemaphoreValue(sem); err != nil {
		return o.wrap(err)
	} else if got >= value {
		return nil
	}
	return d.relayWait(s, o, sem, value)
}

// relayWait makes the later submits of s wait, through a relay, for
// semaphore sem of device o (d itself, for a value held behind a relay of
// its stream) to reach value.
func (d *Device) relayWait(s *Stream, o *Device, sem, value uint64) error {
	var others []*Device
	if o != d {
		others = []*Device{o}
	}
	_, err := d.relay(s, others, func() error { return o.waitValue(sem, value) })
	return err
}

// CopyPeer enqueues on bs a copy of the first n bytes of src into dst,
// buffers of this device or of other Vulkan devices, through staging
// memory on the host: a relay per piece of up to a staging chunk. The
// copy reads src after the stream's earlier work, and the stream's later
// work comes after its writes.
func (d *Device) CopyPeer(bs backend.Stream, dst, src backend.Buffer, n int) error {
	s, err := d.stream(bs)
	if err != nil {
		return err
	}
	db, ok1 := dst.(*Buffer)
	sb, ok2 := src.(*Buffer)
	if !ok1 || !ok2 || db == nil || sb == nil {
		return fmt.Errorf("vulkan: CopyPeer between a %T and a %T", dst, src)
	}
	for _, b := range []*Buffer{db, sb} {
		if err := b.live(); err != nil {
			return err
		}
		if n < 0 || n > b.n {
			return fmt.Errorf("vulkan: CopyPeer of %d bytes with a buffer of %d bytes", n, b.n)
		}
	}
	from, to := sb.a.d, db.a.d
	if from == d && to == d {
		return db.CopyFrom(bs, src, n)
	}
	if s.capturing() {
		return errCaptureCross
	}
	chunk := min(d.staging.chunk(), from.staging.chunk(), to.staging.chunk())
	for done := 0; done < n; done += chunk {
		c := min(chunk, n-done)
		if err := d.copyPiece(s, db, sb, done, c); err != nil {
			return err
		}
	}
	return nil
}

// copyPiece is one relay of CopyPeer: c bytes at offset at of sb into db.
func (d *Device) copyPiece(s *Stream, db, sb *Buffer, at, c int) error {
	from, to := sb.a.d, db.a.d
	srcm, dstm := sb.a.mem, db.a.mem
	srcOff, dstOff := sb.off+at, db.off+at
	// The host side: staging of s's device for a buffer of its own, read or
	// written on s; the other device's for its buffer, on its helper stream.
	var mine staging
	if from == d || to == d {
		var err error
		if mine, err = d.staging.get(c); err != nil {
			return err
		}
	}
	var after uint64 // the point of s the relay's work starts at
	var err error
	if from == d {
		after, err = s.submit(func(cb uintptr) {
			d.vd.CmdCopy(cb, mine.m.Buffer, mine.off, srcm.Buffer, srcOff, c)
			d.vd.CmdHostReadBarrier(cb)
		})
	} else {
		after, err = s.point()
	}
	if err != nil {
		d.staging.put(mine)
		return err
	}
	var others []*Device
	for _, o := range []*Device{from, to} {
		if o != d && (len(others) == 0 || others[0] != o) {
			others = append(others, o)
		}
	}
	run := func() error {
		if from == d && to != d {
			defer d.staging.put(mine) // read here only
		}
		if err := d.waitValue(s.sem, after); err != nil {
			return err
		}
		if from == to { // both buffers on one other device
			return from.helperCopy(func(cb uintptr) { from.vd.CmdCopy(cb, dstm.Buffer, dstOff, srcm.Buffer, srcOff, c) })
		}
		var bytes []byte // the piece, on the host
		if from == d {
			if err := d.vd.Invalidate(mine.m); err != nil {
				return d.wrap(err)
			}
			bytes = mine.bytes()[:c]
		} else {
			st, err := from.staging.get(c)
			if err != nil {
				return err
			}
			defer from.staging.put(st)
			err = from.helperCopy(func(cb uintptr) {
				from.vd.CmdCopy(cb, st.m.Buffer, st.off, srcm.Buffer, srcOff, c)
				from.vd.CmdHostReadBarrier(cb)
			})
			if err == nil {
				err = from.vd.Invalidate(st.m)
			}
			if err != nil {
				return from.wrap(err)
			}
			bytes = st.bytes()[:c]
		}
		if to == d {
			copy(mine.bytes(), bytes)
			return d.wrap(d.vd.Flush(mine.m))
		}
		st, err := to.staging.get(c)
		if err != nil {
			return err
		}
		defer to.staging.put(st)
		copy(st.bytes(), bytes)
		if err := to.vd.Flush(st.m); err != nil {
			return to.wrap(err)
		}
		return to.helperCopy(func(cb uintptr) { to.vd.CmdCopy(cb, dstm.Buffer, dstOff, st.m.Buffer, st.off, c) })
	}
	point, err := d.relay(s, others, run)
	if err != nil {
		if from == d { // after the copy into it, which is enqueued
			s.onComplete(after, func() error { d.staging.put(mine); return nil })
		} else if to == d {
			d.staging.put(mine)
		}
		return err
	}
	if to != d {
		return nil // run gives mine back, if it has one
	}
	v, err := s.submit(func(cb uintptr) { d.vd.CmdCopy(cb, dstm.Buffer, dstOff, mine.m.Buffer, mine.off, c) })
	if err != nil {
		// run writes mine until the relay's point, which Close of s (or
		// of the device) passes before the stream's hooks run.
		s.onComplete(point, func() error { d.staging.put(mine); return nil })
		return err
	}
	s.onComplete(v, func() error { d.staging.put(mine); return nil })
	return nil
}

// helperCopy submits record's commands on the device's helper stream and
// waits for them: the other device's side of a relay.
func (d *Device) helperCopy(record func(cb uintptr)) error {
	h, err := d.helperStream()
	if err != nil {
		return err
	}
	v, err := h.submit(record)
	if err != nil {
		return err
	}
	if err := d.waitValue(h.sem, v); err != nil {
		return err
	}
	h.noteReached(v)
	h.poll(false)
	return nil
}

// helperStream is the device's stream for the relays of other devices'
// streams, made at first use.
func (d *Device) helperStream() (*Stream, error) {
	d.helperMu.Lock()
	defer d.helperMu.Unlock()
	if d.helper != nil {
		return d.helper, nil
	}
	h, err := d.newStream()
	if err != nil {
		return nil, err
	}
	// Not among the streams the caller made: Close releases it last.
	d.mu.Lock()
	delete(d.streams, h)
	d.mu.Unlock()
	d.helper = h
	return h, nil
}

// releaseHelper releases the helper stream, for Close.
func (d *Device) releaseHelper() error {
	d.helperMu.Lock()
	h := d.helper
	d.helperMu.Unlock()
	if h == nil {
		return nil
	}
	return h.release()
}

// helperState is the Device's part for relays (embedded).
type helperState struct {
	relays   sync.WaitGroup // relays holding the device (enter)
	helperMu sync.Mutex
	helper   *Stream
}
