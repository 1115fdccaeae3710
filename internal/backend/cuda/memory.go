package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

var errBufferClosed = errors.New("cuda: buffer closed")

// buffer is device memory from cuMemAlloc_v2. The address is a uint64, never
// an unsafe.Pointer: the garbage collector must not see device addresses.
type buffer struct {
	d      *device
	ptr    uint64 // CUdeviceptr
	n      int
	closed atomic.Bool
}

// Alloc allocates bytes (at least 1) of device memory.
func (d *device) Alloc(bytes int) (backend.Buffer, error) {
	if bytes < 1 {
		return nil, fmt.Errorf("cuda: Alloc of %d bytes: the size must be at least 1", bytes)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	var p uint64
	r := callRes(purego.SyscallN(d.sym.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)))
	d.leave()
	if err := d.check("cuMemAlloc_v2", r); err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			return nil, fmt.Errorf("cuda: Alloc of %d bytes: %w", bytes, err)
		}
		return nil, err
	}
	return &buffer{d: d, ptr: p, n: bytes}, nil
}

func (b *buffer) Bytes() int { return b.n }

// devPtrFor returns the device address for a launch on d.
func (b *buffer) devPtrFor(d *device) (uint64, error) {
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
		return nil, fmt.Errorf("cuda: %s of %d bytes into a buffer of %d bytes", what, n, b.n)
	}
	return b.d.asStream(bs)
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
	d := b.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = uintptr(b.ptr), uintptr(src), uintptr(n), s.h
	r := callRes(purego.SyscallN(d.sym.memcpyHtoDAsync, f.a[:4]...))
	putFrame(f)
	d.leave()
	runtime.KeepAlive(src)
	return d.check("cuMemcpyHtoDAsync_v2", r)
}

// CopyToHost enqueues a copy of n bytes to host memory dst on s; the caller
// waits for s before reading dst (for pageable memory the driver usually
// finishes the copy before returning, but that is not promised).
func (b *buffer) CopyToHost(bs backend.Stream, dst unsafe.Pointer, n int) error {
	s, err := b.checkCopy(bs, n, "CopyToHost")
	if err != nil || n == 0 {
		return err
	}
	d := b.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = uintptr(dst), uintptr(b.ptr), uintptr(n), s.h
	r := callRes(purego.SyscallN(d.sym.memcpyDtoHAsync, f.a[:4]...))
	putFrame(f)
	d.leave()
	runtime.KeepAlive(dst)
	return d.check("cuMemcpyDtoHAsync_v2", r)
}

// CopyFromBuffer enqueues a device-to-device copy of n bytes from src on s.
// It is not part of backend.Buffer; package qd may use it through an
// interface assertion, and the bandwidth benchmark uses it.
func (b *buffer) CopyFromBuffer(bs backend.Stream, src backend.Buffer, n int) error {
	s, err := b.checkCopy(bs, n, "CopyFromBuffer")
	if err != nil {
		return err
	}
	sb, ok := src.(*buffer)
	if !ok || sb == nil {
		return fmt.Errorf("cuda: %T is not a CUDA buffer", src)
	}
	sp, err := sb.devPtrFor(b.d)
	if err != nil {
		return fmt.Errorf("cuda: CopyFromBuffer: %w", err)
	}
	if n > sb.n {
		return fmt.Errorf("cuda: CopyFromBuffer of %d bytes from a buffer of %d bytes", n, sb.n)
	}
	if n == 0 {
		return nil
	}
	d := b.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = uintptr(b.ptr), uintptr(sp), uintptr(n), s.h
	r := callRes(purego.SyscallN(d.sym.memcpyDtoDAsync, f.a[:4]...))
	putFrame(f)
	d.leave()
	return d.check("cuMemcpyDtoDAsync_v2", r)
}

// Close frees the memory at once; package qd calls it only after the work
// that uses the buffer is done. Close is idempotent.
func (b *buffer) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := b.d
	if err := d.enter(); err != nil {
		return err
	}
	r := call1(d.sym.memFree, uintptr(b.ptr))
	d.leave()
	return d.check("cuMemFree_v2", r)
}

