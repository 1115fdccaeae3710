package gpu

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// Stream-ordered device memory, views and page-locked host memory.
//
// AllocOn takes memory from the device's memory pool in the order of a
// stream (MemAllocAsync) and FreeOn gives it back in the order of a stream
// (MemFreeAsync): neither waits for the device, and memory freed on one
// stream and taken again on it is reused at once. The driver keeps freed
// memory in the pool up to a release threshold the driver sets when it
// opens the device, and gives the rest back when the device closes. On a
// device without pools AllocOn is Alloc, and FreeOn waits for the stream
// before freeing.

// AllocOn allocates bytes (at least 1) in the order of bs.
func (d *Device) AllocOn(bs backend.Stream, bytes int) (backend.Buffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("%s: AllocOn of %d bytes: the size must be at least 1", d.Arch(), bytes)
	}
	s, err := d.asStream(bs)
	if err != nil {
		return nil, err
	}
	capturing := s.cap.Load() != nil
	if !d.props.MemPools {
		if capturing {
			return nil, fmt.Errorf("%s: AllocOn on a capturing stream: the device has no stream-ordered memory pools, so a graph cannot allocate memory: %w", d.Arch(), backend.ErrUnsupported)
		}
		return d.Alloc(bytes)
	}
	class := sizeClass(bytes)
	// In a capture the allocation is a node of the graph: never a cached
	// block, whose address the graph would keep after the cache lent it
	// again (graph.go).
	b := &buffer{d: d, n: bytes, pooled: true, graph: capturing}
	if !capturing {
		// As enter: a closed or lost device lends nothing, not even a
		// cached block (checked first, so that none is taken and lost).
		if d.closed.Load() {
			return nil, ErrDeviceClosed
		}
		if l := d.lost.Load(); l != nil {
			return nil, l
		}
		if b.ptr = d.cache.take(s, class); b.ptr != 0 {
			return b, nil
		}
	}
	err = d.allocAsync(b, s)
	if errors.Is(err, backend.ErrOutOfMemory) && !capturing && !d.cache.empty() {
		// Give the cached blocks back to the pool and try again.
		if err = d.Do(func() error { return d.freeCached(nil, false) }); err == nil {
			err = d.allocAsync(b, s)
		}
	}
	if err != nil {
		if errors.Is(err, backend.ErrOutOfMemory) {
			return nil, fmt.Errorf("%s: AllocOn of %d bytes: %w", d.Arch(), bytes, err)
		}
		return nil, err
	}
	return b, nil
}

// allocAsync allocates sizeClass(b.n) bytes from the pool in the order of s.
func (d *Device) allocAsync(b *buffer, s *stream) error {
	f := getFrame()
	f.a[0], f.a[1], f.a[2] = uintptr(unsafe.Pointer(&b.ptr)), uintptr(sizeClass(b.n)), s.h
	err := d.runOn(&d.c.MemAllocAsync, f.a[:3])
	putFrame(f)
	return err
}

// FreeOn frees the buffer in the order of bs. Views free nothing.
func (b *buffer) FreeOn(bs backend.Stream) error {
	if b.view {
		return nil
	}
	s, err := b.d.asStream(bs)
	if err != nil {
		return err
	}
	d := b.d
	capturing := s.cap.Load() != nil
	switch {
	case b.graph && !capturing:
		return fmt.Errorf("%s: FreeOn outside a capture of memory a capture allocated: it is freed in its capture", d.Arch())
	case !b.graph && capturing:
		return fmt.Errorf("%s: FreeOn on a capturing stream of memory allocated outside the capture: %w", d.Arch(), errCapturing)
	}
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	if !b.pooled {
		// Memory from MemAlloc: wait for the stream, then free.
		if err := d.run(&d.c.StreamSynchronize, s.args); err != nil {
			return err
		}
		return d.run(&d.c.MemFree, []uintptr{uintptr(b.ptr)})
	}
	if !capturing && d.cache.keep(s, sizeClass(b.n), b.ptr) {
		return nil
	}
	f := getFrame()
	f.a[0], f.a[1] = uintptr(b.ptr), s.h
	err = d.runOn(&d.c.MemFreeAsync, f.a[:2])
	putFrame(f)
	return err
}

// View is bytes [off, off+n) of b, sharing its memory.
func (b *buffer) View(off, n int) (backend.Buffer, error) {
	if off < 0 || n < 0 || off+n > b.n {
		return nil, fmt.Errorf("%s: view [%d, %d) of a buffer of %d bytes", b.d.Arch(), off, off+n, b.n)
	}
	if b.closed.Load() {
		return nil, errBufferClosed
	}
	return &buffer{d: b.d, ptr: b.ptr + uint64(off), n: n, view: true}, nil
}

// hostBuffer is page-locked host memory from Calls.HostAlloc. The address
// is C memory, which the garbage collector ignores.
type hostBuffer struct {
	d      *Device
	addr   uintptr
	n      int
	closed atomic.Bool
}

// AllocHost allocates bytes (at least 1) of page-locked host memory,
// usable by every context of the process, zeroed.
func (d *Device) AllocHost(bytes int) (backend.HostBuffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("%s: AllocHost of %d bytes: the size must be at least 1", d.Arch(), bytes)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	h := &hostBuffer{d: d, n: bytes}
	r := res(purego.SyscallN(d.c.HostAlloc.Addr, uintptr(unsafe.Pointer(&h.addr)), uintptr(bytes), d.codes.HostAllocPortable))
	d.leave()
	if err := d.check(&d.c.HostAlloc, r); err != nil {
		if errors.Is(err, backend.ErrOutOfMemory) {
			return nil, fmt.Errorf("%s: AllocHost of %d bytes: %w", d.Arch(), bytes, err)
		}
		return nil, err
	}
	clear(unsafe.Slice((*byte)(h.Pointer()), bytes))
	return h, nil
}

func (h *hostBuffer) Bytes() int { return h.n }

// Pointer is the memory's address. Reading it through a pointer variable
// turns the integer into an unsafe.Pointer without the conversion go vet
// questions: the memory is not Go's, so the collector never moves it.
func (h *hostBuffer) Pointer() unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&h.addr)) }

// Close frees the memory; no enqueued copy may still use it (package qd
// waits for them). Close is idempotent.
func (h *hostBuffer) Close() error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := h.d
	return d.run(&d.c.HostFree, []uintptr{h.addr})
}
