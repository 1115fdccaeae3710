package vulkan

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Buffer is bytes [off, off+n) of an allocation: the whole of it for a
// buffer from Alloc, a part for a view. Device addresses are uint64s,
// never pointers.
type Buffer struct {
	a      *allocation
	off, n int
	view   bool // shares another buffer's memory: frees nothing
	closed atomic.Bool
}

var (
	_ backend.Buffer = (*Buffer)(nil)
	_ backend.Zeroer = (*Buffer)(nil)
	_ backend.Filler = (*Buffer)(nil)
)

// Bytes is the buffer's size.
func (b *Buffer) Bytes() int { return b.n }

// buffer checks that bb is a live buffer of d, for the module code.
func (d *Device) buffer(bb backend.Buffer) (*Buffer, error) {
	b, ok := bb.(*Buffer)
	if !ok || b == nil {
		return nil, fmt.Errorf("vulkan: %T is not a buffer of this backend", bb)
	}
	if b.a.d != d {
		return nil, errForeign
	}
	if err := b.live(); err != nil {
		return nil, err
	}
	return b, nil
}

// address is the device address of the buffer's first byte (for
// PhysicalStorageBuffer pointers in kernels).
func (b *Buffer) address() uint64 { return b.a.mem.Address + uint64(b.off) }

// memory is the allocation the buffer lies in and the buffer's offset in
// it (for descriptors and copies by VkBuffer).
func (b *Buffer) memory() (*vk.Memory, int) { return b.a.mem, b.off }

// live is nil while the buffer and its memory are usable.
func (b *Buffer) live() error {
	if b.closed.Load() || b.a.closed.Load() {
		return errBufferClosed
	}
	return nil
}

// begin checks a copy or fill of n bytes on bs and returns the stream.
func (b *Buffer) begin(bs backend.Stream, n int, what string) (*Stream, error) {
	if err := b.live(); err != nil {
		return nil, err
	}
	if n < 0 || n > b.n {
		return nil, fmt.Errorf("vulkan: %s of %d bytes with a buffer of %d bytes", what, n, b.n)
	}
	return b.a.d.stream(bs)
}

// View is bytes [off, off+n) of the buffer, sharing its memory.
func (b *Buffer) View(off, n int) (backend.Buffer, error) {
	if err := b.live(); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off > b.n-n {
		return nil, fmt.Errorf("vulkan: view [%d, %d) of a buffer of %d bytes", off, off+n, b.n)
	}
	return &Buffer{a: b.a, off: b.off + off, n: n, view: true}, nil
}

// CopyFrom enqueues a copy of the first n bytes of src, a buffer of the
// same device, into this buffer.
func (b *Buffer) CopyFrom(bs backend.Stream, src backend.Buffer, n int) error {
	s, err := b.begin(bs, n, "CopyFrom")
	if err != nil {
		return err
	}
	sb, ok := src.(*Buffer)
	if !ok || sb == nil {
		return fmt.Errorf("vulkan: CopyFrom: %T is not a buffer of this backend", src)
	}
	if sb.a.d != b.a.d {
		return fmt.Errorf("vulkan: CopyFrom: %w", errForeign)
	}
	if err := sb.live(); err != nil {
		return err
	}
	if n > sb.n {
		return fmt.Errorf("vulkan: CopyFrom of %d bytes from a buffer of %d bytes", n, sb.n)
	}
	if n == 0 {
		return nil
	}
	d := b.a.d
	dst, srcm := b.a.mem, sb.a.mem
	if dst == srcm && b.off < sb.off+n && sb.off < b.off+n {
		return b.copyOverlapping(s, sb, n)
	}
	_, err = s.submit(func(cb uintptr) { d.vd.CmdCopy(cb, dst.Buffer, b.off, srcm.Buffer, sb.off, n) })
	return err
}

