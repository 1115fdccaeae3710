package main

import "github.com/quadrants-go/qd"

// tile is the side of the matrix product's square tiles: a block of
// tile×tile threads computes one tile of c.
const tile = 16

// matmul sets c = a·b. Each block loads a tile of a and one of b into
// shared memory, the threads of the block multiply them, and the block
// moves along the shared dimension tile by tile.
//
//qd:kernel
func matmul(a, b, c [][]float32) {
	for blk := range qd.Blocks((len(c)+tile-1)/tile*((len(c[0])+tile-1)/tile), tile*tile) {
		n, m, k := len(c), len(c[0]), len(b)
		tilesX := (m + tile - 1) / tile
		row0, col0 := blk.Index()/tilesX*tile, blk.Index()%tilesX*tile
		as := qd.Shared[[tile][tile]float32]()
		bs := qd.Shared[[tile][tile]float32]()
		acc := qd.NewPerThread[float32](blk)
		for k0 := 0; k0 < k; k0 += tile {
			for t := range blk.Threads() {
				ty, tx := t/tile, t%tile
				var av, bv float32
				if row0+ty < n && k0+tx < k {
					av = a[row0+ty][k0+tx]
				}
				if k0+ty < k && col0+tx < m {
					bv = b[k0+ty][col0+tx]
				}
				as[ty][tx], bs[ty][tx] = av, bv
			}
			for t := range blk.Threads() {
				ty, tx := t/tile, t%tile
				s := acc[t]
				for kk := range tile {
					s += as[ty][kk] * bs[kk][tx]
				}
				acc[t] = s
			}
		}
		for t := range blk.Threads() {
			ty, tx := t/tile, t%tile
			if row0+ty < n && col0+tx < m {
				c[row0+ty][col0+tx] = acc[t]
			}
		}
	}
}

// histogram counts the bytes of data into hist (256 bins). Each of
// nblocks blocks counts a strided share of data into bins of its own in
// shared memory, then adds them to hist: one global atomic per bin and
// block instead of one per byte.
//
//qd:kernel
func histogram(data []uint8, hist []uint32, nblocks int) {
	for blk := range qd.Blocks(nblocks, 256) {
		bins := qd.Shared[[256]uint32]()
		for t := range blk.Threads() {
			for i := blk.Index()*256 + t; i < len(data); i += nblocks * 256 {
				qd.AtomicAdd(&bins[data[i]], 1)
			}
		}
		for t := range blk.Threads() {
			qd.AtomicAdd(&hist[t], bins[t])
		}
	}
}

// scanSize is the number of elements a block of scanBlocks scans.
const scanSize = 1024

// scanBlocks writes to y the exclusive prefix sums of x within each run of
// scanSize elements, and to sums the total of each run.
//
//qd:kernel
func scanBlocks(x, y, sums []int32) {
	for blk := range qd.Blocks(len(sums), scanSize) {
		v := qd.NewPerThread[int32](blk)
		for t := range blk.Threads() {
			if i := blk.Index()*scanSize + t; i < len(x) {
				v[t] = x[i]
			}
		}
		prefix := qd.BlockExclusiveSum(blk, v)
		total := qd.BlockSum(blk, v)
		for t := range blk.Threads() {
			if i := blk.Index()*scanSize + t; i < len(x) {
				y[i] = prefix[t]
			}
			if t == 0 {
				sums[blk.Index()] = total
			}
		}
	}
}

// addOffsets adds to each run of scanSize elements of y the exclusive
// prefix sum of the runs before it.
//
//qd:kernel
func addOffsets(y, offsets []int32) {
	for i := range len(y) {
		y[i] += offsets[i/scanSize]
	}
}

// sortBlock is the number of keys a block of the radix sort's kernels
// handles, one per thread.
const sortBlock = 256

// sortBlocks is the number of blocks the radix sort's kernels run for n
// keys.
func sortBlocks(n int) int { return (n + sortBlock - 1) / sortBlock }

// digitCounts is the first step of a radix sort pass: for each block of
// keys and each 4-bit digit d of the keys at shift, how many of the
// block's keys have it, in counts[d*blocks+block] (digit-major, so that
// an exclusive scan of counts gives every block the place of its first
// key of each digit).
//
//qd:kernel
func digitCounts(keys []uint32, counts []int32, shift uint32) {
	for b := range qd.Blocks(sortBlocks(len(keys)), sortBlock) {
		bins := qd.Shared[[16]int32]()
		for t := range b.Threads() {
			if i := b.Index()*sortBlock + t; i < len(keys) {
				qd.AtomicAdd(&bins[keys[i]>>shift&15], 1)
			}
		}
		for t := range b.Threads() {
			if t < 16 {
				counts[t*sortBlocks(len(keys))+b.Index()] = bins[t]
			}
		}
	}
}

// scatterDigits is the last step of a radix sort pass: each key (and its
// value) goes to its digit's place for its block, offsets[d*blocks+block],
// plus the number of keys of the same digit before it in the block —
// found with one block scan per digit, so that the pass is stable.
//
//qd:kernel
func scatterDigits(keys, vals, outKeys, outVals []uint32, offsets []int32, shift uint32) {
	for b := range qd.Blocks(sortBlocks(len(keys)), sortBlock) {
		digit := qd.NewPerThread[int32](b)
		rank := qd.NewPerThread[int32](b)
		for t := range b.Threads() {
			digit[t] = -1 // past the last key
			if i := b.Index()*sortBlock + t; i < len(keys) {
				digit[t] = int32(keys[i] >> shift & 15)
			}
		}
		for d := range int32(16) {
			flag := qd.NewPerThread[int32](b)
			for t := range b.Threads() {
				if digit[t] == d {
					flag[t] = 1
				}
			}
			before := qd.BlockExclusiveSum(b, flag)
			for t := range b.Threads() {
				if digit[t] == d {
					rank[t] = before[t]
				}
			}
		}
		for t := range b.Threads() {
			if i := b.Index()*sortBlock + t; i < len(keys) {
				j := int(offsets[int(digit[t])*sortBlocks(len(keys))+b.Index()] + rank[t])
				outKeys[j], outVals[j] = keys[i], vals[i]
			}
		}
	}
}
