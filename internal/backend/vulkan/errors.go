package vulkan

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// The errors for closed objects; each matches backend.ErrClosed.
var (
	errDeviceClosed = backend.ClosedError("vulkan: device closed")
	errStreamClosed = backend.ClosedError("vulkan: stream closed")
	errEventClosed  = backend.ClosedError("vulkan: event closed")
	errBufferClosed = backend.ClosedError("vulkan: buffer closed")
	errHostClosed   = backend.ClosedError("vulkan: host buffer closed")
)

// apiError is a failed Vulkan call as the backend reports it: the call's
// *vk.Error (function and result), matching the neutral sentinel its
// result stands for.
type apiError struct {
	err  error // wraps a *vk.Error
	kind error // backend.ErrOutOfMemory, backend.ErrDeviceLost, or nil
}

func (e *apiError) Error() string { return "vulkan: " + e.err.Error() }

func (e *apiError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.err, e.kind}
}

// lostError is what every call on a lost device returns: it wraps
// backend.ErrDeviceLost and the first failure that reported the loss.
type lostError struct{ first error }

func (e *lostError) Error() string {
	return fmt.Sprintf("vulkan: device unusable since an earlier failure (%v); only a new device can be used", e.first)
}

func (e *lostError) Unwrap() []error { return []error{backend.ErrDeviceLost, e.first} }

// wrap turns an error of package vk into the backend's: out-of-memory
// results match backend.ErrOutOfMemory, a lost device matches
// backend.ErrDeviceLost and marks d lost, so that later calls fail fast.
// Errors that are not Vulkan results get the backend's prefix only.
func (d *Device) wrap(err error) error {
	if err == nil {
		return nil
	}
	var ae *apiError
	var le *lostError
	if errors.As(err, &ae) || errors.As(err, &le) {
		return err // wrapped already
	}
	var ve *vk.Error
	if !errors.As(err, &ve) {
		return fmt.Errorf("vulkan: %w", err)
	}
	e := &apiError{err: err}
	switch ve.Result {
	case vk.ErrorOutOfDeviceMemory, vk.ErrorOutOfHostMemory:
		e.kind = backend.ErrOutOfMemory
	case vk.ErrorDeviceLost:
		e.kind = backend.ErrDeviceLost
		d.lost.CompareAndSwap(nil, &lostError{first: e})
	}
	return e
}

// usable is nil while d can take calls: an error matching
// backend.ErrClosed once it is closed (or closing), one matching
// backend.ErrDeviceLost once it is lost.
func (d *Device) usable() error {
	if d.closing.Load() {
		return errDeviceClosed
	}
	if l := d.lost.Load(); l != nil {
		return l
	}
	return nil
}
