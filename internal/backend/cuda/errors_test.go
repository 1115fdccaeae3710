package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

func TestDriverErrorFormat(t *testing.T) {
	e := &DriverError{Op: "cuLaunchKernel", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Msg: "an illegal memory access was encountered"}
	want := "cuda: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	jit := &DriverError{Op: "cuModuleLoadDataEx", Code: 218, Name: "CUDA_ERROR_INVALID_PTX",
		Log: "ptxas application ptx input, line 38; error   : Not a name of any known instruction: 'frob'\n"}
	got := jit.Error()
	if !strings.Contains(got, "CUDA_ERROR_INVALID_PTX (218)") || !strings.Contains(got, "\nJIT log:\nptxas application ptx input, line 38") {
		t.Errorf("JIT error lacks name or log: %q", got)
	}
	if strings.HasSuffix(got, "\n") {
		t.Errorf("JIT error ends with a newline: %q", got)
	}

	bare := &DriverError{Op: "cuInit", Code: 12345}
	if got := bare.Error(); got != "cuda: cuInit: CUresult (12345)" {
		t.Errorf("unnamed code: %q", got)
	}
}

func TestNewDriverErrorNames(t *testing.T) {
	// Without the driver, the local table names the code.
	e := newDriverError("cuMemAlloc_v2", cudaErrorOutOfMemory, nil)
	if e.Name != "CUDA_ERROR_OUT_OF_MEMORY" || e.Msg != "" {
		t.Errorf("fallback name: %+v", e)
	}
	// The driver's answer wins; an empty driver name falls back.
	e = newDriverError("x", cudaErrorNotReady, func(int32) (string, string) { return "DRIVER_NAME", "driver text" })
	if e.Name != "DRIVER_NAME" || e.Msg != "driver text" {
		t.Errorf("driver name: %+v", e)
	}
	e = newDriverError("x", cudaErrorNotReady, func(int32) (string, string) { return "", "text" })
	if e.Name != "CUDA_ERROR_NOT_READY" {
		t.Errorf("fallback after empty driver name: %+v", e)
	}
}

func TestDriverErrorIs(t *testing.T) {
	cases := []struct {
		code   int32
		target error
		want   bool
	}{
		{cudaErrorOutOfMemory, ErrOutOfMemory, true},
		{cudaErrorInvalidValue, ErrOutOfMemory, false},
		{cudaErrorNoDevice, ErrNoDevice, true},
		{cudaErrorInvalidDevice, ErrNoDevice, true},
		{cudaErrorStubLibrary, ErrNoDriver, true},
		{cudaErrorInvalidPTX, ErrInvalidPTX, true},
		{cudaErrorUnsupportedPTX, ErrInvalidPTX, true},
		{cudaErrorJITNotFound, ErrInvalidPTX, true},
		{cudaErrorInvalidHandle, ErrInvalidPTX, false},
		{cudaErrorIllegalAddress, ErrContextPoisoned, true},
		{cudaErrorLaunchFailed, ErrContextPoisoned, true},
		{cudaErrorMisalignedAddr, ErrContextPoisoned, true},
		{cudaErrorOutOfResources, ErrContextPoisoned, false}, // a bad launch configuration is not sticky
		{cudaErrorNotReady, ErrContextPoisoned, false},
		{cudaErrorNotSupported, backend.ErrUnsupported, true},
		{cudaErrorNotPermitted, backend.ErrUnsupported, false},
	}
	for _, c := range cases {
		var err error = newDriverError("op", c.code, nil)
		if got := errors.Is(err, c.target); got != c.want {
			t.Errorf("errors.Is(%s, %v) = %v, want %v", errorNames[c.code], c.target, got, c.want)
		}
	}
}

func TestPoisonedError(t *testing.T) {
	first := newDriverError("cuStreamSynchronize", cudaErrorIllegalAddress, nil)
	var err error = &poisonedError{first: first}
	if !errors.Is(err, ErrContextPoisoned) {
		t.Error("poisoned error does not wrap ErrContextPoisoned")
	}
	var de *DriverError
	if !errors.As(err, &de) || de != first {
		t.Error("poisoned error does not wrap the first fatal DriverError")
	}
	msg := err.Error()
	for _, want := range []string{"cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", "restart the process"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// A fatal code poisons the device: enter then fails fast, naming the first
// failure, without touching the driver (this device has none).
func TestCheckPoisons(t *testing.T) {
	d := &device{drv: &driver{}}
	if e := d.drv.err("cuInit", cudaErrorNoDevice); e.Name != "CUDA_ERROR_NO_DEVICE" {
		t.Fatalf("name without a library: %+v", e)
	}
	if err := d.check("cuMemAlloc_v2", cudaErrorOutOfMemory); err == nil || d.poison.Load() != nil {
		t.Fatalf("out of memory: err %v, poisoned %v", err, d.poison.Load() != nil)
	}
	if err := d.check("cuLaunchKernel", cudaErrorLaunchFailed); !errors.Is(err, ErrContextPoisoned) {
		t.Fatalf("launch failure: %v", err)
	}
	d.check("cuStreamSynchronize", cudaErrorIllegalAddress) // a second fatal error keeps the first
	err := d.enter()
	if !errors.Is(err, ErrContextPoisoned) || !strings.Contains(err.Error(), "cuLaunchKernel") {
		t.Fatalf("enter on a poisoned device: %v", err)
	}
	d.closed.Store(true)
	if err := d.enter(); !errors.Is(err, ErrDeviceClosed) {
		t.Fatalf("enter on a closed device: %v", err)
	}
}
