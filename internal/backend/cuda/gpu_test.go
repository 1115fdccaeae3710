package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// These tests cover what is CUDA's own; the runtime's behaviour on a CUDA
// device is tested in package gpu, against every driver.

// openGPU opens device 0 for a test and closes it when the test ends; it
// skips (fails under QD_GPU_RUN=1) without CUDA.
func openGPU(t testing.TB) (*driver, *gpu.Device) {
	t.Helper()
	drv, err := load()
	if err != nil {
		gputest.Unavailable(t, "CUDA", err)
	}
	return drv, gputest.Open(t, drv)
}

func TestGPUOpen(t *testing.T) {
	drv, d := openGPU(t)
	p := d.Props()
	dv := p.Driver.(*device)
	if dv.ccMajor < 3 || p.Target != fmt.Sprintf("sm_%d%d", dv.ccMajor, dv.ccMinor) {
		t.Errorf("compute capability %d.%d, target %q", dv.ccMajor, dv.ccMinor, p.Target)
	}
	if !strings.Contains(d.Describe(), "compute capability") || !strings.Contains(d.Describe(), p.Name) {
		t.Errorf("Describe() = %q", d.Describe())
	}
	if p.WarpSize != 32 {
		t.Errorf("warp size %d on an NVIDIA GPU", p.WarpSize)
	}
	if v := os.Getenv(maxConnectionsEnv); v == "" {
		t.Errorf("%s not set at driver start", maxConnectionsEnv)
	}
	if _, err := Open(drv.devices); !errors.Is(err, gpu.ErrNoDevice) {
		t.Errorf("Open of a missing ordinal: %v", err)
	}
}

// imageDriver is the CUDA driver with Build replaced: it hands the runtime
// a fixed image, so that loading hand-written PTX goes the normal way.
type imageDriver struct {
	*driver
	img *gpu.Image
}

func (d imageDriver) Build(*lower.Plan, *gpu.Props, backend.CompileOptions) (*gpu.Image, error) {
	return d.img, nil
}

func compileImage(t *testing.T, drv *driver, ptxText, entry string) error {
	t.Helper()
	img := &gpu.Image{Code: gpu.CString(ptxText), Layout: &kabi.Module{Name: "k", Tasks: []kabi.Task{{Entry: entry, Kind: lower.Serial, BlockDim: 1}}}}
	d, err := gpu.Open(imageDriver{drv, img}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := ir.NewBuilder("k")
	b.ForRange("i", ir.I32c(1), func(*ir.Var) {})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Compile(plan, backend.CompileOptions{})
	if err == nil {
		m.Close()
	}
	if _, aerr := d.Alloc(16); aerr != nil {
		t.Errorf("the device is unusable after loading %s: %v", entry, aerr)
	}
	return err
}

// A JIT failure carries the JIT's error log and wraps gpu.ErrInvalidCode,
// without losing the device; a missing entry names it.
func TestGPUBadPTX(t *testing.T) {
	drv, _ := openGPU(t)
	bad := ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32 %f1;\n\tret;\n}\n"
	err := compileImage(t, drv, bad, "k")
	var de *gpu.DriverError
	if !errors.As(err, &de) || !errors.Is(err, gpu.ErrInvalidCode) || de.Log == "" {
		t.Fatalf("bad PTX: %v", err)
	}
	t.Logf("%v", err)
	good := ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
	if err := compileImage(t, drv, good, "no_such_entry"); err == nil || !strings.Contains(err.Error(), "no_such_entry") {
		t.Errorf("missing entry: %v", err)
	}
	if _, err := drv.Load(&gpu.Image{Code: []byte(good)}); err == nil {
		t.Error("Load of PTX without its NUL succeeded")
	}
}

func TestGPUStreamPriorities(t *testing.T) {
	drv, d := openGPU(t)
	getPrio := gpu.Fn{Name: "cuStreamGetPriority", Addr: drv.lib.Lookup("cuStreamGetPriority")}
	if !getPrio.Bound() {
		t.Fatal("libcuda lacks cuStreamGetPriority")
	}
	least, greatest := d.PriorityRange()
	for _, c := range []struct{ ask, want int }{
		{least, least}, {greatest, greatest}, {greatest - 100, greatest}, {least + 100, least},
	} {
		s, err := d.NewStream(c.ask)
		if err != nil {
			t.Fatal(err)
		}
		var p int32
		r := int32(-1)
		d.Do(func() error { r = gpu.Call(&getPrio, s.Handle(), uintptr(unsafe.Pointer(&p))); return nil })
		if r != success || int(p) != c.want {
			t.Errorf("NewStream(%d): priority %d (r=%d), want %d", c.ask, p, r, c.want)
		}
		s.Close()
	}
}
