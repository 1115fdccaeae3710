package gpu

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
)

// Work across devices (backend.Peer): a stream of one device waiting for an
// event of another, and copies between the memories of two devices.
//
// Waits. CUDA's cuStreamWaitEvent takes an event "from a different context
// or device than hStream" and then synchronizes across devices (CUDA
// Driver API); HIP's hipStreamWaitEvent has no device check and waits on
// the event's marker whatever its device (ROCm clr, hip_stream.cpp). A
// record stays on one device: both vendors refuse an event recorded on a
// stream of another device, so package qd records an event only on
// streams of its own Program.
//
// Copies. A copy between devices is Calls.CopyPeerAsync
// (cuMemcpyPeerAsync, hipMemcpyPeerAsync), which works whether or not the
// devices can reach each other's memory: without peer access the driver
// stages it through host memory. The first copy between two devices
// enables direct access both ways where Calls.CanAccessPeer says the
// hardware allows it: peer access of each device to the other's memory
// (cuCtxEnablePeerAccess, hipDeviceEnablePeerAccess), and access to the
// other's default memory pool (Calls.MemPoolSetAccess), since peer access
// covers only memory from MemAlloc and copies of pooled blocks would
// otherwise still be staged (Warp documents the same). Both are state of
// the devices' contexts, which the drivers keep for the life of the
// process, so each pair is enabled once per process. A failure to enable
// leaves the pair's copies staged; it never fails a copy.

// memAccessDesc is CUmemAccessDesc and hipMemAccessDesc: a location (type,
// id) and the access flags, three 32-bit fields in both vendors' headers.
type memAccessDesc struct {
	locType int32 // CU_MEM_LOCATION_TYPE_DEVICE, hipMemLocationTypeDevice: 1
	id      int32 // the device ordinal
	flags   int32 // CU_MEM_ACCESS_FLAGS_PROT_READWRITE, hipMemAccessFlagsProtReadWrite: 3
}

const (
	memLocationDevice   = 1
	memAccessReadWrite  = 3
	peerAccessFlagsNone = 0
)

// peerKey names a pair of devices of one driver by their contexts
// (Props.CurrentArg), the smaller first: two Devices opened on one GPU are
// the same device here.
type peerKey struct {
	drv  Driver
	a, b uintptr
}

// peerLink is what enabling a pair found.
type peerLink struct {
	once   sync.Once
	direct bool  // each device can access the other's memory and pool
	err    error // why enabling failed, when it did
}

// peerLinks holds a *peerLink per pair of devices, for the process.
var peerLinks sync.Map

// link enables direct access between x and y once per process and reports
// the outcome; devices on one context need nothing.
func link(x, y *Device) *peerLink {
	a, b := x.props.CurrentArg, y.props.CurrentArg
	if a == b {
		return &peerLink{direct: true}
	}
	if a > b {
		a, b, x, y = b, a, y, x
	}
	v, _ := peerLinks.LoadOrStore(peerKey{x.drv, a, b}, new(peerLink))
	l := v.(*peerLink)
	l.once.Do(func() {
		okXY, errXY := x.grantPeer(y)
		okYX, errYX := y.grantPeer(x)
		l.direct = okXY && okYX
		l.err = errors.Join(errXY, errYX)
	})
	return l
}

// grantPeer lets d access the memory of peer directly: peer access to
// what peer's MemAlloc returns, and access to peer's default memory pool.
// It reports false, with no error, when the hardware has no direct path.
func (d *Device) grantPeer(peer *Device) (bool, error) {
	var can int32
	if err := d.Do(func() error {
		return d.check(&d.c.CanAccessPeer, Call(&d.c.CanAccessPeer, uintptr(unsafe.Pointer(&can)), d.props.DeviceArg, peer.props.DeviceArg))
	}); err != nil || can == 0 {
		return false, err
	}
	err := d.Do(func() error {
		r := Call(&d.c.EnablePeerAccess, peer.props.CurrentArg, peerAccessFlagsNone)
		if r != 0 && r != d.codes.PeerAccessAlreadyEnabled {
			return d.fail(&d.c.EnablePeerAccess, r)
		}
		if peer.props.Pool == 0 || !d.c.MemPoolSetAccess.Bound() {
			return nil
		}
		desc := &memAccessDesc{locType: memLocationDevice, id: int32(d.props.Ordinal), flags: memAccessReadWrite}
		return d.check(&d.c.MemPoolSetAccess, Call(&d.c.MemPoolSetAccess, peer.props.Pool, uintptr(unsafe.Pointer(desc)), 1))
	})
	if err != nil {
		return false, fmt.Errorf("%s: enabling access from %s to %s: %w", d.Arch(), d, peer, err)
	}
	return true, nil
}

