package kabi

import "math"

// DefaultBlockDim is the block size of parallel tasks whose loop sets none.
const DefaultBlockDim = 256

// MaxBlockDim is the largest block qd launches: the limit of every GPU qd
// targets (CUDA's threads per block and HIP's work-group size). A device
// with a lower limit is checked again when a module is loaded.
const MaxBlockDim = 1024

// GridWaves is how many full waves of blocks a large range gets before the
// kernels start striding. One wave looks enough on paper, but registers or
// shared memory can keep fewer blocks resident than the thread count says,
// leaving multiprocessors idle at the tail; measured on an H200
// (2026-11-21), 8 waves took a 2-D 5-point stencil from 0.37 to 0.45 of its
// byte floor and saxpy from 0.963 to 0.968 of a device copy's bandwidth.
const GridWaves = 8

// MaxBlocks is the largest grid of a grid-stride launch of blockDim threads
// per block on a device of units multiprocessors (compute units) that hold
// threadsPerUnit threads each: waves times as many blocks as the device
// holds at once (at least one per unit); waves ≤ 0 means GridWaves.
func MaxBlocks(units, threadsPerUnit, blockDim, waves int) int {
	if waves <= 0 {
		waves = GridWaves
	}
	return waves * max(units, 1) * max(threadsPerUnit/max(blockDim, 1), 1)
}

// GridFor is the number of blocks for total points of blockDim threads each,
// capped at maxBlocks (the kernels stride over the rest); 0 when there is
// nothing to do.
func GridFor(total int64, blockDim, maxBlocks int) uint32 {
	if total <= 0 {
		return 0
	}
	bd := int64(max(blockDim, 1))
	blocks := (total-1)/bd + 1
	blocks = min(blocks, int64(max(maxBlocks, 1)), math.MaxInt32)
	return uint32(blocks)
}
