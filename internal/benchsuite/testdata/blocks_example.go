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

// The radix sort's kernels. A block of sortThreads threads takes a tile of
// sortTile consecutive keys, sortItems a thread; a pass sorts by one 4-bit
// digit. A thread counts its keys' digits in four packed words, 16 bits
// per digit (a tile's count of a digit fits in 16 bits), so that four
// block collectives give all 16 digits' counts at once.
const (
	sortThreads = 256
	sortItems   = 8
	sortTile    = sortThreads * sortItems
)

// sortTiles is the number of tiles (blocks) of n keys.
func sortTiles(n int) int { return (n + sortTile - 1) / sortTile }

// spaced is the place of element p of a tile staged in shared memory: a
// word skipped after every 32, so that threads reading consecutive words
// each hit another bank.
func spaced(p int) int { return p + p/32 }

// digitCount is digit d's 16-bit count in the packed words w0..w3.
func digitCount(w0, w1, w2, w3 uint64, d uint32) int32 {
	w := w0
	switch d >> 2 {
	case 1:
		w = w1
	case 2:
		w = w2
	case 3:
		w = w3
	}
	return int32(w >> ((d & 3) * 16) & 0xFFFF)
}

// countDigit adds one to digit d's count in the packed words c.
func countDigit(c [4]uint64, d uint32) [4]uint64 {
	for w := range 4 {
		if d>>2 == uint32(w) {
			c[w] += 1 << ((d & 3) * 16)
		}
	}
	return c
}

// digitCounts is the first step of a radix sort pass: for each tile of
// keys and each digit d of the keys at shift, how many of the tile's keys
// have it, in counts[d*tiles+tile] (digit-major, so that an exclusive
// scan of counts gives every tile the place of its first key of each
// digit).
//
//qd:kernel
func digitCounts(keys []uint32, counts []int32, shift uint32) {
	for b := range qd.Blocks(sortTiles(len(keys)), sortThreads) {
		tiles := sortTiles(len(keys))
		c0 := qd.NewPerThread[uint64](b)
		c1 := qd.NewPerThread[uint64](b)
		c2 := qd.NewPerThread[uint64](b)
		c3 := qd.NewPerThread[uint64](b)
		for t := range b.Threads() {
			var c [4]uint64
			for k := range sortItems {
				if i := b.Index()*sortTile + k*sortThreads + t; i < len(keys) {
					c = countDigit(c, keys[i]>>shift&15)
				}
			}
			c0[t], c1[t], c2[t], c3[t] = c[0], c[1], c[2], c[3]
		}
		s0 := qd.BlockSum(b, c0)
		s1 := qd.BlockSum(b, c1)
		s2 := qd.BlockSum(b, c2)
		s3 := qd.BlockSum(b, c3)
		for t := range b.Threads() {
			if t < 16 {
				counts[t*tiles+b.Index()] = digitCount(s0, s1, s2, s3, uint32(t))
			}
		}
	}
}

// scanCounts writes to offsets the exclusive scan of counts, in one block
// that walks counts 8192 at a time, carrying the sum so far: the counts of
// a pass are few (16 per tile), and one launch beats a scan's three.
//
//qd:kernel
func scanCounts(counts, offsets []int32) {
	for b := range qd.Blocks(1, 1024) {
		run := qd.Shared[[8192 + 8192/32]int32]()
		v := qd.NewPerThread[int32](b)
		carry := int32(0)
		for base := 0; base < len(counts); base += 8192 {
			for t := range b.Threads() {
				for k := range 8 {
					e := int32(0)
					if i := base + 1024*k + t; i < len(counts) {
						e = counts[i]
					}
					run[spaced(1024*k+t)] = e
				}
			}
			for t := range b.Threads() {
				var s int32
				for k := range 8 {
					s += run[spaced(t*8+k)]
				}
				v[t] = s
			}
			prefix := qd.BlockExclusiveSum(b, v)
			total := qd.BlockSum(b, v)
			for t := range b.Threads() {
				s := carry + prefix[t]
				for k := range 8 {
					e := run[spaced(t*8+k)]
					run[spaced(t*8+k)] = s
					s += e
				}
			}
			for t := range b.Threads() {
				for k := range 8 {
					if i := base + 1024*k + t; i < len(counts) {
						offsets[i] = run[spaced(1024*k+t)]
					}
				}
			}
			carry += total
		}
	}
}

