package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
)

// Sentinel errors; every error of this package that has one of these causes
// wraps it, so callers test with errors.Is.
var (
	// ErrNoDriver: libcuda could not be opened (no NVIDIA driver installed),
	// or it lacks a required symbol.
	ErrNoDriver = errors.New("cuda: no CUDA driver")
	// ErrNoDevice: the driver works but reports no usable device, or the
	// ordinal asked for does not exist.
	ErrNoDevice = errors.New("cuda: no CUDA device")
	// ErrDriverTooOld: the driver is older than minDriverVersion.
	ErrDriverTooOld = errors.New("cuda: CUDA driver too old")
	// ErrOutOfMemory: the device (or the host, for pinned memory) is out of
	// memory (CUDA_ERROR_OUT_OF_MEMORY).
	ErrOutOfMemory = errors.New("cuda: out of memory")
	// ErrInvalidPTX: the driver's JIT rejected the PTX text (invalid PTX, a
	// PTX ISA version newer than the driver, no JIT). The DriverError's Log
	// holds the JIT's error log.
	ErrInvalidPTX = errors.New("cuda: PTX rejected by the driver JIT")
	// ErrContextPoisoned: an earlier kernel failed in a way that leaves the
	// CUDA context unusable (illegal address, launch failure, ...). Every
	// later call on the device fails with this error; only a new process
	// recovers.
	ErrContextPoisoned = errors.New("cuda: device context unusable after a fatal kernel error")
	// ErrDeviceClosed: the Device was closed.
	ErrDeviceClosed = errors.New("cuda: device closed")
)

// CUresult values this package acts on (cuda.h).
const (
	cudaSuccess               = 0
	cudaErrorInvalidValue     = 1
	cudaErrorOutOfMemory      = 2
	cudaErrorNotInitialized   = 3
	cudaErrorDeinitialized    = 4
	cudaErrorStubLibrary      = 34
	cudaErrorNoDevice         = 100
	cudaErrorInvalidDevice    = 101
	cudaErrorInvalidImage     = 200
	cudaErrorInvalidContext   = 201
	cudaErrorNoBinaryForGPU   = 209
	cudaErrorInvalidPTX       = 218
	cudaErrorJITNotFound      = 221
	cudaErrorUnsupportedPTX   = 222
	cudaErrorJITDisabled      = 223
	cudaErrorInvalidHandle    = 400
	cudaErrorNotFound         = 500
	cudaErrorNotReady         = 600
	cudaErrorIllegalAddress   = 700
	cudaErrorOutOfResources   = 701
	cudaErrorLaunchTimeout    = 702
	cudaErrorHardwareStack    = 714
	cudaErrorIllegalInstr     = 715
	cudaErrorMisalignedAddr   = 716
	cudaErrorInvalidAddrSpace = 717
	cudaErrorInvalidPC        = 718
	cudaErrorLaunchFailed     = 719
	cudaErrorNotPermitted     = 800
	cudaErrorNotSupported     = 801
	cudaErrorUnknown          = 999
)

// errorNames names the codes above, for messages when cuGetErrorName is not
// available (the library failed to load) or does not know a code.
var errorNames = map[int32]string{
	cudaSuccess:               "CUDA_SUCCESS",
	cudaErrorInvalidValue:     "CUDA_ERROR_INVALID_VALUE",
	cudaErrorOutOfMemory:      "CUDA_ERROR_OUT_OF_MEMORY",
	cudaErrorNotInitialized:   "CUDA_ERROR_NOT_INITIALIZED",
	cudaErrorDeinitialized:    "CUDA_ERROR_DEINITIALIZED",
	cudaErrorStubLibrary:      "CUDA_ERROR_STUB_LIBRARY",
	cudaErrorNoDevice:         "CUDA_ERROR_NO_DEVICE",
	cudaErrorInvalidDevice:    "CUDA_ERROR_INVALID_DEVICE",
	cudaErrorInvalidImage:     "CUDA_ERROR_INVALID_IMAGE",
	cudaErrorInvalidContext:   "CUDA_ERROR_INVALID_CONTEXT",
	cudaErrorNoBinaryForGPU:   "CUDA_ERROR_NO_BINARY_FOR_GPU",
	cudaErrorInvalidPTX:       "CUDA_ERROR_INVALID_PTX",
	cudaErrorJITNotFound:      "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	cudaErrorUnsupportedPTX:   "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	cudaErrorJITDisabled:      "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	cudaErrorInvalidHandle:    "CUDA_ERROR_INVALID_HANDLE",
	cudaErrorNotFound:         "CUDA_ERROR_NOT_FOUND",
	cudaErrorNotReady:         "CUDA_ERROR_NOT_READY",
	cudaErrorIllegalAddress:   "CUDA_ERROR_ILLEGAL_ADDRESS",
	cudaErrorOutOfResources:   "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	cudaErrorLaunchTimeout:    "CUDA_ERROR_LAUNCH_TIMEOUT",
	cudaErrorHardwareStack:    "CUDA_ERROR_HARDWARE_STACK_ERROR",
	cudaErrorIllegalInstr:     "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	cudaErrorMisalignedAddr:   "CUDA_ERROR_MISALIGNED_ADDRESS",
	cudaErrorInvalidAddrSpace: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	cudaErrorInvalidPC:        "CUDA_ERROR_INVALID_PC",
	cudaErrorLaunchFailed:     "CUDA_ERROR_LAUNCH_FAILED",
	cudaErrorNotPermitted:     "CUDA_ERROR_NOT_PERMITTED",
	cudaErrorNotSupported:     "CUDA_ERROR_NOT_SUPPORTED",
	cudaErrorUnknown:          "CUDA_ERROR_UNKNOWN",
}

