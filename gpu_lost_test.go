package qd

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
)

// Init after a fault: a GPU's context stays lost for the rest of the
// process (CUDA documents its sticky errors so, and qd's CUDA driver does
// not reset a lost primary context), so a new Program fails at its first
// driver call, whichever that is. Init must say that the device was lost
// earlier and that a new process is needed, match ErrDeviceLost, and not
// pass it off as a backend that is unavailable (ErrUnsupported) or fall
// back to the CPU under Auto. These tests open the fake driver through
// Init, as the cuda backend for their duration.

// fakeCUDA registers, for the rest of t, a cuda backend whose devices are
// opened on drv by open (gpu.Open when nil); the real registration comes
// back after. It returns the fake driver, its faults and counts reset.
func fakeCUDA(t *testing.T, open func(gpu.Driver, int) (*gpu.Device, error)) *fakedriver.Driver {
	t.Helper()
	fakeOnce.Do(func() { fakeDrv, fakeErr = fakedriver.New() })
	if fakeErr != nil {
		t.Skipf("no fake driver on this platform: %v", fakeErr)
	}
	real, ok := backend.Lookup("cuda")
	if !ok {
		t.Fatal("no cuda backend registered")
	}
	if open == nil {
		open = gpu.Open
	}
	backend.Register(backend.Backend{
		Arch: "cuda", Preference: real.Preference,
		Open: func(ordinal int) (backend.Device, error) {
			d, err := open(fakeDrv, ordinal)
			if err != nil {
				return nil, err
			}
			return d, nil
		},
		Devices: func() ([]backend.DeviceInfo, error) { return []backend.DeviceInfo{{Name: "qd fake GPU"}}, nil },
	})
	t.Cleanup(func() { backend.Register(real) })
	fakeDrv.Reset()
	return fakeDrv
}

// checkLostAtInit checks that err is Init's error for a device lost
// earlier, naming the driver call that reported it.
func checkLostAtInit(t *testing.T, err error, call string) {
	t.Helper()
	if err == nil {
		t.Fatal("Init succeeded on a lost device")
	}
	msg := err.Error()
	for _, want := range []string{"qd: cuda device 0 was lost to a fault earlier in this process", "a kernel faulted", "a new process is needed", call} {
		if !strings.Contains(msg, want) {
			t.Errorf("Init's error lacks %q: %v", want, err)
		}
	}
	if !errors.Is(err, ErrDeviceLost) {
		t.Errorf("Init's error does not match ErrDeviceLost: %v", err)
	}
	if errors.Is(err, ErrUnsupported) || strings.Contains(msg, "unavailable") {
		t.Errorf("Init's error says the backend is unavailable: %v", err)
	}
}

// After a kernel faults, every later Init on the device fails as lost,
// whether the faulted Program is closed or still open, with CUDA or Auto;
// once the context is reset (a new process, on a real GPU) Init works.
func TestInitAfterFault(t *testing.T) {
	fake := fakeCUDA(t, nil)
	fake.SetSticky(true)
	defer fake.SetSticky(false)
	p, err := Init(WithArch(CUDA))
	if err != nil {
		t.Fatal(err)
	}
	m := must(Compile(p, suiteSrc))(t)
	fill := must(m.Kernel("fill"))(t)
	x := must(NewNdarray[float32](p, 64))(t)
	code, _ := fakedriver.CodeFor(fake, gpu.Fatal)
	fake.Inject(fakedriver.Fault{Call: "LaunchKernel", N: 1, Code: code})
	if err := fill.Launch(x, float32(1)); !errors.Is(err, ErrDeviceLost) {
		t.Fatalf("the faulting launch: %v", err)
	}
	fake.Reset()
	create := fake.Name("StreamCreate")
	_, err = Init(WithArch(CUDA))
	checkLostAtInit(t, err, create) // beside the lost Program
	p.Close()
	for _, arch := range []Arch{CUDA, Auto} {
		_, err := Init(WithArch(arch))
		checkLostAtInit(t, err, create)
	}
	fake.SetSticky(false) // the new process
	p, err = Init(WithArch(CUDA))
	if err != nil {
		t.Fatalf("Init once the context is reset: %v", err)
	}
	check(t, p.Close())
}