// PeerAccess reports whether d and peer (a device of the same driver)
// copy between their memories directly, enabling that first if it is
// not yet; err says why enabling failed, when it did. Copies between them
// work either way.
func (d *Device) PeerAccess(peer *Device) (direct bool, err error) {
	if peer == nil || peer.drv != d.drv {
		return false, fmt.Errorf("%s: PeerAccess: not a device of this driver", d.Arch())
	}
	l := link(d, peer)
	return l.direct, l.err
}

// peerBuffer checks that b is a live buffer of a device of d's driver.
func (d *Device) peerBuffer(b backend.Buffer, what string) (*buffer, error) {
	pb, ok := b.(*buffer)
	switch {
	case !ok || pb == nil:
		return nil, fmt.Errorf("%s: CopyPeer: the %s is a %T, not a buffer of this backend", d.Arch(), what, b)
	case pb.d.drv != d.drv:
		return nil, fmt.Errorf("%s: CopyPeer: the %s belongs to the %s backend", d.Arch(), what, pb.d.Arch())
	case pb.closed.Load():
		return nil, fmt.Errorf("%s: CopyPeer: the %s: %w", d.Arch(), what, errBufferClosed)
	case pb.d.closed.Load():
		return nil, fmt.Errorf("%s: CopyPeer: the %s's device (%s): %w", d.Arch(), what, pb.d, ErrDeviceClosed)
	}
	if l := pb.d.lost.Load(); l != nil {
		return nil, l
	}
	return pb, nil
}

// CopyPeer enqueues on bs, a stream of d, a copy of n bytes of src into
// dst, buffers of d or of other devices of its driver. Buffers of d's own
// context copy as CopyFrom does; others go through Calls.CopyPeerAsync,
// after the pair's access is enabled (once per process).
func (d *Device) CopyPeer(bs backend.Stream, dst, src backend.Buffer, n int) error {
	s, err := d.asStream(bs)
	if err != nil {
		return err
	}
	db, err := d.peerBuffer(dst, "destination")
	if err != nil {
		return err
	}
	sb, err := d.peerBuffer(src, "source")
	if err != nil {
		return err
	}
	if n < 0 || n > db.n || n > sb.n {
		return fmt.Errorf("%s: CopyPeer of %d bytes from a buffer of %d bytes into one of %d", d.Arch(), n, sb.n, db.n)
	}
	if n == 0 {
		return nil
	}
	here := d.props.CurrentArg
	dc, sc := db.d.props.CurrentArg, sb.d.props.CurrentArg
	if dc == here && sc == here {
		return db.copyAsync(&d.c.CopyDtoDAsync, uintptr(db.ptr), uintptr(sb.ptr), n, s)
	}
	if dc != sc {
		link(db.d, sb.d)
	}
	return d.copyPeer(s, db, sb, n)
}

// copyPeer is one Calls.CopyPeerAsync on s.
func (d *Device) copyPeer(s *stream, dst, src *buffer, n int) error {
	f := getFrame()
	f.a[0], f.a[1] = uintptr(dst.ptr), dst.d.props.CurrentArg
	f.a[2], f.a[3] = uintptr(src.ptr), src.d.props.CurrentArg
	f.a[4], f.a[5] = uintptr(n), s.h
	err := d.runOn(&d.c.CopyPeerAsync, f.a[:6])
	putFrame(f)
	return err
}

// RawCopyPeer is the reference of the peer-copy bar: Calls.CopyPeerAsync
// of n bytes on bs with nothing else on the path (the buffers are only
// type-asserted).
func (d *Device) RawCopyPeer(bs backend.Stream, dst, src backend.Buffer, n int) error {
	s, ok := bs.(*stream)
	db, ok2 := dst.(*buffer)
	sb, ok3 := src.(*buffer)
	if !ok || !ok2 || !ok3 {
		return fmt.Errorf("%s: RawCopyPeer: not this backend's stream and buffers", d.Arch())
	}
	return d.copyPeer(s, db, sb, n)
}

// WaitPeerEvent makes later work on bs, a stream of d, wait for the last
// record of be, an event of any device of d's driver (d's own included).
func (d *Device) WaitPeerEvent(bs backend.Stream, be backend.Event) error {
	s, err := d.asStream(bs)
	if err != nil {
		return err
	}
	e, ok := be.(*event)
	switch {
	case !ok || e == nil:
		return fmt.Errorf("%s: WaitPeerEvent: %T is not an event of this backend", d.Arch(), be)
	case e.d.drv != d.drv:
		return fmt.Errorf("%s: WaitPeerEvent: the event belongs to the %s backend", d.Arch(), e.d.Arch())
	case e.closed.Load():
		return errEventClosed
	}
	if l := e.d.lost.Load(); l != nil {
		return l
	}
	return s.waitFor(e)
}

var (
	_ backend.Peer          = (*Device)(nil)
	_ backend.RawPeerCopier = (*Device)(nil)
)
