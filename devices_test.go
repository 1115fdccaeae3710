package qd

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/hip"
)

// TestDevices: the CPU is always listed first and usable; every other
// entry is either a plausible device or says why its backend is not
// available.
func TestDevices(t *testing.T) {
	infos := Devices()
	if len(infos) < 3 {
		t.Fatalf("Devices() = %d entries, want at least CPU, CUDA, AMDGPU and Vulkan", len(infos))
	}
	cpu := infos[0]
	if cpu.Arch != CPU || cpu.Err != nil || cpu.Cores != runtime.GOMAXPROCS(0) || cpu.Name == "" || cpu.Driver != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("CPU entry %+v", cpu)
	}
	seen := map[Arch]bool{}
	for _, in := range infos {
		seen[in.Arch] = true
		t.Logf("%+v", in)
		if in.Err != nil {
			if in.Name != "" {
				t.Errorf("%s: unavailable (%v) yet named %q", in.Arch, in.Err, in.Name)
			}
			continue
		}
		if in.Arch == CUDA && (in.ComputeCapability == "" || in.MemoryBytes == 0 || in.Cores < 1) {
			t.Errorf("implausible CUDA device %+v", in)
		}
	}
	if !seen[CUDA] || !seen[AMDGPU] || !seen[Vulkan] {
		t.Errorf("Devices() lacks a backend: %v", seen)
	}
	for _, in := range infos {
		if in.Arch == AMDGPU && in.Err != nil && !errors.Is(in.Err, ErrUnsupported) {
			t.Errorf("AMDGPU entry: %v, want ErrUnsupported", in.Err)
		}
		if in.Arch == Vulkan && in.Err == nil && (len(in.Details) == 0 || !strings.Contains(in.String(), "Vulkan device")) {
			t.Errorf("Vulkan entry %+v: no details, or String %q", in, in.String())
		}
	}
	for _, a := range []Arch{CPU, CUDA, AMDGPU, Vulkan} {
		if archOf(a.String()) != a {
			t.Errorf("archOf(%q) = %v", a.String(), archOf(a.String()))
		}
	}
}

// Auto never takes a Vulkan device that runs on the CPU (lavapipe in CI).
func TestAutoSkipsSoftwareVulkan(t *testing.T) {
	p, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if d := p.Device(); d.Arch == Vulkan && d.Software {
		t.Errorf("Auto took %v, a Vulkan device on the CPU", d)
	}
}

// On a machine with the HIP libraries but no AMD GPU (CI): Auto does not
// pick AMDGPU, WithArch(AMDGPU) is an error wrapping ErrUnsupported that
// says no device was found, and Devices says why AMD is unavailable.
func TestAMDGPUWithoutDevice(t *testing.T) {
	err := hip.Available()
	switch {
	case err == nil:
		t.Skip("an AMD GPU is present")
	case errors.Is(err, gpu.ErrNoDriver):
		amdtools.Unavailable(t, "the HIP runtime (libamdhip64)", err)
	}
	if _, statErr := os.Stat("/dev/kfd"); statErr == nil {
		t.Skipf("/dev/kfd exists but HIP says %v", err)
	}
	p, err := Init(WithArch(AMDGPU))
	if err == nil {
		p.Close()
		t.Fatal("WithArch(AMDGPU) opened a device on a machine without one")
	}
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "no AMD GPU found") {
		t.Fatalf("WithArch(AMDGPU): %v; want an ErrUnsupported that says no AMD GPU was found", err)
	}
	t.Logf("WithArch(AMDGPU): %v", err)
	p, err = Init()
	if err != nil {
		t.Fatal(err)
	}
	if p.Arch() == AMDGPU {
		t.Errorf("Auto picked AMDGPU without a device")
	}
	p.Close()
	found := false
	for _, d := range Devices() {
		if d.Arch == AMDGPU {
			found = true
			if d.Err == nil || !strings.Contains(d.Err.Error(), "no AMD GPU found") {
				t.Errorf("Devices: AMDGPU entry %+v, want one saying no AMD GPU was found", d)
			}
		}
	}
	if !found {
		t.Error("Devices has no AMDGPU entry")
	}
}
