package gpu

import (
	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// Hooks for the external tests (package gpu_test), which run the runtime
// against every available driver.

// SubBuffer is a view of b starting off bytes in, as a kernel argument.
func SubBuffer(b backend.Buffer, off int) backend.Buffer {
	return view{b.(*buffer), uint64(off)}
}

type view struct {
	*buffer
	off uint64
}

func (v view) devPtrFor(d *Device) (uint64, error) {
	p, err := v.buffer.devPtrFor(d)
	return p + v.off, err
}

// RawCall calls fn with args on a call path of d and returns its result
// code (-1 when the call path cannot start). Pointer arguments must stay
// valid while the stack may move: see go:uintptrescapes on cuda's call.
//
//go:uintptrescapes
func (d *Device) RawCall(fn *Fn, args ...uintptr) int32 {
	r := int32(-1)
	d.Do(func() error {
		r = res(purego.SyscallN(fn.Addr, args...))
		return nil
	})
	return r
}

// TempBlocks is the number of blocks the temporaries free list made.
func (d *Device) TempBlocks() int {
	d.temps.mu.Lock()
	defer d.temps.mu.Unlock()
	return len(d.temps.all)
}

// RecordSlabs is the number of page-locked slabs of violation records
// the device holds (kept until it closes).
func (d *Device) RecordSlabs() int {
	d.records.mu.Lock()
	defer d.records.mu.Unlock()
	return len(d.records.slabs)
}

// Lost reports whether a fatal error marked the device lost.
func (d *Device) Lost() bool { return d.lost.Load() != nil }

// ErrGraphClosed is what a closed graph or exec refuses with.
var ErrGraphClosed = errGraphClosed