// Whichever driver call of Init first reports the fault, Init says the
// device was lost: each call a fresh Init makes, and the driver's own
// opening of the device (CUDA's first report was
// cuCtxGetStreamPriorityRange's, in OpenDevice).
func TestInitLostWhicheverCallReports(t *testing.T) {
	fake := fakeCUDA(t, nil)
	p, err := Init(WithArch(CUDA), WithTrace())
	if err != nil {
		t.Fatal(err)
	}
	calls := slices.Sorted(maps.Keys(fake.Counts())) // Init's, not Close's
	check(t, p.Close())
	if len(calls) == 0 {
		t.Fatal("Init made no driver call")
	}
	code, _ := fakedriver.CodeFor(fake, gpu.Fatal)
	for _, call := range calls {
		t.Run(call, func(t *testing.T) {
			fake.Inject(fakedriver.Fault{Call: call, N: 1, Code: code})
			p, err := Init(WithArch(CUDA), WithTrace())
			if err == nil {
				p.Close()
				t.Fatalf("%s failing: Init succeeded", call)
			}
			checkLostAtInit(t, err, fake.Name(call))
		})
	}

	// The driver's OpenDevice, which makes calls of its own; Auto does
	// not fall back to the CPU.
	fakeCUDA(t, func(drv gpu.Driver, ordinal int) (*gpu.Device, error) {
		return gpu.Open(failingOpen{drv, code}, ordinal)
	})
	for _, arch := range []Arch{CUDA, Auto} {
		p, err := Init(WithArch(arch))
		if err == nil {
			t.Errorf("WithArch(%v): Init opened %v", arch, p.Device())
			p.Close()
			continue
		}
		checkLostAtInit(t, err, "cuCtxGetStreamPriorityRange")
	}
}

// failingOpen is a driver whose OpenDevice fails with a fatal code, as
// CUDA's does on a lost primary context.
type failingOpen struct {
	gpu.Driver
	code int32
}

func (f failingOpen) OpenDevice(int) (*gpu.Props, error) {
	return nil, gpu.NewDriverError(f.Driver, "cuCtxGetStreamPriorityRange", f.code)
}

// initLostChild is set in the child process of TestInitAfterGPUFault.
const initLostChild = "QD_INIT_LOST_CHILD"

// On a real GPU, in a child process (the fault lasts as long as the
// process): a kernel's illegal store loses the device, and then Init, on
// CUDA and on Auto, says that the device was lost earlier.
func TestInitAfterGPUFault(t *testing.T) {
	if os.Getenv(initLostChild) != "" {
		initAfterFaultChild(t)
		return
	}
	if !slices.Contains(suiteArchs(t), CUDA) {
		t.Skip("no CUDA device: the fake driver's TestInitAfterFault stands in")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitAfterGPUFault$", "-test.v")
	cmd.Env = append(os.Environ(), initLostChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "INIT-LOST-OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func initAfterFaultChild(t *testing.T) {
	p, err := Init(WithArch(CUDA))
	if err != nil {
		t.Fatal(err)
	}
	m := must(Compile(p, "package k\n\n//qd:kernel\nfunc poke(x []uint32) {\n\tfor range 1 {\n\t\tx[1<<40] = 7\n\t}\n}\n"))(t)
	poke := must(m.Kernel("poke"))(t)
	x := must(NewNdarray[uint32](p, 4))(t)
	err = poke.Launch(x)
	if err == nil {
		err = p.Synchronize()
	}
	if !errors.Is(err, ErrDeviceLost) {
		t.Fatalf("an illegal store: %v, want ErrDeviceLost", err)
	}
	p.Close()
	for _, arch := range []Arch{CUDA, Auto} {
		p, err := Init(WithArch(arch))
		if err == nil {
			t.Fatalf("WithArch(%v) after the fault: Init opened %v", arch, p.Device())
		}
		if !errors.Is(err, ErrDeviceLost) || errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "lost to a fault earlier in this process") {
			t.Fatalf("WithArch(%v) after the fault: %v", arch, err)
		}
		t.Logf("WithArch(%v): %v", arch, err)
	}
	fmt.Println("INIT-LOST-OK")
}
