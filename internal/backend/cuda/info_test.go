package cuda

import (
	"errors"
	"testing"
)

func TestParseKernelVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Jan  1 00:00:00 UTC 2026\nGCC version:  gcc 12.2\n", "580.159.04"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  (dvs-builder@U16)\n", "535.104.05"},
		{"GCC version: 12.2\n", ""},
		{"", ""},
	} {
		if got := parseKernelVersion(c.in); got != c.want {
			t.Errorf("parseKernelVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDevices: with a GPU every device has plausible properties; without
// one the error says why, through the package's sentinels.
func TestDevices(t *testing.T) {
	infos, err := Devices()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrDriverTooOld) {
			t.Fatalf("Devices: %v wraps no sentinel", err)
		}
		if Available() == nil {
			t.Fatalf("Devices failed (%v) but Available says CUDA works", err)
		}
		t.Logf("CUDA unavailable: %v", err)
		requireGPU(t) // skips, or fails under QD_GPU_RUN=1
		return
	}
	if len(infos) == 0 {
		t.Fatal("Devices: no error and no device")
	}
	for _, in := range infos {
		t.Log(in, "driver CUDA", in.CUDAVersion, in.KernelDriver)
		if in.Name == "" || in.CCMajor < 3 || in.SMs < 1 || in.MemoryBytes == 0 || in.CUDAVersion == "" {
			t.Errorf("implausible device: %+v", in)
		}
	}
}
