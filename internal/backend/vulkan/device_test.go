package vulkan

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// TestRegistered checks the registration: Auto tries Vulkan after CUDA
// (0) and AMD GPUs (1), before the CPU (100).
func TestRegistered(t *testing.T) {
	b, ok := backend.Lookup("vulkan")
	if !ok {
		t.Fatal("the vulkan backend is not registered")
	}
	if b.Preference <= 1 || b.Preference >= 100 || b.Open == nil || b.Devices == nil {
		t.Fatalf("registered as %+v", b)
	}
}

// TestDevices lists the devices; with lavapipe's manifest (as CI sets)
// lavapipe is among them.
func TestDevices(t *testing.T) {
	openOrSkip(t).Close()
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		t.Fatal("no devices, yet device 0 opened")
	}
	lavapipe := false
	for i, in := range infos {
		t.Logf("%d: %+v", i, in)
		if in.Ordinal != i || in.Name == "" || !strings.HasPrefix(in.Target, "vulkan-1.") || !strings.HasPrefix(in.Driver, "Vulkan 1.") || !strings.Contains(in.Driver, "loader ") {
			t.Errorf("device %d: %+v", i, in)
		}
		lavapipe = lavapipe || strings.Contains(in.Name, "llvmpipe")
	}
	if strings.Contains(os.Getenv("VK_DRIVER_FILES"), "lvp") && !lavapipe {
		t.Errorf("VK_DRIVER_FILES names lavapipe, but no device is llvmpipe")
	}
	if _, err := Open(len(infos)); !errors.Is(err, gpu.ErrNoDevice) {
		t.Errorf("Open(%d) of %d devices: %v, want an error matching gpu.ErrNoDevice", len(infos), len(infos), err)
	}
	if _, err := Open(-1); !errors.Is(err, gpu.ErrNoDevice) {
		t.Errorf("Open(-1): %v, want an error matching gpu.ErrNoDevice", err)
	}
}

func TestDeviceBasics(t *testing.T) {
	d := openTestDevice(t)
	t.Log(d.Describe())
	if d.Arch() != "vulkan" || !strings.Contains(d.Describe(), "Vulkan 1.") || !strings.Contains(d.Describe(), "compute queue") {
		t.Errorf("Arch %q, Describe %q", d.Arch(), d.Describe())
	}
	if in := d.Info(); in.Ordinal != 0 || in.Name == "" {
		t.Errorf("Info %+v", in)
	}
	if l, g := d.PriorityRange(); l != 0 || g != 0 {
		t.Errorf("PriorityRange %d, %d", l, g)
	}
	if _, err := d.WrapStream(1); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("WrapStream: %v, want ErrUnsupported", err)
	}
	lim := d.limits()
	if lim.maxPushConstants < 128 || lim.maxGroupInvocations < 128 || lim.maxGroupCount[0] == 0 || lim.subgroupSize == 0 || lim.timestampPeriod <= 0 {
		t.Errorf("limits %+v", lim)
	}
	if d.device() == nil || d.physical() == nil || !d.features().TimelineSemaphore || !d.features().BufferDeviceAddress {
		t.Error("device, physical device or features missing")
	}
	for _, n := range []int{0, -1} {
		if _, err := d.Alloc(n); err == nil {
			t.Errorf("Alloc(%d) succeeded", n)
		}
		if _, err := d.AllocHost(n); err == nil {
			t.Errorf("AllocHost(%d) succeeded", n)
		}
	}
	if _, err := d.Alloc(1 << 62); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Errorf("Alloc(1<<62): %v, want ErrOutOfMemory", err)
	}
}

