package vulkan

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Staging memory carries copies between the device and host memory that
// is not a host buffer of the device, and the unaligned ends of fills.
//
// Small pieces (up to stagingSmall bytes) are cut from blocks of
// stagingBlockBytes, one after the other; a block is reused once every
// piece cut from it is released. So a burst of small copies, each freed
// only when its stream reaches it, takes a few allocations, not one each
// (devices allow as few as 4096 allocations in all). Larger pieces are
// whole buffers of power-of-two sizes from stagingMin up to chunk(); a
// larger copy goes through several. The pool keeps at most stagingKeep
// bytes of free whole buffers and stagingFreeBlocks free blocks.
const (
	stagingSmall      = 64 << 10
	stagingBlockBytes = 1 << 20
	stagingFreeBlocks = 4
	stagingMin        = 128 << 10
	stagingChunk      = 32 << 20
	stagingKeep       = 64 << 20
	stagingAlign      = 16
)

// stagingPool hands out staging memory: host-visible, host-coherent,
// mapped.
type stagingPool struct {
	d      *Device
	mu     sync.Mutex
	cur    *stagingBlock   // the block small pieces are cut from
	blocks []*stagingBlock // free blocks
	free   []*vk.Memory    // free whole buffers
	bytes  int             // the bytes of free
	made   atomic.Int32    // allocations made, for tests
	closed bool
}

// stagingBlock is memory small pieces are cut from.
type stagingBlock struct {
	m    *vk.Memory
	used int // bytes cut so far
	refs int // pieces not released
}

// staging is a piece of staging memory: bytes [off, off+n) of m.
type staging struct {
	m   *vk.Memory
	off int
	n   int
	blk *stagingBlock // the block it was cut from; nil for a whole buffer
}

// bytes is the piece as a slice of the mapping.
func (st staging) bytes() []byte { return hostBytes(st.m.Mapped, st.off+st.n)[st.off:] }

// hostBytes is n bytes of host memory at p (a mapping) as a slice.
func hostBytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// chunk is the most one piece carries: stagingChunk, or less on a device
// whose buffers are smaller.
func (p *stagingPool) chunk() int {
	if lim := p.d.lim.maxBufferBytes; lim < stagingChunk {
		return 1 << (bits.Len64(lim) - 1)
	}
	return stagingChunk
}

// get returns n bytes (1 ≤ n ≤ chunk()) of staging memory.
func (p *stagingPool) get(n int) (staging, error) {
	if n <= stagingSmall {
		return p.cut(n)
	}
	size := min(max(stagingMin, 1<<bits.Len(uint(n-1))), p.chunk())
	p.mu.Lock()
	for i, m := range p.free {
		if m.Bytes == size {
			p.free = slices.Delete(p.free, i, i+1)
			p.bytes -= size
			p.mu.Unlock()
			return staging{m: m, n: n}, nil
		}
	}
	p.mu.Unlock()
	m, err := p.allocate(size)
	return staging{m: m, n: n}, err
}

// cut cuts n bytes from the current block, taking a new block when it is
// full.
func (p *stagingPool) cut(n int) (staging, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.cur
	if b != nil && b.used+n > b.m.Bytes && b.refs == 0 {
		b.used = 0 // every piece of it is back: start it over
	}
	if b == nil || b.used+n > b.m.Bytes {
		if k := len(p.blocks); k > 0 {
			b = p.blocks[k-1]
			p.blocks = p.blocks[:k-1]
		} else {
			m, err := p.allocate(stagingBlockBytes)
			if err != nil {
				return staging{}, err
			}
			b = &stagingBlock{m: m}
		}
		p.retireLocked(p.cur)
		p.cur = b
	}
	st := staging{m: b.m, off: b.used, n: n, blk: b}
	b.used += (n + stagingAlign - 1) &^ (stagingAlign - 1)
	b.refs++
	return st, nil
}

// retireLocked takes b out of use as the current block: to the free
// blocks if every piece of it is back; otherwise its last release does
// that.
func (p *stagingPool) retireLocked(b *stagingBlock) {
	if b == nil || b.refs > 0 {
		return
	}
	b.used = 0
	if !p.closed && len(p.blocks) < stagingFreeBlocks {
		p.blocks = append(p.blocks, b)
		return
	}
	p.d.vd.Free(b.m)
}

func (p *stagingPool) allocate(size int) (*vk.Memory, error) {
	m, err := p.d.vd.Allocate(size, p.d.hostWant, p.d.hostFallback)
	if err != nil {
		return nil, fmt.Errorf("vulkan: staging memory of %d bytes: %w", size, p.d.wrap(err))
	}
	p.made.Add(1)
	return m, nil
}

// put gives st back: to its block, or to the pool's free buffers (or
// frees it beyond stagingKeep).
func (p *stagingPool) put(st staging) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := st.blk; b != nil {
		b.refs--
		if b.refs == 0 && b != p.cur {
			p.retireLocked(b)
		}
		return
	}
	if !p.closed && p.bytes+st.m.Bytes <= stagingKeep {
		p.free = append(p.free, st.m)
		p.bytes += st.m.Bytes
		return
	}
	p.d.vd.Free(st.m)
}

// release frees the pool's free memory, at Device.Close; pieces put back
// later are freed then (blocks with their last piece).
func (p *stagingPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, m := range p.free {
		p.d.vd.Free(m)
	}
	for _, b := range p.blocks {
		p.d.vd.Free(b.m)
	}
	p.free, p.bytes, p.blocks = nil, 0, nil
	if b := p.cur; b != nil {
		p.cur = nil
		p.retireLocked(b)
	}
}

// stage writes a piece of n bytes with fill, then submits record's
// commands, which read it, on s (on the queue r picks: record must hold
// transfers alone for a transfer queue); the piece goes back once s reaches the
// submit (at once if the submit fails).
func (p *stagingPool) stage(s *Stream, r route, n int, fill func(b []byte), record func(cb uintptr, m *vk.Memory, off int)) error {
	st, err := p.get(n)
	if err != nil {
		return err
	}
	fill(st.bytes())
	if err := p.d.vd.Flush(st.m); err != nil {
		p.put(st)
		return p.d.wrap(err)
	}
	v, err := s.submitTo(r, func(cb uintptr) { record(cb, st.m, st.off) })
	if err != nil {
		p.put(st)
		return err
	}
	s.onComplete(v, func() error { p.put(st); return nil })
	return nil
}
