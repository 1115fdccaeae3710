package cpu

import (
	"fmt"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/native"
)

// buffer is host memory. Allocated buffers are backed by []uint64 so that
// every element type is aligned; wrapped buffers point at a caller's slice,
// views into another buffer (whose memory mem keeps alive).
type buffer struct {
	mem   []uint64 // keeps allocated memory alive; nil when wrapped
	ptr   unsafe.Pointer
	bytes int
	view  bool
	rows  native.Rows // the generated kernels' row headers over this memory
}

// View is bytes [off, off+n) of b, sharing its memory.
func (b *buffer) View(off, n int) (backend.Buffer, error) {
	if off < 0 || n < 0 || off+n > b.bytes {
		return nil, fmt.Errorf("cpu backend: view [%d, %d) of a buffer of %d bytes", off, off+n, b.bytes)
	}
	return &buffer{mem: b.mem, ptr: unsafe.Add(b.ptr, off), bytes: n, view: true}, nil
}

// FreeOn drops the memory once the work enqueued on s so far is done, so
// that a program written for a GPU's stream-ordered frees behaves the same.
func (b *buffer) FreeOn(bs backend.Stream) error {
	if b.view {
		return nil
	}
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: free on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error { return b.Close() }})
}

func (b *buffer) Bytes() int { return b.bytes }

// HostPointer gives package qd direct access: on the CPU, host copies are
// plain memory moves once the streams that use the buffer are waited for.
func (b *buffer) HostPointer() unsafe.Pointer { return b.ptr }

func (b *buffer) bytesView() []byte { return unsafe.Slice((*byte)(b.ptr), b.bytes) }

func (b *buffer) CopyFromHost(bs backend.Stream, src unsafe.Pointer, n int) error {
	if n > b.bytes || n < 0 {
		return fmt.Errorf("cpu backend: copy of %d bytes into a buffer of %d", n, b.bytes)
	}
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: copy on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error {
		copy(b.bytesView(), unsafe.Slice((*byte)(src), n))
		return nil
	}})
}

func (b *buffer) CopyToHost(bs backend.Stream, dst unsafe.Pointer, n int) error {
	if n > b.bytes || n < 0 {
		return fmt.Errorf("cpu backend: copy of %d bytes out of a buffer of %d", n, b.bytes)
	}
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: copy on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error {
		copy(unsafe.Slice((*byte)(dst), n), b.bytesView())
		return nil
	}})
}

// CopyFrom enqueues a copy of n bytes from src, another CPU buffer.
func (b *buffer) CopyFrom(bs backend.Stream, src backend.Buffer, n int) error {
	sb, ok := src.(*buffer)
	if !ok || sb == nil {
		return fmt.Errorf("cpu backend: copy from a %T", src)
	}
	if n > b.bytes || n > sb.bytes || n < 0 {
		return fmt.Errorf("cpu backend: copy of %d bytes from a buffer of %d into one of %d", n, sb.bytes, b.bytes)
	}
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: copy on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error {
		copy(b.bytesView()[:n], sb.bytesView()[:n])
		return nil
	}})
}

// Zero enqueues a fill of the buffer with zero bytes on s. CPU memory is
// born zeroed, so package qd needs this only for an allocation a graph
// replays, which must start zeroed at every replay.
func (b *buffer) Zero(bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: zero on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error {
		clear(b.bytesView())
		return nil
	}})
}

// Fill enqueues on s a fill of the first count elements of size bytes (1,
// 2 or 4) with pattern's low bytes.
func (b *buffer) Fill(bs backend.Stream, pattern uint32, size, count int) error {
	s, ok := bs.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: fill on a %T", bs)
	}
	if size != 1 && size != 2 && size != 4 || count < 0 || count*size > b.bytes {
		return fmt.Errorf("cpu backend: fill of %d %d-byte elements in a buffer of %d bytes", count, size, b.bytes)
	}
	return s.enqueue(op{kind: opFunc, fn: func() error {
		mem := b.bytesView()[:count*size]
		switch size {
		case 1:
			fillWords(mem, uint8(pattern))
		case 2:
			fillWords(unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(mem))), count), uint16(pattern))
		default:
			fillWords(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(mem))), count), pattern)
		}
		return nil
	}})
}

// fillWords sets every element of w to v, doubling the filled prefix so
// that a large fill runs at copy speed.
func fillWords[T uint8 | uint16 | uint32](w []T, v T) {
	if len(w) == 0 {
		return
	}
	w[0] = v
	for n := 1; n < len(w); n *= 2 {
		copy(w[n:], w[:n])
	}
}

func (b *buffer) Close() error {
	if !b.view {
		b.mem = nil
	}
	return nil
}

// hostBuffer is plain memory standing for page-locked memory on the CPU.
type hostBuffer struct{ buffer }

func (h *hostBuffer) Pointer() unsafe.Pointer { return h.ptr }
