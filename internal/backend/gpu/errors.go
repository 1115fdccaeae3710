package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
)

// Sentinel errors; every error of the runtime and of its drivers that has
// one of these causes wraps it, so callers test with errors.Is.
var (
	// ErrNoDriver: the vendor library could not be opened (no driver
	// installed, a platform without the vendor's driver), or it lacks a
	// required function.
	ErrNoDriver = errors.New("no GPU driver")
	// ErrNoDevice: the driver works but reports no usable device, or the
	// ordinal asked for does not exist.
	ErrNoDevice = errors.New("no GPU device")
	// ErrDriverTooOld: the driver is older than the backend supports.
	ErrDriverTooOld = errors.New("GPU driver too old")
	// ErrInvalidCode: the driver rejected the generated device code (its
	// compiler's log is in the DriverError).
	ErrInvalidCode = errors.New("device code rejected by the driver")
	// ErrDeviceClosed: the Device was closed.
	ErrDeviceClosed = backend.ClosedError("device closed")
)

// DriverError is a failing result code of a driver call.
type DriverError struct {
	Arch  string // "cuda", "amdgpu"
	Op    string // the driver function, e.g. "cuLaunchKernel"
	Code  int32  // the vendor's result code
	Name  string // the vendor's name of the code, e.g. "CUDA_ERROR_INVALID_PTX"
	Msg   string // the vendor's description, a sentence
	Log   string // a compiler's log (module loads), else empty
	Class Class  // what the code means to the runtime
}

func (e *DriverError) Error() string {
	var b strings.Builder
	b.WriteString(e.Arch)
	b.WriteString(": ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	name := e.Name
	if name == "" {
		name = "result"
	}
	fmt.Fprintf(&b, "%s (%d)", name, e.Code)
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString("\ncompiler log:\n")
		b.WriteString(log)
	}
	return b.String()
}

// Is maps the error's class to the neutral sentinels.
func (e *DriverError) Is(target error) bool {
	switch target {
	case backend.ErrOutOfMemory:
		return e.Class == OutOfMemory
	case backend.ErrDeviceLost:
		return e.Class == Fatal
	case backend.ErrUnsupported:
		return e.Class == NotSupported
	case ErrInvalidCode:
		return e.Class == InvalidCode
	case ErrNoDevice:
		return e.Class == NoDevice
	}
	return false
}

// NewDriverError builds the error for a failing code of op, named and
// classified by drv.
func NewDriverError(drv Driver, op string, code int32) *DriverError {
	e := &DriverError{Arch: drv.Arch(), Op: op, Code: code, Class: drv.Classify(code)}
	e.Name, e.Msg = drv.ErrorText(code)
	return e
}

// lostError is returned by every call on a device after a fatal error; it
// wraps backend.ErrDeviceLost and the first fatal DriverError.
type lostError struct {
	first *DriverError
}

func (e *lostError) Error() string {
	return fmt.Sprintf("%s: device unusable since an earlier fatal error (%s: %s); only a new process can use it again (run GPU work that may fault in a child process)",
		e.first.Arch, e.first.Op, e.first.Name)
}

func (e *lostError) Unwrap() []error { return []error{backend.ErrDeviceLost, e.first} }