// Per-launch temporaries.
//
// A kernel whose locals live across tasks needs NumTemps×8 bytes of device
// memory per launch, taken and given back in the order of the launch stream
// so that concurrent launches of the same kernel never share it.
//
// With memory pools (attribute 115) that is cuMemAllocAsync/cuMemFreeAsync
// on the stream. Without them, tempPool keeps a free list of cuMemAlloc'd
// blocks: End records the block's own event on the stream and returns the
// block to the list; Begin takes a block only once a query of that event
// says the launch that used it is done, else allocates a new one. This is the
// simplest scheme that is correct without stream-ordered allocation; the list
// grows to the number of launches with temporaries in flight at once.

// tempBlock is one recycled temporaries block.
type tempBlock struct {
	ptr  uint64
	size int
	ev   uintptr // CUevent (timing disabled), recorded by End
	used bool    // ev has been recorded at least once
}

// tempPool is the free list. Its methods run inside d.enter/leave.
type tempPool struct {
	d    *device
	mu   sync.Mutex
	free []*tempBlock
	all  []*tempBlock
}

// maxTempScan bounds the event queries one acquire makes before it gives up
// on the free list and allocates.
const maxTempScan = 4

// acquire returns a block of at least size bytes that no enqueued work uses.
func (p *tempPool) acquire(size int) (*tempBlock, error) {
	d := p.d
	p.mu.Lock()
	scanned := 0
	for i := 0; i < len(p.free) && scanned < maxTempScan; i++ {
		b := p.free[i]
		if b.size < size {
			continue
		}
		scanned++
		if b.used {
			f := getFrame() // a literal-argument SyscallN would allocate
			f.a[0] = b.ev
			r := callRes(purego.SyscallN(d.sym.eventQuery, f.a[:1]...))
			putFrame(f)
			if r == cudaErrorNotReady {
				continue
			}
			if err := d.check("cuEventQuery", r); err != nil {
				p.mu.Unlock()
				return nil, err
			}
		}
		p.free = append(p.free[:i], p.free[i+1:]...)
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()

	b := &tempBlock{size: max(size, 256)}
	if err := d.check("cuMemAlloc_v2", callRes(purego.SyscallN(d.sym.memAlloc, uintptr(unsafe.Pointer(&b.ptr)), uintptr(b.size)))); err != nil {
		return nil, err
	}
	if err := d.check("cuEventCreate", callRes(purego.SyscallN(d.sym.eventCreate, uintptr(unsafe.Pointer(&b.ev)), eventDisableTiming))); err != nil {
		call1(d.sym.memFree, uintptr(b.ptr))
		return nil, err
	}
	p.mu.Lock()
	p.all = append(p.all, b)
	p.mu.Unlock()
	return b, nil
}

// put records b's event on stream (0: b is unused, no record needed) and
// returns b to the free list.
func (p *tempPool) put(b *tempBlock, stream uintptr) error {
	d := p.d
	var err error
	if stream != 0 {
		f := getFrame()
		f.a[0], f.a[1] = b.ev, stream
		r := callRes(purego.SyscallN(d.sym.eventRecord, f.a[:2]...))
		putFrame(f)
		if err = d.check("cuEventRecord", r); err == nil {
			b.used = true
		} else {
			// The block's last use cannot be tracked: wait for all work.
			err = errors.Join(err, d.check("cuCtxSynchronize", callRes(purego.SyscallN(d.sym.ctxSynchronize))))
			b.used = false
		}
	}
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
	return err
}

// release frees every block; the device is idle (Device.Close synchronized).
func (p *tempPool) release() error {
	d := p.d
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, b := range p.all {
		errs = append(errs,
			d.check("cuEventDestroy_v2", call1(d.sym.eventDestroy, b.ev)),
			d.check("cuMemFree_v2", call1(d.sym.memFree, uintptr(b.ptr))))
	}
	p.all, p.free = nil, nil
	return errors.Join(errs...)
}
