package gpu

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// Calls into vendor libraries other than the driver (NCCL, RCCL) take raw
// device addresses and streams. These give them out, checked, to packages
// that run such calls under Device.Do.

// BufferAddress is the device address of b, a buffer of d that is not
// closed.
func (d *Device) BufferAddress(b backend.Buffer) (uint64, error) {
	gb, ok := b.(*buffer)
	if !ok || gb == nil {
		return 0, fmt.Errorf("%s: %T is not a buffer of this backend", d.Arch(), b)
	}
	return gb.devPtrFor(d)
}

// StreamHandle is the driver handle (a CUstream, a hipStream_t) of s, a
// stream of d that is not closed.
func (d *Device) StreamHandle(s backend.Stream) (uintptr, error) {
	gs, err := d.asStream(s)
	if err != nil {
		return 0, err
	}
	return gs.h, nil
}

// Ordinal is the device's number among its driver's devices.
func (d *Device) Ordinal() int { return d.props.Ordinal }
