package cuda

import (
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// CUresult values this package acts on (cuda.h).
const (
	success                     = 0
	errInvalidValue             = 1
	errOutOfMemory              = 2
	errNotInitialized           = 3
	errDeinitialized            = 4
	errStubLibrary              = 34
	errNoDevice                 = 100
	errInvalidDevice            = 101
	errInvalidImage             = 200
	errInvalidContext           = 201
	errNoBinaryForGPU           = 209
	errInvalidPTX               = 218
	errPeerUnsupported          = 217
	errJITNotFound              = 221
	errUnsupportedPTX           = 222
	errJITDisabled              = 223
	errInvalidHandle            = 400
	errNotFound                 = 500
	errNotReady                 = 600
	errIllegalAddress           = 700
	errOutOfResources           = 701
	errLaunchTimeout            = 702
	errPeerAccessAlreadyEnabled = 704
	errPeerAccessNotEnabled     = 705
	errAssert                   = 710
	errTooManyPeers             = 711
	errHardwareStack            = 714
	errIllegalInstr             = 715
	errMisalignedAddr           = 716
	errInvalidAddrSpace         = 717
	errInvalidPC                = 718
	errLaunchFailed             = 719
	errNotPermitted             = 800
	errNotSupported             = 801
	errUnknown                  = 999
)

// errorNames names the codes above, for messages when cuGetErrorName is
// not available (the library failed to load) or does not know a code.
var errorNames = map[int32]string{
	success:                     "CUDA_SUCCESS",
	errInvalidValue:             "CUDA_ERROR_INVALID_VALUE",
	errOutOfMemory:              "CUDA_ERROR_OUT_OF_MEMORY",
	errNotInitialized:           "CUDA_ERROR_NOT_INITIALIZED",
	errDeinitialized:            "CUDA_ERROR_DEINITIALIZED",
	errStubLibrary:              "CUDA_ERROR_STUB_LIBRARY",
	errNoDevice:                 "CUDA_ERROR_NO_DEVICE",
	errInvalidDevice:            "CUDA_ERROR_INVALID_DEVICE",
	errInvalidImage:             "CUDA_ERROR_INVALID_IMAGE",
	errInvalidContext:           "CUDA_ERROR_INVALID_CONTEXT",
	errNoBinaryForGPU:           "CUDA_ERROR_NO_BINARY_FOR_GPU",
	errInvalidPTX:               "CUDA_ERROR_INVALID_PTX",
	errPeerUnsupported:          "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	errJITNotFound:              "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	errUnsupportedPTX:           "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	errJITDisabled:              "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	errInvalidHandle:            "CUDA_ERROR_INVALID_HANDLE",
	errNotFound:                 "CUDA_ERROR_NOT_FOUND",
	errNotReady:                 "CUDA_ERROR_NOT_READY",
	errIllegalAddress:           "CUDA_ERROR_ILLEGAL_ADDRESS",
	errOutOfResources:           "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	errLaunchTimeout:            "CUDA_ERROR_LAUNCH_TIMEOUT",
	errPeerAccessAlreadyEnabled: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	errPeerAccessNotEnabled:     "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	errAssert:                   "CUDA_ERROR_ASSERT",
	errTooManyPeers:             "CUDA_ERROR_TOO_MANY_PEERS",
	errHardwareStack:            "CUDA_ERROR_HARDWARE_STACK_ERROR",
	errIllegalInstr:             "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	errMisalignedAddr:           "CUDA_ERROR_MISALIGNED_ADDRESS",
	errInvalidAddrSpace:         "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	errInvalidPC:                "CUDA_ERROR_INVALID_PC",
	errLaunchFailed:             "CUDA_ERROR_LAUNCH_FAILED",
	errNotPermitted:             "CUDA_ERROR_NOT_PERMITTED",
	errNotSupported:             "CUDA_ERROR_NOT_SUPPORTED",
	errUnknown:                  "CUDA_ERROR_UNKNOWN",
}

// classify says what a CUresult means to the runtime. The fatal codes are
// those the driver documents as "the process must be terminated and
// relaunched" (for CUDA_ERROR_ASSERT: "the context cannot be used
// anymore"): every later call on the context returns the same error, and
// so does a Program opened after, which qd.Init reports as a device lost
// earlier. HIP's table (package hip) classifies its codes of the same
// numbers alike.
func classify(code int32) gpu.Class {
	switch code {
	case errOutOfMemory:
		return gpu.OutOfMemory
	case errIllegalAddress, errLaunchTimeout, errHardwareStack, errIllegalInstr,
		errMisalignedAddr, errInvalidAddrSpace, errInvalidPC, errLaunchFailed, errAssert:
		return gpu.Fatal
	case errInvalidImage, errNoBinaryForGPU, errInvalidPTX, errJITNotFound,
		errUnsupportedPTX, errJITDisabled:
		return gpu.InvalidCode
	case errNotSupported:
		return gpu.NotSupported
	case errNoDevice, errInvalidDevice:
		return gpu.NoDevice
	}
	return gpu.Failed
}

// errorText asks the driver for the name and description of code, falling
// back on errorNames. The driver returns pointers to static C strings
// through a const char** out-parameter; they are read by scanning for NUL
// (no uintptr→pointer conversion, so go vet stays quiet).
func (d *driver) ErrorText(code int32) (name, msg string) {
	if d != nil && d.own.getErrorName.Bound() && d.own.getErrorString.Bound() {
		var p *byte
		if gpu.Call(&d.own.getErrorName, uintptr(code), uintptr(unsafe.Pointer(&p))) == success {
			name = gpu.GoString(p)
		}
		p = nil
		if gpu.Call(&d.own.getErrorString, uintptr(code), uintptr(unsafe.Pointer(&p))) == success {
			msg = gpu.GoString(p)
		}
	}
	if name == "" {
		name = errorNames[code]
	}
	return name, msg
}

// error is the DriverError of a failing call of fn.
func (d *driver) error(fn *gpu.Fn, code int32) *gpu.DriverError {
	return gpu.NewDriverError(d, fn.Name, code)
}
