package cpu

import "sync/atomic"

// chunkEnds hands out the chunk numbers [0, n) of a parallel task, each
// once, from both ends: the stream's goroutine takes from the front, the
// helpers from the back. Each side so works on the same part of the arrays
// launch after launch and finds it in its own core's cache; when dealt
// from one counter in turn, the chunks of a short launch changed cores at
// every launch, and two cores reached 1.75-1.80x one on the 256² heat
// step against 1.81-1.83x from both ends.
type chunkEnds struct {
	// e is the next front chunk in the low 32 bits and the end of the
	// chunks still free (exclusive) in the high 32.
	e atomic.Uint64
}

func (c *chunkEnds) reset(n int64) { c.e.Store(uint64(n) << 32) }

// take gives the next chunk from the front, or from the back, and false
// once none is left.
func (c *chunkEnds) take(back bool) (int64, bool) {
	for {
		e := c.e.Load()
		f, b := int64(uint32(e)), int64(e>>32)
		if f >= b {
			return 0, false
		}
		n, next := f, uint64(b)<<32|uint64(f+1)
		if back {
			n, next = b-1, uint64(b-1)<<32|uint64(f)
		}
		if c.e.CompareAndSwap(e, next) {
			return n, true
		}
	}
}
