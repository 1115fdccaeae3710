package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

var errBufferClosed = backend.ClosedError("gpu: buffer closed")

// buffer is device memory from Calls.MemAlloc. The address is a uint64,
// never an unsafe.Pointer: the garbage collector must not see device
// addresses.
type buffer struct {
	d      *Device
	ptr    uint64
	n      int
	pooled bool // from AllocOn with a memory pool: freed by MemFreeAsync
	view   bool // shares another buffer's memory: frees nothing
	graph  bool // allocated in a capture: memory of a graph, freed in it
	closed atomic.Bool
}

var _ backend.Zeroer = (*buffer)(nil)
var _ backend.Filler = (*buffer)(nil)

// Alloc allocates bytes (at least 1) of device memory.
func (d *Device) Alloc(bytes int) (backend.Buffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("%s: Alloc of %d bytes: the size must be at least 1", d.Arch(), bytes)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	var p uint64
	r := res(purego.SyscallN(d.c.MemAlloc.Addr, uintptr(unsafe.Pointer(&p)), uintptr(bytes)))
	d.leave()
	if err := d.check(&d.c.MemAlloc, r); err != nil {
		if errors.Is(err, backend.ErrOutOfMemory) {
			return nil, fmt.Errorf("%s: Alloc of %d bytes: %w", d.Arch(), bytes, err)
		}
		return nil, err
	}
	return &buffer{d: d, ptr: p, n: bytes}, nil
}

func (b *buffer) Bytes() int { return b.n }

// devPtrFor returns the device address for a launch on d.
func (b *buffer) devPtrFor(d *Device) (uint64, error) {
	if b.d != d {
		return 0, errors.New("buffer belongs to another device")
	}
	if b.closed.Load() {
		return 0, errBufferClosed
	}
	return b.ptr, nil
}

func (b *buffer) checkCopy(bs backend.Stream, n int, what string) (*stream, error) {
	if b.closed.Load() {
		return nil, errBufferClosed
	}
	if n < 0 || n > b.n {
		return nil, fmt.Errorf("%s: %s of %d bytes into a buffer of %d bytes", b.d.Arch(), what, n, b.n)
	}
	return b.d.asStream(bs)
}

// copyAsync enqueues fn(dst, src, n, stream) on s.
func (b *buffer) copyAsync(fn *Fn, dst, src uintptr, n int, s *stream) error {
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = dst, src, uintptr(n), s.h
	err := b.d.runOn(fn, f.a[:4])
	putFrame(f)
	return err
}

// CopyFromHost enqueues a copy of n bytes from host memory src on s. For
// pageable (ordinary Go) memory the driver has staged the data when the
// call returns, so src may be reused at once; it must point to heap, C or
// pinned memory, never a goroutine stack (values passed through the
// backend.Buffer interface always escape to the heap).
func (b *buffer) CopyFromHost(bs backend.Stream, src unsafe.Pointer, n int) error {
	s, err := b.checkCopy(bs, n, "CopyFromHost")
	if err != nil || n == 0 {
		return err
	}
	err = b.copyAsync(&b.d.c.CopyHtoDAsync, uintptr(b.ptr), uintptr(src), n, s)
	runtime.KeepAlive(src)
	return err
}

// CopyToHost enqueues a copy of n bytes to host memory dst on s; the caller
// waits for s before reading dst (for pageable memory the driver usually
// finishes the copy before returning, but that is not promised).
func (b *buffer) CopyToHost(bs backend.Stream, dst unsafe.Pointer, n int) error {
	s, err := b.checkCopy(bs, n, "CopyToHost")
	if err != nil || n == 0 {
		return err
	}
	err = b.copyAsync(&b.d.c.CopyDtoHAsync, uintptr(dst), uintptr(b.ptr), n, s)
	runtime.KeepAlive(dst)
	return err
}

// CopyFrom enqueues a device-to-device copy of n bytes from src on s.
func (b *buffer) CopyFrom(bs backend.Stream, src backend.Buffer, n int) error {
	s, err := b.checkCopy(bs, n, "CopyFrom")
	if err != nil {
		return err
	}
	sb, ok := src.(devPointer)
	if !ok || src == nil {
		return fmt.Errorf("%s: %T is not a buffer of this backend", b.d.Arch(), src)
	}
	sp, err := sb.devPtrFor(b.d)
	if err != nil {
		return fmt.Errorf("%s: CopyFrom: %w", b.d.Arch(), err)
	}
	if n > src.Bytes() {
		return fmt.Errorf("%s: CopyFrom of %d bytes from a buffer of %d bytes", b.d.Arch(), n, src.Bytes())
	}
	if n == 0 {
		return nil
	}
	return b.copyAsync(&b.d.c.CopyDtoDAsync, uintptr(b.ptr), uintptr(sp), n, s)
}

// Zero enqueues on s a fill of the whole buffer with zero bytes: new
// Ndarrays start zeroed on every backend, and a device-side fill avoids
// staging gigabytes of zeros from the host.
func (b *buffer) Zero(bs backend.Stream) error {
	s, err := b.checkCopy(bs, 0, "Zero")
	if err != nil || b.n == 0 {
		return err
	}
	return b.copyAsync(&b.d.c.MemsetD8Async, uintptr(b.ptr), 0, b.n, s)
}

// Fill enqueues on s a fill of the first count elements of size bytes
// with pattern's low bytes: a driver memset of 8, 16 or 32 bits.
func (b *buffer) Fill(bs backend.Stream, pattern uint32, size, count int) error {
	s, err := b.checkCopy(bs, size*count, "Fill")
	if err != nil || count == 0 {
		return err
	}
	switch size {
	case 1:
		return b.copyAsync(&b.d.c.MemsetD8Async, uintptr(b.ptr), uintptr(uint8(pattern)), count, s)
	case 2:
		return b.copyAsync(&b.d.c.MemsetD16Async, uintptr(b.ptr), uintptr(uint16(pattern)), count, s)
	case 4:
		return b.copyAsync(&b.d.c.MemsetD32Async, uintptr(b.ptr), uintptr(pattern), count, s)
	}
	return fmt.Errorf("%s: Fill of %d-byte elements", b.d.Arch(), size)
}

// Close frees the memory at once; package qd calls it only after the work
// that uses the buffer is done. Close is idempotent.
func (b *buffer) Close() error {
	if !b.closed.CompareAndSwap(false, true) || b.view || b.graph {
		return nil // a graph's memory goes with the graph
	}
	if b.pooled {
		// Pool memory is freed in stream order; with nothing left to wait
		// for, any order will do: a synchronizing free.
		if err := b.d.run(&b.d.c.Synchronize, nil); err != nil {
			return err
		}
		return b.d.run(&b.d.c.MemFreeAsync, []uintptr{uintptr(b.ptr), 0})
	}
	return b.d.run(&b.d.c.MemFree, []uintptr{uintptr(b.ptr)})
}