// TestDeviceClose closes a device with everything still open: Close
// releases it all, is idempotent, and every later call fails with an
// error matching ErrClosed.
func TestDeviceClose(t *testing.T) {
	d := openOrSkip(t)
	s, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.NewEvent(true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.AllocHost(1 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.(backend.Zeroer).Zero(s); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyToHost(s, h.Pointer(), h.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	hooked := false
	s.(*Stream).onComplete(1<<40, func() error { hooked = true; return nil })
	for i := range 2 {
		if err := d.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	if !hooked {
		t.Error("a hook of the stream did not run at Close")
	}
	if len(d.streams)+len(d.events)+len(d.buffers)+len(d.hosts.list) != 0 {
		t.Error("Close left objects registered")
	}
	calls := map[string]error{
		"NewStream":   second(d.NewStream(0)),
		"NewEvent":    second(d.NewEvent(false)),
		"Alloc":       second(d.Alloc(8)),
		"AllocHost":   second(d.AllocHost(8)),
		"AllocOn":     second(d.AllocOn(s, 8)),
		"Synchronize": s.Synchronize(),
		"Record":      e.Record(s),
		"Zero":        b.(backend.Zeroer).Zero(s),
	}
	for name, err := range calls {
		if !errors.Is(err, backend.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	for _, c := range []interface{ Close() error }{s, e, b, h} {
		if err := c.Close(); err != nil {
			t.Errorf("%T.Close after the device's: %v", c, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestErrorMapping checks the mapping of Vulkan results to the neutral
// sentinels, and that a lost device fails fast.
func TestErrorMapping(t *testing.T) {
	d := &Device{}
	oom := d.wrap(vkError("vkAllocateMemory", -2))
	if !errors.Is(oom, backend.ErrOutOfMemory) || !strings.Contains(oom.Error(), "vkAllocateMemory") {
		t.Errorf("out of device memory: %v", oom)
	}
	if host := d.wrap(vkError("vkCreateBuffer", -1)); !errors.Is(host, backend.ErrOutOfMemory) {
		t.Errorf("out of host memory: %v", host)
	}
	if d.usable() != nil {
		t.Fatal("a new device is not usable")
	}
	lost := d.wrap(vkError("vkQueueSubmit", -4))
	if !errors.Is(lost, backend.ErrDeviceLost) || errors.Is(lost, backend.ErrOutOfMemory) {
		t.Errorf("device lost: %v", lost)
	}
	if err := d.usable(); !errors.Is(err, backend.ErrDeviceLost) || !strings.Contains(err.Error(), "vkQueueSubmit") {
		t.Errorf("after a loss: %v", err)
	}
	if err := d.wrap(errors.New("plain")); err.Error() != "vulkan: plain" {
		t.Errorf("plain error: %v", err)
	}
}

// TestAutoSkipsCPUDevices: qd.Auto's open refuses a Vulkan device that
// runs on the CPU (lavapipe) with gpu.ErrNoDevice and a reason, and opens
// a GPU; Devices marks the first as Software.
func TestAutoSkipsCPUDevices(t *testing.T) {
	openTestDevice(t) // skips, or fails under QD_REQUIRE_VULKAN=1, without a device
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		dev, err := openAuto(in.Ordinal)
		switch {
		case in.Software && (err == nil || !errors.Is(err, gpu.ErrNoDevice) || !strings.Contains(err.Error(), "runs on the CPU")):
			t.Errorf("Auto's open of %s (a device on the CPU): %v", in.Name, err)
		case !in.Software && err != nil:
			t.Errorf("Auto's open of %s (a GPU): %v", in.Name, err)
		}
		if dev != nil {
			dev.Close()
		}
		if len(in.Details) == 0 || !strings.HasPrefix(in.Details[0], "type: ") {
			t.Errorf("%s: details %q, want the type first", in.Name, in.Details)
		}
	}
}

// TestIdleDeviceReuse: a closed Device leaves its logical device for the
// next Open of the ordinal; two Devices open at once have their own.
func TestIdleDeviceReuse(t *testing.T) {
	a := openOrSkip(t)
	vd := a.vd
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := openOrSkip(t)
	c := openOrSkip(t)
	if b.vd != vd {
		t.Error("Open after a Close made a new logical device instead of taking the idle one")
	}
	if c.vd == b.vd {
		t.Error("two Devices open at once share a logical device")
	}
	// The reused device works: a stream, a buffer, a copy.
	s := newStream(t, b)
	buf := alloc(t, b, 64)
	want := pattern(64, 5)
	write(t, s, buf, want)
	if got := read(t, s, buf, 64); firstDiff(got, want) >= 0 {
		t.Error("a copy on the reused device lost data")
	}
	s.Close()
	buf.Close()
	for _, d := range []*Device{b, c} {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
