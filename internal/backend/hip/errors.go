package hip

import (
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// The hipError_t values the code tests by name (hip_runtime_api.h,
// identical in ROCm 5.2 and 6.3); codes below names the rest.
const hipSuccess, hipErrInvalidValue, hipErrNoDevice, hipErrInvalidDevice, hipErrNotReady = 0, 1, 100, 101, 600

// hipErrPeerAccessAlreadyEnabled: hipDeviceEnablePeerAccess found access
// already on (hip_runtime_api.h, as CUDA's 704).
const hipErrPeerAccessAlreadyEnabled = 704

// codes names hipError_t values and says what each means to the runtime,
// for messages when the library cannot (it failed to load, or does not
// know a code) and for Classify. Fatal are the codes after which the
// context is unusable, as CUDA's sticky errors.
var codes = map[int32]struct {
	name  string
	class gpu.Class
}{
	hipErrInvalidValue:             {"hipErrorInvalidValue", gpu.Failed},
	2:                              {"hipErrorOutOfMemory", gpu.OutOfMemory},
	3:                              {"hipErrorNotInitialized", gpu.Failed},
	35:                             {"hipErrorInsufficientDriver", gpu.NotSupported},
	98:                             {"hipErrorInvalidDeviceFunction", gpu.InvalidCode},
	hipErrNoDevice:                 {"hipErrorNoDevice", gpu.NoDevice},
	hipErrInvalidDevice:            {"hipErrorInvalidDevice", gpu.NoDevice},
	200:                            {"hipErrorInvalidImage", gpu.InvalidCode},
	201:                            {"hipErrorInvalidContext", gpu.Failed},
	209:                            {"hipErrorNoBinaryForGpu", gpu.InvalidCode},
	218:                            {"hipErrorInvalidKernelFile", gpu.InvalidCode},
	300:                            {"hipErrorInvalidSource", gpu.InvalidCode},
	302:                            {"hipErrorSharedObjectSymbolNotFound", gpu.InvalidCode},
	400:                            {"hipErrorInvalidHandle", gpu.Failed},
	500:                            {"hipErrorNotFound", gpu.Failed},
	hipErrNotReady:                 {"hipErrorNotReady", gpu.Failed},
	700:                            {"hipErrorIllegalAddress", gpu.Fatal},
	701:                            {"hipErrorLaunchOutOfResources", gpu.Failed},
	702:                            {"hipErrorLaunchTimeOut", gpu.Fatal},
	hipErrPeerAccessAlreadyEnabled: {"hipErrorPeerAccessAlreadyEnabled", gpu.Failed},
	705:                            {"hipErrorPeerAccessNotEnabled", gpu.Failed},
	709:                            {"hipErrorContextIsDestroyed", gpu.Fatal},
	710:                            {"hipErrorAssert", gpu.Fatal},
	719:                            {"hipErrorLaunchFailure", gpu.Fatal},
	801:                            {"hipErrorNotSupported", gpu.NotSupported},
	999:                            {"hipErrorUnknown", gpu.Failed},
	1052:                           {"hipErrorRuntimeMemory", gpu.OutOfMemory},
}

func classify(code int32) gpu.Class { return codes[code].class }

// errorText asks the runtime for the name and description of code (both
// functions return static C strings), falling back on codes.
func (l *library) errorText(code int32) (name, msg string) {
	if l != nil {
		name = cString(&l.own.errName, code)
		msg = cString(&l.own.errString, code)
	}
	if name == "" || name == "hipErrorUnknown" && code != 999 {
		name = codes[code].name
	}
	if msg == name {
		msg = "" // ROCm 5 describes a code by its name
	}
	return name, msg
}

// cString calls fn(code), which returns a const char*, and copies the
// string (read through a **byte: no uintptr becomes a pointer here).
func cString(fn *gpu.Fn, code int32) string {
	if !fn.Bound() {
		return ""
	}
	r, _, _ := purego.SyscallN(fn.Addr, uintptr(code))
	return gpu.GoString(*(**byte)(unsafe.Pointer(&r)))
}
