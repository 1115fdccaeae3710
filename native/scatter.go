package native

import (
	"runtime"
	"sync"
)

// Number is the set of element types a privatised scatter adds.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64
}

// Private is the private copies of one scatter target h in one parallel
// loop. Each chunk of the loop takes a copy (Get), adds into it in place
// of h (Scatter) and gives it back (Put); a copy is taken by one chunk at
// a time and is never cleared between them, so there are as many as
// chunks ran at once, one per worker. Merge adds their sum to h when the
// loop is done. The order of a float scatter's additions changes with it,
// as any parallel order does (docs/semantics.md#reductions).
type Private[T Number] struct {
	h  []T
	on bool // the loop is long enough for copies to pay
	copies[[]T]
}

// copies are the private copies of one target, of type C, made as chunks
// ask for them and reused by later chunks.
type copies[C any] struct {
	mu   sync.Mutex
	free []C
	all  []C // every copy made, for the merge
}

// take returns a free copy, or one that fresh makes.
func (c *copies[C]) take(fresh func() C) C {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		x := c.free[n-1]
		c.free = c.free[:n-1]
		return x
	}
	x := fresh()
	c.all = append(c.all, x)
	return x
}

// give puts back a copy that take returned.
func (c *copies[C]) give(x C) {
	c.mu.Lock()
	c.free = append(c.free, x)
	c.mu.Unlock()
}

// privateOver is the least ratio of a loop's iterations per worker to the
// target's elements at which the loop takes copies: below it, zeroing the
// copies and merging them would cost a large part of the loop's time.
const privateOver = 8

// NewPrivate makes the private copies of h for one loop of iters
// iterations.
func NewPrivate[T Number](h []T, iters int) *Private[T] {
	workers := int64(runtime.GOMAXPROCS(0))
	return &Private[T]{h: h, on: len(h) > 0 && int64(iters) >= privateOver*int64(len(h))*workers}
}

// Get returns a copy for a chunk, or nil when the loop is too short for
// copies to pay.
func (p *Private[T]) Get() []T {
	if !p.on {
		return nil
	}
	return p.take(func() []T { return make([]T, len(p.h)) })
}

// Put gives back a chunk's copy.
func (p *Private[T]) Put(c []T) {
	if c != nil {
		p.give(c)
	}
}

// Merge adds the copies' sum to h through add (qd.AtomicAdd: other work
// may add into h at the same time), one call per non-zero element.
func (p *Private[T]) Merge(add func(*T, T) T) {
	if len(p.all) == 0 {
		return
	}
	sum := p.all[0]
	for _, c := range p.all[1:] {
		for i, v := range c {
			sum[i] += v
		}
	}
	for i, v := range sum {
		if v != 0 {
			add(&p.h[i], v)
		}
	}
}

// Scatter is a kernel's qd.AtomicAdd(&h[i], v) statement in a loop chunk
// that privatises h: it adds into the chunk's copy c when the chunk has
// one, and through add (qd.AtomicAdd) into h itself when it does not. An
// index out of range panics as h[i] would: c has h's length.
func Scatter[T Number, I Integer](c, h []T, i I, v T, add func(*T, T) T) {
	if c != nil {
		c[i] += v
		return
	}
	add(&h[i], v)
}

// Private2 is Private for a 2-D target, rows of numbers: each copy has
// h's rows, of h's row lengths, over one flat buffer.
type Private2[T Number] struct {
	h  [][]T
	n  int // h's elements
	on bool
	copies[[][]T]
}

// NewPrivate2 makes the private copies of the 2-D target h for one loop
// of iters iterations.
func NewPrivate2[T Number](h [][]T, iters int) *Private2[T] {
	n := 0
	for _, r := range h {
		n += len(r)
	}
	workers := int64(runtime.GOMAXPROCS(0))
	return &Private2[T]{h: h, n: n, on: n > 0 && int64(iters) >= privateOver*int64(n)*workers}
}

// Get returns a copy for a chunk, or nil when the loop is too short for
// copies to pay.
func (p *Private2[T]) Get() [][]T {
	if !p.on {
		return nil
	}
	return p.take(func() [][]T {
		flat := make([]T, p.n)
		c := make([][]T, len(p.h))
		for i, r := range p.h {
			c[i], flat = flat[:len(r):len(r)], flat[len(r):]
		}
		return c
	})
}

// Put gives back a chunk's copy.
func (p *Private2[T]) Put(c [][]T) {
	if c != nil {
		p.give(c)
	}
}

// Merge adds the copies' sum to h through add, one call per non-zero
// element.
func (p *Private2[T]) Merge(add func(*T, T) T) {
	if len(p.all) == 0 {
		return
	}
	sum := p.all[0]
	for _, c := range p.all[1:] {
		for i, r := range c {
			for j, v := range r {
				sum[i][j] += v
			}
		}
	}
	for i, r := range sum {
		for j, v := range r {
			if v != 0 {
				add(&p.h[i][j], v)
			}
		}
	}
}

// Scatter2 is Scatter for qd.AtomicAdd(&h[i][j], v).
func Scatter2[T Number, I, J Integer](c, h [][]T, i I, j J, v T, add func(*T, T) T) {
	if c != nil {
		c[i][j] += v
		return
	}
	add(&h[i][j], v)
}
