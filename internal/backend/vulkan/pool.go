package vulkan

import (
	"math/bits"
	"sync"

	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Stream-ordered allocations (AllocOn) come from a pool of freed memory,
// as CUDA's default memory pool serves cudaMallocAsync: a vkAllocateMemory
// and its buffer cost about 150 µs on NVIDIA's driver, against the 2 µs
// qd's bar gives an allocation and free on a stream. Sizes are rounded up
// to a power of two (at least 256 bytes); a block freed in stream order
// (FreeOn) returns to the pool once its stream reaches the free, and a
// later AllocOn of its size class takes it. The pool keeps at most
// poolLimit bytes; beyond, and for blocks over maxPooled, memory is freed.

const (
	minPooled = 256
	maxPooled = 256 << 20
)

// memPool is the device's pool of free blocks by size class.
type memPool struct {
	mu    sync.Mutex
	free  map[int][]*vk.Memory
	bytes int
	limit int
}

// poolClass is the size class of a request of n bytes, 0 when it is not
// pooled.
func poolClass(n int) int {
	if n > maxPooled {
		return 0
	}
	if n <= minPooled {
		return minPooled
	}
	return 1 << bits.Len(uint(n-1))
}

// get takes a free block of class c, nil when there is none.
func (p *memPool) get(c int) *vk.Memory {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.free[c]
	if len(l) == 0 {
		return nil
	}
	m := l[len(l)-1]
	p.free[c] = l[:len(l)-1]
	p.bytes -= c
	return m
}

// put keeps m, a block of class c, and reports whether it did (false:
// the pool is full; the caller frees it).
func (p *memPool) put(c int, m *vk.Memory) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+c > p.limit {
		return false
	}
	if p.free == nil {
		p.free = map[int][]*vk.Memory{}
	}
	p.free[c] = append(p.free[c], m)
	p.bytes += c
	return true
}

// drain returns every block, emptying the pool.
func (p *memPool) drain() []*vk.Memory {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*vk.Memory
	for c, l := range p.free {
		out = append(out, l...)
		delete(p.free, c)
	}
	p.bytes = 0
	return out
}
