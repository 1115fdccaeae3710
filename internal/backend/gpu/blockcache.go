package gpu

import (
	"errors"
	"math/bits"
	"sync"

	"github.com/ebitengine/purego"
)

// Stream-ordered block cache.
//
// AllocOn and FreeOn each cost a driver call (about half a microsecond of
// host time each on an H100 host), which a program that allocates and
// frees arrays on a stream in a loop pays every iteration. A block freed
// on stream s may be reused at once by work enqueued later on s, so FreeOn
// keeps pooled blocks in s's cache and AllocOn on s takes one back without
// calling the driver. Only the stream that freed a block reuses it:
// another stream would first need an event to be ordered after the free.
// Cacheable sizes are rounded up to classes (powers of two up to 1 MiB,
// then multiples of 1 MiB) so that nearby sizes share blocks.
//
// The cache holds at most cacheBytes per device and blocks of at most
// cacheMaxBlock; beyond that FreeOn frees for real. An allocation the
// pool refuses for lack of memory first gives every cached block back (in
// its stream's order) and tries again. Closing a stream frees its blocks
// in its order before destroying it; closing the device frees the rest.

const (
	cacheMaxBlock = 64 << 20
	cacheBytes    = 256 << 20
)

// sizeClass is the size AllocOn allocates for a request of n bytes: the
// class when it is cacheable, else n itself.
func sizeClass(n int) int {
	switch {
	case n > cacheMaxBlock:
		return n
	case n <= 512:
		return 512
	case n <= 1<<20:
		return 1 << bits.Len(uint(n-1))
	}
	return (n + 1<<20 - 1) &^ (1<<20 - 1)
}

// blockCache holds freed pooled blocks by stream and size class.
type blockCache struct {
	mu    sync.Mutex
	bytes int
	m     map[*stream]map[int][]uint64
}

// take returns a cached block of class on s, or 0.
func (c *blockCache) take(s *stream, class int) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.m[s][class]
	n := len(list)
	if n == 0 {
		return 0
	}
	p := list[n-1]
	c.m[s][class] = list[:n-1]
	c.bytes -= class
	return p
}

// keep caches block p of class, freed on s; false when the cache is full
// or s is closing (the caller frees it).
func (c *blockCache) keep(s *stream, class int, p uint64) bool {
	if class > cacheMaxBlock {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+class > cacheBytes || s.closed.Load() {
		return false
	}
	if c.m == nil {
		c.m = map[*stream]map[int][]uint64{}
	}
	byClass := c.m[s]
	if byClass == nil {
		byClass = map[int][]uint64{}
		c.m[s] = byClass
	}
	byClass[class] = append(byClass[class], p)
	c.bytes += class
	return true
}

// empty reports whether no block is cached.
func (c *blockCache) empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes == 0
}

// drop removes and returns the blocks of s (every stream's when s is nil),
// by stream.
func (c *blockCache) drop(s *stream) map[*stream][]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[*stream][]uint64{}
	for st, byClass := range c.m {
		if s != nil && st != s || s == nil && st.cap.Load() != nil {
			// Not this stream; or a stream that is capturing, which
			// would capture the free (its blocks stay cached).
			continue
		}
		for class, list := range byClass {
			out[st] = append(out[st], list...)
			c.bytes -= class * len(list)
		}
		delete(c.m, st)
	}
	return out
}

// freeCached frees the cached blocks of s (every stream's when s is nil),
// each in its stream's order, or in none when idle (the device is
// synchronized and its streams may be gone). It runs inside
// d.enter/leave.
func (d *Device) freeCached(s *stream, idle bool) error {
	var errs []error
	for st, list := range d.cache.drop(s) {
		h := st.h
		if idle {
			h = 0
		}
		for _, p := range list {
			r := res(purego.SyscallN(d.c.MemFreeAsync.Addr, uintptr(p), h))
			errs = append(errs, d.check(&d.c.MemFreeAsync, r))
		}
	}
	return errors.Join(errs...)
}