// scatterDigits is the last step of a radix sort pass: each key (and its
// value) goes to its digit's place for its tile, offsets[d*tiles+tile],
// plus the number of keys of the same digit before it in the tile, so that
// the pass is stable. The tile is staged in shared memory (coalesced
// loads) so that thread t can take keys t·sortItems on, in order; the
// block's exclusive scans of the packed counts give each thread how many
// keys of each digit the threads before it hold.
//
//qd:kernel
func scatterDigits(keys, vals, outKeys, outVals []uint32, offsets []int32, shift uint32) {
	for b := range qd.Blocks(sortTiles(len(keys)), sortThreads) {
		tiles := sortTiles(len(keys))
		staged := qd.Shared[[sortTile + sortTile/32]uint32]()
		start := qd.Shared[[16]int32]()
		base := b.Index() * sortTile
		for t := range b.Threads() {
			for k := range sortItems {
				if i := base + k*sortThreads + t; i < len(keys) {
					staged[spaced(k*sortThreads+t)] = keys[i]
				}
			}
			if t < 16 {
				start[t] = offsets[t*tiles+b.Index()]
			}
		}
		c0 := qd.NewPerThread[uint64](b)
		c1 := qd.NewPerThread[uint64](b)
		c2 := qd.NewPerThread[uint64](b)
		c3 := qd.NewPerThread[uint64](b)
		for t := range b.Threads() {
			var c [4]uint64
			for k := range sortItems {
				if base+t*sortItems+k < len(keys) {
					c = countDigit(c, staged[spaced(t*sortItems+k)]>>shift&15)
				}
			}
			c0[t], c1[t], c2[t], c3[t] = c[0], c[1], c[2], c[3]
		}
		p0 := qd.BlockExclusiveSum(b, c0)
		p1 := qd.BlockExclusiveSum(b, c1)
		p2 := qd.BlockExclusiveSum(b, c2)
		p3 := qd.BlockExclusiveSum(b, c3)
		for t := range b.Threads() {
			c := [4]uint64{p0[t], p1[t], p2[t], p3[t]}
			for k := range sortItems {
				if i := base + t*sortItems + k; i < len(keys) {
					key := staged[spaced(t*sortItems+k)]
					d := key >> shift & 15
					j := int(start[d] + digitCount(c[0], c[1], c[2], c[3], d))
					outKeys[j], outVals[j] = key, vals[i]
					c = countDigit(c, d)
				}
			}
		}
	}
}

// scatterKeys is scatterDigits for keys alone, with coalesced writes: the
// block first places each key at its rank in the tile sorted by digit (in
// shared memory), then thread t writes keys t, t+sortThreads, ... of that
// order, so that consecutive threads write consecutive places of a digit's
// run instead of each thread's keys landing far apart.
//
//qd:kernel
func scatterKeys(keys, outKeys []uint32, counts, offsets []int32, shift uint32) {
	for b := range qd.Blocks(sortTiles(len(keys)), sortThreads) {
		tiles := sortTiles(len(keys))
		staged := qd.Shared[[sortTile + sortTile/32]uint32]()
		sorted := qd.Shared[[sortTile + sortTile/32]uint32]()
		start := qd.Shared[[16]int32]()
		local := qd.Shared[[16]int32]()
		base := b.Index() * sortTile
		n := min(sortTile, len(keys)-base)
		for t := range b.Threads() {
			for k := range sortItems {
				if i := base + k*sortThreads + t; i < len(keys) {
					staged[spaced(k*sortThreads+t)] = keys[i]
				}
			}
			if t < 16 {
				start[t] = offsets[t*tiles+b.Index()]
				s := int32(0)
				for d := range t {
					s += counts[d*tiles+b.Index()]
				}
				local[t] = s
			}
		}
		c0 := qd.NewPerThread[uint64](b)
		c1 := qd.NewPerThread[uint64](b)
		c2 := qd.NewPerThread[uint64](b)
		c3 := qd.NewPerThread[uint64](b)
		for t := range b.Threads() {
			var c [4]uint64
			for k := range sortItems {
				if t*sortItems+k < n {
					c = countDigit(c, staged[spaced(t*sortItems+k)]>>shift&15)
				}
			}
			c0[t], c1[t], c2[t], c3[t] = c[0], c[1], c[2], c[3]
		}
		p0 := qd.BlockExclusiveSum(b, c0)
		p1 := qd.BlockExclusiveSum(b, c1)
		p2 := qd.BlockExclusiveSum(b, c2)
		p3 := qd.BlockExclusiveSum(b, c3)
		for t := range b.Threads() {
			c := [4]uint64{p0[t], p1[t], p2[t], p3[t]}
			for k := range sortItems {
				if t*sortItems+k < n {
					key := staged[spaced(t*sortItems+k)]
					d := key >> shift & 15
					sorted[spaced(int(local[d]+digitCount(c[0], c[1], c[2], c[3], d)))] = key
					c = countDigit(c, d)
				}
			}
		}
		for t := range b.Threads() {
			for k := range sortItems {
				if e := k*sortThreads + t; e < n {
					key := sorted[spaced(e)]
					d := key >> shift & 15
					outKeys[int(start[d])+e-int(local[d])] = key
				}
			}
		}
	}
}
