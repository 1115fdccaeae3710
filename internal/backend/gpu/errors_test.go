package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

func TestDriverErrorFormat(t *testing.T) {
	e := &DriverError{Arch: "cuda", Op: "cuLaunchKernel", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Msg: "an illegal memory access was encountered"}
	want := "cuda: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	jit := &DriverError{Arch: "cuda", Op: "cuModuleLoadDataEx", Code: 218, Name: "CUDA_ERROR_INVALID_PTX",
		Log: "ptxas application ptx input, line 38; error   : Not a name of any known instruction: 'frob'\n"}
	got := jit.Error()
	if !strings.Contains(got, "CUDA_ERROR_INVALID_PTX (218)") || !strings.Contains(got, "\ncompiler log:\nptxas application ptx input, line 38") {
		t.Errorf("compile error lacks name or log: %q", got)
	}
	if strings.HasSuffix(got, "\n") {
		t.Errorf("compile error ends with a newline: %q", got)
	}
	bare := &DriverError{Arch: "amdgpu", Op: "hipInit", Code: 12345}
	if got := bare.Error(); got != "amdgpu: hipInit: result (12345)" {
		t.Errorf("unnamed code: %q", got)
	}
}

// The class a driver gives a code decides which neutral sentinel the error
// matches.
func TestDriverErrorIs(t *testing.T) {
	cases := []struct {
		class  Class
		target error
		want   bool
	}{
		{OutOfMemory, backend.ErrOutOfMemory, true},
		{Failed, backend.ErrOutOfMemory, false},
		{Fatal, backend.ErrDeviceLost, true},
		{OutOfMemory, backend.ErrDeviceLost, false},
		{NotSupported, backend.ErrUnsupported, true},
		{Failed, backend.ErrUnsupported, false},
		{InvalidCode, ErrInvalidCode, true},
		{NoDevice, ErrNoDevice, true},
		{Fatal, ErrNoDevice, false},
	}
	for _, c := range cases {
		var err error = &DriverError{Arch: "x", Op: "op", Class: c.class}
		if got := errors.Is(err, c.target); got != c.want {
			t.Errorf("errors.Is(class %d, %v) = %v, want %v", c.class, c.target, got, c.want)
		}
	}
}

func TestNewDriverError(t *testing.T) {
	e := NewDriverError(nullDriver{}, "nullAlloc", 2)
	if e.Arch != "null" || e.Name != "NULL_2" || e.Class != OutOfMemory || !errors.Is(e, backend.ErrOutOfMemory) {
		t.Errorf("NewDriverError = %+v", e)
	}
}

func TestLostError(t *testing.T) {
	first := NewDriverError(nullDriver{}, "nullStreamSynchronize", 700)
	var err error = &lostError{first: first}
	if !errors.Is(err, backend.ErrDeviceLost) {
		t.Error("lost error does not wrap ErrDeviceLost")
	}
	var de *DriverError
	if !errors.As(err, &de) || de != first {
		t.Error("lost error does not wrap the first fatal DriverError")
	}
	for _, want := range []string{"nullStreamSynchronize", "NULL_700"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// A fatal code marks the device lost: enter then fails fast, naming the
// first failure, without touching the driver (this device has none).
func TestFatalCodeLosesDevice(t *testing.T) {
	d := fakeDevice()
	alloc, launch, sync := &Fn{Name: "nullAlloc"}, &Fn{Name: "nullLaunch"}, &Fn{Name: "nullStreamSynchronize"}
	if err := d.check(alloc, 2); !errors.Is(err, backend.ErrOutOfMemory) || d.lost.Load() != nil {
		t.Fatalf("out of memory: err %v, lost %v", err, d.lost.Load() != nil)
	}
	if err := d.check(launch, 719); !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("launch failure: %v", err)
	}
	d.check(sync, 700) // a second fatal error keeps the first
	err := d.enter()
	if !errors.Is(err, backend.ErrDeviceLost) || !strings.Contains(err.Error(), "nullLaunch") {
		t.Fatalf("enter on a lost device: %v", err)
	}
	if d.check(alloc, 0) != nil {
		t.Error("success is an error")
	}
	d.closed.Store(true)
	if err := d.enter(); !errors.Is(err, ErrDeviceClosed) {
		t.Fatalf("enter on a closed device: %v", err)
	}
}
