// Package gputest holds what the GPU runtime's tests and its drivers'
// tests share: whether a GPU is required, and a device opened for a test.
// Only tests import it.
package gputest

import (
	"errors"
	"os"
	"strconv"
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
	closeAtEnd(t, d)
	return d
}

func closeAtEnd(t testing.TB, d *gpu.Device) {
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Device.Close: %v", err)
		}
	})
}

// RequiredCount is how many GPUs multi-GPU tests must find: QD_GPU_COUNT=N
// (set on a machine with N GPUs) makes a test that needs more devices than
// the machine shows fail instead of skipping; 0 when unset.
func RequiredCount() int {
	n, _ := strconv.Atoi(os.Getenv("QD_GPU_COUNT"))
	return n
}

// TooFew skips t, which needs need devices of drv where have exist, with a
// notice; under QD_GPU_COUNT ≥ need it fails instead, except for the fake
// driver, whose one device says nothing about the machine.
func TooFew(t testing.TB, drv string, need, have int) {
	t.Helper()
	if RequiredCount() >= need && drv != "fake" {
		t.Fatalf("QD_GPU_COUNT=%d but %s shows %d device(s); this test needs %d", RequiredCount(), drv, have, need)
	}
	t.Skipf("needs %d %s devices, this machine has %d: skipped (set QD_GPU_COUNT=%d where there are)", need, drv, have, need)
}

// OpenOrdinal opens device ordinal of drv for t and closes it when t ends;
// where the driver has no such device, it calls TooFew.
func OpenOrdinal(t testing.TB, drv gpu.Driver, ordinal int) *gpu.Device {
	t.Helper()
	d, err := gpu.Open(drv, ordinal)
	if errors.Is(err, gpu.ErrNoDevice) {
		TooFew(t, drv.Arch(), ordinal+1, ordinal)
	}
	if err != nil {
		t.Fatalf("Open(%d): %v", ordinal, err)
	}
	closeAtEnd(t, d)
	return d
}