// copyOverlapping copies between overlapping ranges of one allocation,
// which vkCmdCopyBuffer does not allow: through a temporary buffer, with
// a barrier between the two copies.
func (b *Buffer) copyOverlapping(s *Stream, sb *Buffer, n int) error {
	d := b.a.d
	tmp, err := d.vd.Allocate(n, vk.MemoryPropertyDeviceLocal, vk.MemoryPropertyHostVisible)
	if err != nil {
		return fmt.Errorf("vulkan: CopyFrom between overlapping ranges: %w", d.wrap(err))
	}
	m := b.a.mem
	v, err := s.submit(func(cb uintptr) {
		d.vd.CmdCopy(cb, tmp.Buffer, 0, m.Buffer, sb.off, n)
		d.vd.CmdBarrier(cb)
		d.vd.CmdCopy(cb, m.Buffer, b.off, tmp.Buffer, 0, n)
	})
	if err != nil {
		d.vd.Free(tmp)
		return err
	}
	s.onComplete(v, func() error { d.vd.Free(tmp); return nil })
	return nil
}

// CopyFromHost enqueues a copy of n bytes from host memory src. From
// inside a host buffer of the device the copy reads that buffer on the
// device, asynchronously; other memory is copied into staging buffers
// before CopyFromHost returns, so src may be reused at once.
func (b *Buffer) CopyFromHost(bs backend.Stream, src unsafe.Pointer, n int) error {
	s, err := b.begin(bs, n, "CopyFromHost")
	if err != nil || n == 0 {
		return err
	}
	d := b.a.d
	dst := b.a.mem
	if h, off := d.hosts.find(src, n); h != nil {
		if err := d.vd.Flush(h.mem); err != nil {
			return d.wrap(err)
		}
		_, err := s.submitTo(copyIn, func(cb uintptr) { d.vd.CmdCopy(cb, dst.Buffer, b.off, h.mem.Buffer, off, n) })
		return err
	}
	chunk := d.staging.chunk()
	for done := 0; done < n; done += chunk {
		c := min(chunk, n-done)
		from := hostBytes(unsafe.Add(src, done), c)
		at := b.off + done
		err := d.staging.stage(s, copyIn, c,
			func(p []byte) { copy(p, from) },
			func(cb uintptr, m *vk.Memory, off int) { d.vd.CmdCopy(cb, dst.Buffer, at, m.Buffer, off, c) })
		if err != nil {
			return err
		}
	}
	return nil
}

// CopyToHost copies n bytes to host memory dst. Into a host buffer of the
// device the copy is enqueued on the device, asynchronously (dst is
// written when bs reaches it); other memory is filled through staging
// buffers before CopyToHost returns, which waits for bs.
func (b *Buffer) CopyToHost(bs backend.Stream, dst unsafe.Pointer, n int) error {
	s, err := b.begin(bs, n, "CopyToHost")
	if err != nil || n == 0 {
		return err
	}
	d := b.a.d
	src := b.a.mem
	if h, off := d.hosts.find(dst, n); h != nil {
		// The barrier makes the copy's writes available to the host that
		// waits for the stream; a coherent mapping needs nothing more.
		_, err := s.submitTo(copyOut, func(cb uintptr) {
			d.vd.CmdCopy(cb, h.mem.Buffer, off, src.Buffer, b.off, n)
			d.hostReadBarrier(cb, copyOut)
		})
		return err
	}
	if s.capturing() {
		// A staged copy waits for the stream, which a capture cannot.
		return fmt.Errorf("%w: CopyToHost into memory that is not a host buffer, in a graph capture", errCapturing)
	}
	chunk := d.staging.chunk()
	for done := 0; done < n; done += chunk {
		c := min(chunk, n-done)
		if err := b.readStaged(s, unsafe.Add(dst, done), b.off+done, c); err != nil {
			return err
		}
	}
	return nil
}

// readStaged copies c bytes at offset at of the allocation to dst
// through a staging buffer, waiting for the copy. The staging buffer goes
// back to the pool here, not from a hook: a hook run early by another
// goroutine would give it to another copy before it is read.
func (b *Buffer) readStaged(s *Stream, dst unsafe.Pointer, at, c int) error {
	d := b.a.d
	st, err := d.staging.get(c)
	if err != nil {
		return err
	}
	defer d.staging.put(st)
	src := b.a.mem
	v, err := s.submitTo(copyOut, func(cb uintptr) {
		d.vd.CmdCopy(cb, st.m.Buffer, st.off, src.Buffer, at, c)
		d.hostReadBarrier(cb, copyOut)
	})
	if err != nil {
		return err
	}
	if err := d.waitValue(s.sem, v); err != nil {
		return err
	}
	s.noteReached(v)
	if err := d.vd.Invalidate(st.m); err != nil {
		return d.wrap(err)
	}
	copy(hostBytes(dst, c), st.bytes())
	return nil
}

