package vk

import (
	"errors"
	"os"
	"testing"
	"time"
	"unsafe"
)

// openDevice opens the first device with a compute queue, or skips (fails
// with QD_REQUIRE_VULKAN=1) where there is no loader or no device.
func openDevice(t *testing.T) *Device {
	t.Helper()
	need := os.Getenv("QD_REQUIRE_VULKAN") == "1"
	l, err := Open()
	if err != nil {
		if need || !errors.Is(err, ErrNoLoader) {
			t.Fatal(err)
		}
		t.Skipf("no Vulkan loader (.ci/install-vulkan.sh unpacks one with lavapipe): %v", err)
	}
	in, err := l.CreateInstance("qd-vk-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Destroy)
	pds, err := in.PhysicalDevices()
	if err != nil {
		t.Fatal(err)
	}
	for _, pd := range pds {
		info, err := in.Describe(pd)
		if err != nil {
			t.Fatal(err)
		}
		if info.ComputeFamily() < 0 {
			continue
		}
		t.Logf("device %s (%s, Vulkan %s), %d queue families, subgroups of %d", info.Name, TypeName(info.Type),
			APIVersionString(info.APIVersion), len(info.QueueFamilies), info.SubgroupSize)
		d, err := in.CreateDevice(info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Destroy)
		return d
	}
	if need {
		t.Fatal("QD_REQUIRE_VULKAN=1 but no Vulkan device has a compute queue")
	}
	t.Skip("no Vulkan device with a compute queue")
	return nil
}

// TestFillCopyTimeline runs a fill and a copy on the device, ordered by a
// timeline semaphore across two submits, and reads the result through the
// mapping.
func TestFillCopyTimeline(t *testing.T) {
	d := openDevice(t)
	const n = 1 << 16
	host := uint32(MemoryPropertyHostVisible | MemoryPropertyHostCoherent)
	a, err := d.Allocate(n, MemoryPropertyDeviceLocal, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	b, err := d.Allocate(n, host, MemoryPropertyHostVisible)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	if a.Address == 0 || b.Address == 0 || b.Mapped == nil {
		t.Fatalf("addresses %#x %#x, mapping %p", a.Address, b.Address, b.Mapped)
	}
	pool, err := d.CreateCommandPool()
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyCommandPool(pool)
	sem, err := d.CreateTimeline()
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroySemaphore(sem)
	ts, err := d.CreateTimestampPool(2)
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyQueryPool(ts)

	record := func(f func(cb uintptr)) uintptr {
		cb, err := d.AllocateCommandBuffer(pool)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Begin(cb, CommandBufferUsageOneTimeSubmit); err != nil {
			t.Fatal(err)
		}
		f(cb)
		if err := d.End(cb); err != nil {
			t.Fatal(err)
		}
		return cb
	}
	fill := record(func(cb uintptr) {
		d.CmdTimestamp(cb, ts, 0)
		d.CmdFill(cb, a.Buffer, 0, n, 0x01020304)
	})
	copyCB := record(func(cb uintptr) {
		d.CmdCopy(cb, b.Buffer, 0, a.Buffer, 0, n)
		d.CmdTimestamp(cb, ts, 1)
	})
	// The fill goes to the first queue and the copy to the last, ordered
	// by the semaphore alone (on a device of one queue both go to it). The
	// fill is submitted first: a wait submitted before its signal may
	// block a queue that the signal is queued behind, as on lavapipe.
	q0, q1 := d.Queues[0], d.Queues[len(d.Queues)-1]
	if err := d.Submit(q0, []uintptr{fill}, nil, sem, 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Submit(q1, []uintptr{copyCB}, []Wait{{sem, 1}}, sem, 2); err != nil {
		t.Fatal(err)
	}
	ok, err := d.WaitSemaphore(sem, 2, 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("wait: %v %v", ok, err)
	}
	if v, err := d.SemaphoreValue(sem); err != nil || v != 2 {
		t.Fatalf("semaphore value %d, %v", v, err)
	}
	words := unsafe.Slice((*uint32)(b.Mapped), n/4)
	for i, w := range words {
		if w != 0x01020304 {
			t.Fatalf("word %d is %#x after the fill and copy", i, w)
		}
	}
	t0, ok0, err0 := d.Timestamp(ts, 0)
	t1, ok1, err1 := d.Timestamp(ts, 1)
	if err0 != nil || err1 != nil || !ok0 || !ok1 || t1 < t0 {
		t.Fatalf("timestamps %d (%v, %v) and %d (%v, %v)", t0, ok0, err0, t1, ok1, err1)
	}
	// A host signal moves the timeline on.
	if err := d.SignalSemaphore(sem, 5); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.WaitSemaphore(sem, 5, 0); err != nil || !ok {
		t.Fatalf("after a host signal: %v %v", ok, err)
	}
	if ok, err := d.WaitSemaphore(sem, 6, time.Millisecond); err != nil || ok {
		t.Fatalf("a value never signalled: %v %v", ok, err)
	}
}
