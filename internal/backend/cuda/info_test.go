package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
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
		if !errors.Is(err, gpu.ErrNoDriver) && !errors.Is(err, gpu.ErrNoDevice) && !errors.Is(err, gpu.ErrDriverTooOld) {
			t.Fatalf("Devices: %v wraps no sentinel", err)
		}
		if Available() == nil {
			t.Fatalf("Devices failed (%v) but Available says CUDA works", err)
		}
		t.Logf("CUDA unavailable: %v", err)
		if gputest.Required() {
			t.Fatal("QD_GPU_RUN=1 but CUDA is unavailable")
		}
		t.Skip("no CUDA device")
	}
	if len(infos) == 0 {
		t.Fatal("Devices: no error and no device")
	}
	for _, in := range infos {
		t.Logf("%+v", in)
		if in.Name == "" || in.ComputeCapability == "" || !strings.HasPrefix(in.Target, "sm_") || in.Cores < 1 || in.MemoryBytes == 0 || !strings.HasPrefix(in.Driver, "CUDA ") {
			t.Errorf("implausible device: %+v", in)
		}
	}
}
