package vulkan

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Device memory, host buffers and staging.
//
// Alloc makes one VkBuffer bound to its own VkDeviceMemory (vk.Memory),
// device-local where the device has such memory. Vulkan has no
// stream-ordered allocator: AllocOn allocates at once, and FreeOn frees
// from a hook of the stream (Stream.onComplete) once the stream reaches
// the point it was called at.
//
// AllocHost makes host-visible, host-coherent memory (cached where a type
// is), mapped for the buffer's life; the device keeps its live host
// buffers by address, so that a copy between a device buffer and memory
// inside one goes straight between the two VkBuffers, asynchronously.
// Copies with other host memory go through staging memory (staging.go).

// allocation is one vk.Memory: a buffer from Alloc and its views share
// it.
type allocation struct {
	d      *Device
	mem    *vk.Memory
	class  int // the pool's size class of an AllocOn block; 0: not pooled
	closed atomic.Bool
}

// free frees the memory, once: a pooled block goes back to the pool
// while it has room (pool.go).
func (a *allocation) free() {
	if !a.closed.CompareAndSwap(false, true) {
		return
	}
	if a.class == 0 || a.d.closing.Load() || !a.d.pool.put(a.class, a.mem) {
		a.d.vd.Free(a.mem)
	}
	a.d.mu.Lock()
	delete(a.d.buffers, a)
	a.d.mu.Unlock()
}

// Alloc allocates bytes (at least 1) of device-local memory; on a device
// without a device-local type that a buffer accepts, host-visible memory.
func (d *Device) Alloc(bytes int) (backend.Buffer, error) {
	b, err := d.alloc(bytes, "Alloc")
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (d *Device) alloc(bytes int, what string) (*Buffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("vulkan: %s of %d bytes: the size must be at least 1", what, bytes)
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	m, err := d.vd.Allocate(bytes, vk.MemoryPropertyDeviceLocal, vk.MemoryPropertyHostVisible)
	if err != nil {
		return nil, fmt.Errorf("vulkan: %s of %d bytes: %w", what, bytes, d.wrap(err))
	}
	a := &allocation{d: d, mem: m}
	d.mu.Lock()
	if d.closing.Load() {
		d.mu.Unlock()
		d.vd.Free(m)
		return nil, errDeviceClosed
	}
	d.buffers[a] = struct{}{}
	d.mu.Unlock()
	return &Buffer{a: a, n: bytes}, nil
}

// AllocOn allocates bytes (at least 1) at once, from the device's pool of
// blocks freed in stream order where it has one of the size (pool.go):
// Vulkan has no stream-ordered allocator, and memory allocated now is
// usable by work enqueued on bs later. FreeOn frees it in the order of a
// stream, back into the pool.
func (d *Device) AllocOn(bs backend.Stream, bytes int) (backend.Buffer, error) {
	if _, err := d.stream(bs); err != nil {
		return nil, err
	}
	c := poolClass(bytes)
	if c == 0 || bytes < 1 {
		return d.alloc(bytes, "AllocOn")
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	m := d.pool.get(c)
	if m == nil {
		var err error
		if m, err = d.vd.Allocate(c, vk.MemoryPropertyDeviceLocal, vk.MemoryPropertyHostVisible); err != nil {
			return nil, fmt.Errorf("vulkan: AllocOn of %d bytes: %w", bytes, d.wrap(err))
		}
	}
	a := &allocation{d: d, mem: m, class: c}
	d.mu.Lock()
	if d.closing.Load() {
		d.mu.Unlock()
		d.vd.Free(m)
		return nil, errDeviceClosed
	}
	d.buffers[a] = struct{}{}
	d.mu.Unlock()
	return &Buffer{a: a, n: bytes}, nil
}

// HostBuffer is mapped host-visible, host-coherent memory the device
// copies from and to asynchronously (Device.AllocHost).
type HostBuffer struct {
	d      *Device
	mem    *vk.Memory
	n      int
	closed atomic.Bool
}

var _ backend.HostBuffer = (*HostBuffer)(nil)

// AllocHost allocates bytes (at least 1) of zeroed host memory the device
// reaches: host-visible and host-coherent, host-cached where the device
// has such a type (reads of it from the host are then at memory speed).
func (d *Device) AllocHost(bytes int) (backend.HostBuffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("vulkan: AllocHost of %d bytes: the size must be at least 1", bytes)
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	m, err := d.vd.Allocate(bytes, d.hostWant, d.hostFallback)
	if err != nil {
		return nil, fmt.Errorf("vulkan: AllocHost of %d bytes: %w", bytes, d.wrap(err))
	}
	clear(unsafe.Slice((*byte)(m.Mapped), bytes))
	h := &HostBuffer{d: d, mem: m, n: bytes}
	if !d.hosts.add(h) {
		d.vd.Free(m)
		return nil, errDeviceClosed
	}
	if d.closing.Load() {
		h.free()
		return nil, errDeviceClosed
	}
	return h, nil
}

// Bytes is the buffer's size.
func (h *HostBuffer) Bytes() int { return h.n }

// Pointer is the mapping's address; it stays valid until Close.
func (h *HostBuffer) Pointer() unsafe.Pointer { return h.mem.Mapped }

// Close frees the memory at once; no enqueued copy may still use it
// (package qd waits for them). Close is idempotent.
func (h *HostBuffer) Close() error {
	h.free()
	return nil
}

func (h *HostBuffer) free() {
	if !h.closed.CompareAndSwap(false, true) {
		return
	}
	h.d.hosts.remove(h)
	h.d.vd.Free(h.mem)
}

// hostRegistry holds the live host buffers of a device, sorted by
// address, so that a copy finds the one a host pointer lies in.
type hostRegistry struct {
	mu     sync.RWMutex
	list   []*HostBuffer
	closed bool
}

func (r *hostRegistry) start(h *HostBuffer) uintptr { return uintptr(h.mem.Mapped) }

// add registers h; false once the registry is closed.
func (r *hostRegistry) add(h *HostBuffer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	p := r.start(h)
	i, _ := slices.BinarySearchFunc(r.list, p, func(o *HostBuffer, p uintptr) int {
		return cmpUintptr(r.start(o), p)
	})
	r.list = slices.Insert(r.list, i, h)
	return true
}

func (r *hostRegistry) remove(h *HostBuffer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.list, h); i >= 0 {
		r.list = slices.Delete(r.list, i, i+1)
	}
}

// find returns the host buffer that holds [p, p+n) and p's offset in it,
// or nil.
func (r *hostRegistry) find(p unsafe.Pointer, n int) (*HostBuffer, int) {
	a := uintptr(p)
	r.mu.RLock()
	defer r.mu.RUnlock()
	// The last buffer that starts at or before a.
	i, found := slices.BinarySearchFunc(r.list, a, func(o *HostBuffer, p uintptr) int {
		return cmpUintptr(r.start(o), p)
	})
	if !found {
		i--
	}
	if i < 0 {
		return nil, 0
	}
	h := r.list[i]
	off := a - r.start(h)
	if off+uintptr(n) > uintptr(h.n) {
		return nil, 0
	}
	return h, int(off)
}

// all closes the registry and returns the buffers in it.
func (r *hostRegistry) all() []*HostBuffer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return slices.Clone(r.list)
}

func cmpUintptr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var errForeign = errors.New("vulkan: the buffer belongs to another device (copies between devices are not supported by the Vulkan backend yet)")