// DriverError is a CUresult other than CUDA_SUCCESS returned by a driver
// call.
type DriverError struct {
	Op   string // the driver function, e.g. "cuLaunchKernel"
	Code int32  // the CUresult
	Name string // cuGetErrorName, e.g. "CUDA_ERROR_INVALID_PTX"
	Msg  string // cuGetErrorString, a sentence from the driver
	Log  string // the JIT error log (cuModuleLoadDataEx), else empty
}

func (e *DriverError) Error() string {
	var b strings.Builder
	b.WriteString("cuda: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	name := e.Name
	if name == "" {
		name = "CUresult"
	}
	fmt.Fprintf(&b, "%s (%d)", name, e.Code)
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString("\nJIT log:\n")
		b.WriteString(log)
	}
	return b.String()
}

// Is maps CUresult codes to the package's sentinels (and to
// backend.ErrUnsupported for CUDA_ERROR_NOT_SUPPORTED).
func (e *DriverError) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return e.Code == cudaErrorOutOfMemory
	case ErrNoDevice:
		return e.Code == cudaErrorNoDevice || e.Code == cudaErrorInvalidDevice
	case ErrNoDriver:
		return e.Code == cudaErrorStubLibrary
	case ErrInvalidPTX:
		switch e.Code {
		case cudaErrorInvalidImage, cudaErrorNoBinaryForGPU, cudaErrorInvalidPTX,
			cudaErrorJITNotFound, cudaErrorUnsupportedPTX, cudaErrorJITDisabled:
			return true
		}
	case ErrContextPoisoned:
		return isFatal(e.Code)
	case backend.ErrUnsupported:
		return e.Code == cudaErrorNotSupported
	}
	return false
}

// isFatal reports whether code leaves the context unusable: the driver
// documents these as "the process must be terminated and relaunched", and
// every later call on the context returns the same error.
func isFatal(code int32) bool {
	switch code {
	case cudaErrorIllegalAddress, cudaErrorLaunchTimeout, cudaErrorHardwareStack,
		cudaErrorIllegalInstr, cudaErrorMisalignedAddr, cudaErrorInvalidAddrSpace,
		cudaErrorInvalidPC, cudaErrorLaunchFailed:
		return true
	}
	return false
}

// poisonedError is returned by every call on a device after a fatal error;
// it wraps ErrContextPoisoned and the first fatal DriverError.
type poisonedError struct {
	first *DriverError
}

func (e *poisonedError) Error() string {
	return fmt.Sprintf("cuda: device context unusable since an earlier fatal error (%s: %s); restart the process to use the GPU again",
		e.first.Op, e.first.Name)
}

func (e *poisonedError) Unwrap() []error { return []error{ErrContextPoisoned, e.first} }

// newDriverError builds the error for result code of op. names resolves
// the driver's name and message for code; it may be nil (no library).
func newDriverError(op string, code int32, names func(int32) (string, string)) *DriverError {
	e := &DriverError{Op: op, Code: code}
	if names != nil {
		e.Name, e.Msg = names(code)
	}
	if e.Name == "" {
		e.Name = errorNames[code]
	}
	return e
}
