// Package gputest holds what the GPU runtime's tests and its drivers'
// tests share: whether a GPU is required, and a device opened for a test.
// Only tests import it.
package gputest

import (
	"os"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Required reports whether GPU tests must run: with QD_GPU_RUN=1 (set on
// the GPU machine) a missing or broken device fails them instead of
// skipping them, so a run there cannot pass by skipping.
func Required() bool { return os.Getenv("QD_GPU_RUN") == "1" }

// Unavailable skips t because drv's device is unavailable for why, or
// fails it under QD_GPU_RUN=1.
func Unavailable(t testing.TB, drv string, why error) {
	t.Helper()
	if Required() {
		t.Fatalf("QD_GPU_RUN=1 but %s is unavailable: %v", drv, why)
	}
	t.Skipf("no %s device: %v", drv, why)
}

// Open opens device 0 of drv for t and closes it when t ends, reporting an
// error of Close.
func Open(t testing.TB, drv gpu.Driver) *gpu.Device {
	t.Helper()
	d, err := gpu.Open(drv, 0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Device.Close: %v", err)
		}
	})
	return d
}
