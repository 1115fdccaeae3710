package qd

import (
	"fmt"
	"iter"
)

// The block-level kernel API: loops over blocks of threads that share
// memory and meet at barriers (docs/kernels.md, "Block-level kernels").
// As for the rest of the kernel API, every function here is real Go: run
// natively, a block loop runs its blocks one after another and each thread
// loop its threads in order, which gives what a GPU gives when the kernel
// follows the rules of block loops.
//
// This file is also the front end's source of truth for these
// declarations: internal/frontend embeds an identical copy
// (blockapi.go.txt, refreshed by go generate ./internal/frontend) and a
// test fails if the two differ.

// MaxBlockSize is the most threads a block of a [Blocks] loop has: the
// limit of every GPU qd targets.
const MaxBlockSize = 1024

// Block is one block of a [Blocks] loop.
type Block struct {
	index, size int
}

// Blocks is the range of a block loop: n blocks of size threads each,
//
//	for b := range qd.Blocks(n, 256) {
//		tile := qd.Shared[[256]float32]()
//		for t := range b.Threads() { tile[t] = x[b.Index()*256+t] }
//		for t := range b.Threads() { y[b.Index()*256+t] = tile[255-t] }
//	}
//
// In a kernel it is a top-level loop whose blocks run in parallel, each on
// its own GPU block (CPU worker); size is a constant or computed from
// scalar parameters, 1 to [MaxBlockSize]. Natively the blocks run in
// order; a size outside 1..MaxBlockSize panics, as the launch of a kernel
// would fail.
func Blocks(n, size int) iter.Seq[Block] {
	if size < 1 || size > MaxBlockSize {
		panic(fmt.Sprintf("qd.Blocks: block size %d is outside 1..%d", size, MaxBlockSize))
	}
	return func(yield func(Block) bool) {
		for i := range n {
			if !yield(Block{index: i, size: size}) {
				return
			}
		}
	}
}

// Index is the block's index in its loop, 0 to n-1.
func (b Block) Index() int { return b.index }

// Size is the number of threads of the block.
func (b Block) Size() int { return b.size }

// Threads is the range of a thread loop: for t := range b.Threads() runs
// its body once per thread of the block, t from 0 to b.Size()-1, and then
// the threads wait for each other (a barrier), so that what a thread loop
// writes to shared memory is seen by the next. Natively the threads run
// in order.
func (b Block) Threads() iter.Seq[int] {
	return func(yield func(int) bool) {
		for t := range b.size {
			if !yield(t) {
				return
			}
		}
	}
}

// Shared returns a block's shared array of type A, an array type of
// constant size ([256]float32, [16][17]float32, [64]Particle), zeroed:
//
//	tile := qd.Shared[[16][16]float32]()
//
// It is declared at the level of a block loop, outside its thread loops;
// every block has its own. On GPUs it is the block's shared memory (at
// most 48 KiB for a block's arrays together). Natively it is new(A).
func Shared[A any]() *A { return new(A) }

// PerThread holds one value per thread of a block: a thread loop reads and
// writes its thread's value as v[t], and the value lives on to the block's
// later thread loops. On GPUs it is a register of each thread; natively, a
// slice indexed by the thread.
type PerThread[T any] []T

// NewPerThread declares a per-thread value of the block b, zero in every
// thread. It is declared at the level of a block loop, outside its thread
// loops; a thread loop indexes it only with its own variable (v[t]).
func NewPerThread[T any](b Block) PerThread[T] { return make(PerThread[T], b.size) }

// BlockElem is the set of value types the block collectives combine.
type BlockElem interface {
	int | int32 | int64 | uint | uint32 | uint64 | float32 | float64
}

// BlockSum is the sum of v over the block's threads, the same for every
// thread. Called at the level of a block loop, between thread loops; on a
// GPU its threads meet inside it. A float sum is added in the order the
// backend chooses (a tree on GPUs), so its last bits may differ from the
// native run's, which adds in thread order.
func BlockSum[T BlockElem](b Block, v PerThread[T]) T {
	var s T
	for _, x := range v[:b.size] {
		s += x
	}
	return s
}

// BlockMin is the least of v over the block's threads (for floats as Go's
// min: NaN if any is NaN, -0 below +0).
func BlockMin[T BlockElem](b Block, v PerThread[T]) T {
	m := v[0]
	for _, x := range v[1:b.size] {
		m = min(m, x)
	}
	return m
}

// BlockMax is the greatest of v over the block's threads (for floats as
// Go's max).
func BlockMax[T BlockElem](b Block, v PerThread[T]) T {
	m := v[0]
	for _, x := range v[1:b.size] {
		m = max(m, x)
	}
	return m
}

// BlockExclusiveSum is the exclusive prefix sum of v over the block's
// threads: thread t's value is the sum of v over the threads before t (0
// for thread 0). Called at the level of a block loop, as [BlockSum].
func BlockExclusiveSum[T BlockElem](b Block, v PerThread[T]) PerThread[T] {
	out := make(PerThread[T], b.size)
	var s T
	for t := range b.size {
		out[t] = s
		s += v[t]
	}
	return out
}

// BlockInclusiveSum is the inclusive prefix sum of v over the block's
// threads: thread t's value is the sum of v over threads 0 to t.
func BlockInclusiveSum[T BlockElem](b Block, v PerThread[T]) PerThread[T] {
	out := make(PerThread[T], b.size)
	var s T
	for t := range b.size {
		s += v[t]
		out[t] = s
	}
	return out
}