// Zero enqueues on bs a fill of the whole buffer with zero bytes: new
// arrays start zeroed, and a fill on the device saves staging zeros.
func (b *Buffer) Zero(bs backend.Stream) error {
	s, err := b.begin(bs, 0, "Zero")
	if err != nil {
		return err
	}
	return b.fill(s, 0, b.n)
}

// Fill enqueues on bs a fill of the first count elements of size bytes
// (1, 2 or 4) with pattern's low bytes.
func (b *Buffer) Fill(bs backend.Stream, pattern uint32, size, count int) error {
	if size != 1 && size != 2 && size != 4 || count < 0 || count > b.n/size {
		return fmt.Errorf("vulkan: Fill of %d %d-byte elements in a buffer of %d bytes", count, size, b.n)
	}
	s, err := b.begin(bs, size*count, "Fill")
	if err != nil {
		return err
	}
	switch size {
	case 1:
		pattern = uint32(uint8(pattern)) * 0x01010101
	case 2:
		pattern = uint32(uint16(pattern)) * 0x00010001
	}
	return b.fill(s, pattern, size*count)
}

// fill fills the first n bytes of the buffer with the little-endian
// 32-bit word pattern repeated from the buffer's first byte.
// vkCmdFillBuffer needs an offset and a size that are multiples of 4: it
// fills the aligned words inside the range (with the pattern rotated to
// their phase), and a copy from a staging buffer writes the unaligned
// bytes at either end, so no byte outside the range is written.
func (b *Buffer) fill(s *Stream, pattern uint32, n int) error {
	if n == 0 {
		return nil
	}
	d := b.a.d
	buf := b.a.mem.Buffer
	start, end := b.off, b.off+n
	lo, hi := (start+3)&^3, end&^3 // the aligned words
	if lo >= hi {
		lo, hi = end, end // no aligned word: the whole range is a head
	}
	head, tail := lo-start, end-hi
	word := bits.RotateLeft32(pattern, -8*((lo-start)&3))
	if head == 0 && tail == 0 {
		_, err := s.submit(func(cb uintptr) { d.vd.CmdFill(cb, buf, lo, hi-lo, word) })
		return err
	}
	// The staged bytes: the head at 0, the tail at 8.
	byteAt := func(x int) byte { return byte(pattern >> (8 * ((x - start) & 3))) }
	return d.staging.stage(s, onCompute, 16, func(p []byte) {
		for i := range head {
			p[i] = byteAt(start + i)
		}
		for i := range tail {
			p[8+i] = byteAt(hi + i)
		}
	}, func(cb uintptr, m *vk.Memory, off int) {
		if hi > lo {
			d.vd.CmdFill(cb, buf, lo, hi-lo, word)
		}
		if head > 0 {
			d.vd.CmdCopy(cb, buf, start, m.Buffer, off, head)
		}
		if tail > 0 {
			d.vd.CmdCopy(cb, buf, hi, m.Buffer, off+8, tail)
		}
	})
}

// FreeOn frees the memory once bs reaches the work enqueued on it so far
// (and the event waits it has pending); the buffer is unusable from now
// on. Views free nothing.
func (b *Buffer) FreeOn(bs backend.Stream) error {
	if b.view {
		b.closed.Store(true)
		return nil
	}
	if err := b.live(); err != nil {
		return err
	}
	s, err := b.a.d.stream(bs)
	if err != nil {
		return err
	}
	v, err := s.point()
	if err != nil {
		return err
	}
	if !b.closed.CompareAndSwap(false, true) {
		return errBufferClosed
	}
	a := b.a
	if !s.capturing() && (v <= s.reached.Load() || s.valueReached(v)) {
		// Nothing enqueued since is left to wait for: back to the pool
		// now, for the next AllocOn (a hook would run only at the
		// stream's next submit or wait).
		a.free()
		return nil
	}
	s.onComplete(v, func() error { a.free(); return nil })
	return nil
}

// Close frees the memory at once (package qd calls it only once the work
// that uses the buffer is done); a view frees nothing. Close is
// idempotent.
func (b *Buffer) Close() error {
	if !b.closed.CompareAndSwap(false, true) || b.view {
		return nil
	}
	b.a.free()
	return nil
}
