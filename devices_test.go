package qd

import (
	"errors"
	"runtime"
	"testing"
)

// TestDevices: the CPU is always listed first and usable; every other
// entry is either a plausible device or says why its backend is not
// available.
func TestDevices(t *testing.T) {
	infos := Devices()
	if len(infos) < 3 {
		t.Fatalf("Devices() = %d entries, want at least CPU, CUDA and AMDGPU", len(infos))
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
	if !seen[CUDA] || !seen[AMDGPU] {
		t.Errorf("Devices() lacks a backend: %v", seen)
	}
	if in := infos[len(infos)-1]; in.Arch == AMDGPU && !errors.Is(in.Err, ErrUnsupported) {
		t.Errorf("AMDGPU entry: %v, want ErrUnsupported", in.Err)
	}
}
