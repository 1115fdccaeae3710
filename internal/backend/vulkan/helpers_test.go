package vulkan

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// openTestDevice opens Vulkan device 0, or skips (fails with
// QD_REQUIRE_VULKAN=1, as CI sets) where there is no loader or no device.
// Cleanup checks that the test closed everything it made, then closes the
// device.
func openTestDevice(t testing.TB) *Device {
	t.Helper()
	d := openOrSkip(t)
	t.Cleanup(func() {
		d.mu.Lock()
		ns, ne, nb := len(d.streams), len(d.events), len(d.buffers)
		d.mu.Unlock()
		d.hosts.mu.RLock()
		nh := len(d.hosts.list)
		d.hosts.mu.RUnlock()
		if ns+ne+nb+nh > 0 {
			t.Errorf("left open: %d streams, %d events, %d buffers, %d host buffers", ns, ne, nb, nh)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// openOrSkip opens device 0 without a cleanup.
func openOrSkip(t testing.TB) *Device {
	t.Helper()
	d, err := Open(0)
	if err != nil {
		absent := errors.Is(err, vk.ErrNoLoader) || errors.Is(err, gpu.ErrNoDevice)
		if absent && os.Getenv("QD_REQUIRE_VULKAN") != "1" {
			t.Skipf("no Vulkan device (.ci/install-vulkan.sh unpacks the loader and lavapipe; QD_REQUIRE_VULKAN=1 makes this a failure): %v", err)
		}
		t.Fatal(err)
	}
	return d
}

func newStream(t testing.TB, d *Device) *Stream {
	t.Helper()
	bs, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	s := bs.(*Stream)
	t.Cleanup(func() { s.Close() })
	return s
}

func newEvent(t testing.TB, d *Device, timing bool) *Event {
	t.Helper()
	be, err := d.NewEvent(timing)
	if err != nil {
		t.Fatal(err)
	}
	e := be.(*Event)
	t.Cleanup(func() { e.Close() })
	return e
}

func alloc(t testing.TB, d *Device, n int) *Buffer {
	t.Helper()
	bb, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	b := bb.(*Buffer)
	t.Cleanup(func() { b.Close() })
	return b
}

func allocHost(t testing.TB, d *Device, n int) *HostBuffer {
	t.Helper()
	hb, err := d.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	h := hb.(*HostBuffer)
	t.Cleanup(func() { h.Close() })
	return h
}

func view(t testing.TB, b backend.Buffer, off, n int) *Buffer {
	t.Helper()
	v, err := b.View(off, n)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*Buffer)
}

// write copies data into b on s (staged: data may change at once).
func write(t testing.TB, s *Stream, b backend.Buffer, data []byte) {
	t.Helper()
	if err := b.CopyFromHost(s, unsafe.Pointer(unsafe.SliceData(data)), len(data)); err != nil {
		t.Fatal(err)
	}
}

// read returns the first n bytes of b, read on s (staged: synchronous).
func read(t testing.TB, s *Stream, b backend.Buffer, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	if n == 0 {
		return out
	}
	if err := b.CopyToHost(s, unsafe.Pointer(&out[0]), n); err != nil {
		t.Fatal(err)
	}
	return out
}

func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7+int(seed)) ^ seed
	}
	return p
}

func syncStream(t testing.TB, s backend.Stream) {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

// firstDiff is the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// hostEvent is an event whose point the test reaches from the host: a
// semaphore of its own at value 1, signalled by the returned function. A
// submit that waits for it waits for the host, which shows that a wait
// was submitted (a host signal unblocks a queue where a signal queued
// behind the wait would not).
func hostEvent(t testing.TB, d *Device) (*Event, func()) {
	t.Helper()
	sem, err := d.vd.CreateTimeline()
	if err != nil {
		t.Fatal(err)
	}
	e := &Event{d: d, sem: sem, value: 1}
	signalled := false
	signal := func() {
		if !signalled {
			signalled = true
			if err := d.vd.SignalSemaphore(sem, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		signal()
		if err := d.vd.WaitIdle(); err != nil {
			t.Error(err)
		}
		d.vd.DestroySemaphore(sem)
	})
	return e, signal
}

func vkError(fn string, r int32) error { return &vk.Error{Func: fn, Result: vk.Result(r)} }

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func unsafePtrAdd(p unsafe.Pointer, n int) unsafe.Pointer { return unsafe.Add(p, n) }

// fakeStream and fakeBuffer are another backend's objects.
type (
	fakeStream struct{ backend.Stream }
	fakeBuffer struct{ backend.Buffer }
)
