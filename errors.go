package qd

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

var (
	// ErrClosed is returned when a closed Program, Stream, Event, Ndarray,
	// HostArray, Graph, Module or Kernel is used.
	ErrClosed = backend.ErrClosed
	// ErrUnsupported is returned for what the chosen backend cannot do, such
	// as a GPU architecture without a usable driver or device, or a foreign
	// stream handle on the CPU. It also matches errors.ErrUnsupported.
	ErrUnsupported = backend.ErrUnsupported
	// ErrInvalidArgument is matched (errors.Is) by every *ArgumentError and
	// by other bad-input errors.
	ErrInvalidArgument = errors.New("qd: invalid argument")
	// ErrForeign is returned when an object of one Program is used with
	// another.
	ErrForeign = errors.New("qd: object belongs to another Program")
	// ErrOutOfMemory is matched by every error of an allocation (or launch)
	// that failed for lack of device or host memory, on any backend.
	ErrOutOfMemory = backend.ErrOutOfMemory
	// ErrDeviceLost is matched by every error of a GPU Program whose
	// device context a fault (an illegal address, a trap) has made
	// unusable: every later call fails with it promptly, and Close returns.
	// The vendors offer no recovery within the process, so Init on that
	// device fails with it too, saying the device was lost earlier: a
	// program that must survive a faulting kernel runs its GPU work in a
	// child process.
	ErrDeviceLost = backend.ErrDeviceLost
)

// unavailableError says why an explicitly chosen backend cannot run: not
// built in, no driver, no device. It matches [ErrUnsupported] and the
// backend's own cause.
type unavailableError struct {
	arch Arch
	err  error
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("qd: the %s backend is unavailable: %v", e.arch, e.err)
}

func (e *unavailableError) Unwrap() []error { return []error{ErrUnsupported, e.err} }

// lostDeviceError is Init's error for a device that a fault lost earlier
// in the process. The vendors keep a faulted context lost until the
// process ends (CUDA's primary context, HIP's device), so the new
// Program's first driver call reports that old fault, whichever call it
// is. It matches ErrDeviceLost and the driver's report.
type lostDeviceError struct {
	arch    Arch
	ordinal int
	err     error
}

func (e *lostDeviceError) Error() string {
	return fmt.Sprintf("qd: %s device %d was lost to a fault earlier in this process (a kernel faulted), and the driver keeps it lost "+
		"until the process ends: a new process is needed to use it (%v)", e.arch, e.ordinal, e.err)
}

func (e *lostDeviceError) Unwrap() []error { return []error{ErrDeviceLost, e.err} }

// lostAtInit is err, or the lostDeviceError for it when it says that the
// device is lost: a Program being made has run nothing, so the fault that
// lost the device was earlier.
func lostAtInit(arch Arch, ordinal int, err error) error {
	if err != nil && errors.Is(err, ErrDeviceLost) {
		return &lostDeviceError{arch, ordinal, err}
	}
	return err
}

// ArgumentError describes a bad kernel argument: which kernel, which
// parameter, what was expected and what was given. It matches
// [ErrInvalidArgument] with errors.Is, and also [ErrClosed] or [ErrForeign] when
// the argument was a closed or foreign Ndarray.
type ArgumentError struct {
	Kernel string // kernel name
	Param  string // parameter name, empty for a count mismatch
	Index  int    // parameter position, -1 for a count mismatch
	Msg    string // what was wrong
	Err    error  // ErrClosed or ErrForeign when that is the cause
}

func (e *ArgumentError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("qd: kernel %s: %s", e.Kernel, e.Msg)
	}
	return fmt.Sprintf("qd: kernel %s: parameter %d (%s): %s", e.Kernel, e.Index+1, e.Param, e.Msg)
}

// Is makes every ArgumentError match [ErrInvalidArgument].
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// Unwrap gives the underlying cause ([ErrClosed], [ErrForeign]), if any.
func (e *ArgumentError) Unwrap() error { return e.Err }

func closedErr(what string) error { return fmt.Errorf("qd: %w: %s", ErrClosed, what) }

// ErrCapturing is matched by the errors of calls a graph capture cannot
// hold: a call that makes the host wait for a stream that is capturing
// ([Stream.Synchronize], SynchronizeContext or Query, [Program.Synchronize], a host read of an
// array the capture uses, [Event.Synchronize] or Query of an event recorded
// in it), a launch with a Go slice argument on a capturing stream, a wait
// across the capture's boundary, a stream-ordered allocation a device
// cannot make inside a graph, a wait or copy across Programs that involves
// a capture. Each error names the call and the capture,
// and the capture it happened in fails: its Capture returns the error.
var ErrCapturing = backend.ErrCapturing

// captureError is a refusal: the call, the capture's origin stream, and
// why (with the backend's error, when the backend refused).
type captureError struct {
	call, origin, why string
	err               error
}

func (e *captureError) Error() string {
	return fmt.Sprintf("qd: %s during the capture on %s: %s", e.call, e.origin, e.why)
}

func (e *captureError) Is(target error) bool { return target == ErrCapturing }

func (e *captureError) Unwrap() error { return e.err }
