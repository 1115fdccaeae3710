package bench

import "github.com/quadrants-go/qd"

// Ports of classic CUDA programs to qd's block loops, timed by qd bench's
// "ports" rows (internal/benchsuite/ports.go) beside the originals built
// by nvcc (testdata/ports/run.sh). Each kernel keeps its original's
// algorithm, block shape, shared tiles and launches; the names are the
// originals'. testdata/ports/README.md lists where a port differs.

// gridXY is the place (x, y) of block i in a grid gx blocks wide, x the
// faster, as CUDA numbers a 2-D grid's blocks: qd.Blocks is 1-D. The
// division is in 32 bits, as the originals' int arithmetic; it runs once
// per block.
func gridXY(i, gx int) (x, y int) {
	return int(uint32(i) % uint32(gx)), int(uint32(i) / uint32(gx))
}

// ---- CUDA samples: matrixMul (Samples/0_Introduction/matrixMul) ----

// matrixMul sets c = a·b: a block of 32×32 threads computes a 32×32 tile
// of c, each thread one element, stepping along the shared dimension
// through 32×32 shared tiles of a and b (both sides multiples of 32, as
// the sample requires). Block b.Index() is the sample's
// (blockIdx.x, blockIdx.y) with x the faster.
//
//qd:kernel
func matrixMul(c, a, b [][]float32) {
	for blk := range qd.Blocks(len(b[0])/32*(len(a)/32), 1024) {
		wA := len(a[0])
		bx, by := gridXY(blk.Index(), len(b[0])/32)
		as := qd.Shared[[32][32]float32]()
		bs := qd.Shared[[32][32]float32]()
		csub := qd.NewPerThread[float32](blk)
		for k0 := 0; k0 < wA; k0 += 32 {
			for t := range blk.Threads() {
				tx, ty := t%32, t/32
				as[ty][tx] = a[by*32+ty][k0+tx]
				bs[ty][tx] = b[k0+ty][bx*32+tx]
			}
			for t := range blk.Threads() {
				tx, ty := t%32, t/32
				s := csub[t]
				for k := range 32 {
					s += as[ty][k] * bs[k][tx]
				}
				csub[t] = s
			}
		}
		for t := range blk.Threads() {
			c[by*32+t/32][bx*32+t%32] = csub[t]
		}
	}
}

// ---- CUDA samples: transpose (Samples/6_Performance/transpose) ----

// The transpose sample's tiles: 32×32 elements moved by 32×16 threads,
// each thread two rows of its tile.
const (
	tileDim   = 32
	blockRows = 16
)

// transposeCopy is the sample's copy kernel, its reference for the best a
// transpose can do: each block copies one 32×32 tile of in to out.
//
//qd:kernel
func transposeCopy(out, in [][]float32) {
	for b := range qd.Blocks(len(in[0])/tileDim*(len(in)/tileDim), tileDim*blockRows) {
		bx, by := gridXY(b.Index(), len(in[0])/tileDim)
		x0, y0 := bx*tileDim, by*tileDim
		for t := range b.Threads() {
			tx, ty := t%tileDim, t/tileDim
			for i := 0; i < tileDim; i += blockRows {
				out[y0+ty+i][x0+tx] = in[y0+ty+i][x0+tx]
			}
		}
	}
}

// transposeNoBankConflicts is the sample's "optimized" transpose: a block
// reads a 32×32 tile of in along its rows into shared memory and writes
// it to out along out's rows; the tile's 33rd column puts a tile column's
// 32 words in 32 different banks.
//
//qd:kernel
func transposeNoBankConflicts(out, in [][]float32) {
	for b := range qd.Blocks(len(in[0])/tileDim*(len(in)/tileDim), tileDim*blockRows) {
		bx, by := gridXY(b.Index(), len(in[0])/tileDim)
		tile := qd.Shared[[tileDim][tileDim + 1]float32]()
		for t := range b.Threads() {
			tx, ty := t%tileDim, t/tileDim
			for i := 0; i < tileDim; i += blockRows {
				tile[ty+i][tx] = in[by*tileDim+ty+i][bx*tileDim+tx]
			}
		}
		for t := range b.Threads() {
			tx, ty := t%tileDim, t/tileDim
			for i := 0; i < tileDim; i += blockRows {
				out[bx*tileDim+ty+i][by*tileDim+tx] = tile[tx][ty+i]
			}
		}
	}
}

// ---- CUDA samples: histogram256 (Samples/2_Concepts_and_Techniques/histogram) ----

// The histogram sample's shapes: 240 blocks of 6 warps, each warp
// counting into a sub-histogram of its own, and a merge by blocks of 256.
const (
	histWarps         = 6
	histBlock         = histWarps * 32
	partialHistograms = 240
	mergeBlock        = 256
)

// histogram256Kernel counts the bytes of data (four to a word) into one
// partial histogram per block, partial[block][bin]: each warp of each of
// the 240 blocks counts a strided share of the words into its own 256
// shared bins, and the block adds its warps' bins.
//
//qd:kernel
func histogram256Kernel(partial [][]uint32, data []uint32) {
	for b := range qd.Blocks(partialHistograms, histBlock) {
		hist := qd.Shared[[histWarps][256]uint32]()
		for t := range b.Threads() {
			w := t / 32
			for pos := b.Index()*histBlock + t; pos < len(data); pos += histBlock * partialHistograms {
				d := data[pos]
				qd.AtomicAdd(&hist[w][d&0xFF], 1)
				qd.AtomicAdd(&hist[w][(d>>8)&0xFF], 1)
				qd.AtomicAdd(&hist[w][(d>>16)&0xFF], 1)
				qd.AtomicAdd(&hist[w][(d>>24)&0xFF], 1)
			}
		}
		for t := range b.Threads() {
			for bin := t; bin < 256; bin += histBlock {
				var sum uint32
				for i := range histWarps {
					sum += hist[i][bin]
				}
				partial[b.Index()][bin] = sum
			}
		}
	}
}

// mergeHistogram256Kernel adds the partial histograms: one block per bin,
// each thread a strided share of the partials, then a tree in shared
// memory.
//
//qd:kernel
func mergeHistogram256Kernel(histogram []uint32, partial [][]uint32) {
	for b := range qd.Blocks(256, mergeBlock) {
		data := qd.Shared[[mergeBlock]uint32]()
		for t := range b.Threads() {
			var sum uint32
			for i := t; i < len(partial); i += mergeBlock {
				sum += partial[i][b.Index()]
			}
			data[t] = sum
		}
		for stride := mergeBlock / 2; stride > 0; stride >>= 1 {
			for t := range b.Threads() {
				if t < stride {
					data[t] += data[t+stride]
				}
			}
		}
		for t := range b.Threads() {
			if t == 0 {
				histogram[b.Index()] = data[0]
			}
		}
	}
}

// ---- CUDA samples: scan (Samples/2_Concepts_and_Techniques/scan) ----

// scanBlock is the scan sample's THREADBLOCK_SIZE: each thread scans four
// consecutive elements, a block 4·256.
const scanBlock = 256

// scan1Inclusive is the sample's naive inclusive scan of v over runs of
// size threads (a power of two, at most scanBlock), through s (2·scanBlock
// words): each thread's value sits at pos[t], after size zeros, and each
// step adds the value offset places before. Its result is left in s at
// pos[t]; the caller's next thread loop reads it there.
func scan1Inclusive(b qd.Block, s *[2 * scanBlock]uint32, v, pos, tmp qd.PerThread[uint32], size uint32) {
	for t := range b.Threads() {
		p := 2*uint32(t) - (uint32(t) & (size - 1))
		s[p] = 0
		p += size
		s[p] = v[t]
		pos[t] = p
	}
	for offset := uint32(1); offset < size; offset <<= 1 {
		for t := range b.Threads() {
			tmp[t] = s[pos[t]] + s[pos[t]-offset]
		}
		for t := range b.Threads() {
			s[pos[t]] = tmp[t]
		}
	}
}

// scanExclusiveShared writes to dst the exclusive scan of each run of size
// elements of src (size a power of two, 4 to 4·scanBlock), 4·scanBlock
// elements per block: each thread adds its four, the block scans the
// threads' totals, each thread writes its four.
//
//qd:kernel
func scanExclusiveShared(dst, src []uint32, size uint32) {
	for b := range qd.Blocks(len(src)/(4*scanBlock), scanBlock) {
		s := qd.Shared[[2 * scanBlock]uint32]()
		in := qd.NewPerThread[[4]uint32](b)
		top := qd.NewPerThread[uint32](b)
		pos := qd.NewPerThread[uint32](b)
		tmp := qd.NewPerThread[uint32](b)
		for t := range b.Threads() {
			i := 4 * (b.Index()*scanBlock + t)
			x := [4]uint32{src[i], src[i+1], src[i+2], src[i+3]}
			in[t] = x
			top[t] = x[0] + x[1] + x[2] + x[3]
		}
		scan1Inclusive(b, s, top, pos, tmp, size/4)
		for t := range b.Threads() {
			x := in[t]
			o := s[pos[t]] - top[t] // the exclusive scan of the threads' totals
			i := 4 * (b.Index()*scanBlock + t)
			dst[i] = o
			dst[i+1] = o + x[0]
			dst[i+2] = o + x[0] + x[1]
			dst[i+3] = o + x[0] + x[1] + x[2]
		}
	}
}

// scanExclusiveShared2 scans the totals of the runs of 4·scanBlock
// elements that scanExclusiveShared left (each the last exclusive sum plus
// the last element) within groups of arrayLength runs, into buf.
//
//qd:kernel
func scanExclusiveShared2(buf, dst, src []uint32, arrayLength uint32) {
	for b := range qd.Blocks((len(buf)+scanBlock-1)/scanBlock, scanBlock) {
		s := qd.Shared[[2 * scanBlock]uint32]()
		v := qd.NewPerThread[uint32](b)
		pos := qd.NewPerThread[uint32](b)
		tmp := qd.NewPerThread[uint32](b)
		for t := range b.Threads() {
			if p := b.Index()*scanBlock + t; p < len(buf) {
				last := 4*scanBlock - 1 + 4*scanBlock*p
				v[t] = dst[last] + src[last]
			}
		}
		scan1Inclusive(b, s, v, pos, tmp, arrayLength)
		for t := range b.Threads() {
			if p := b.Index()*scanBlock + t; p < len(buf) {
				buf[p] = s[pos[t]] - v[t]
			}
		}
	}
}

// uniformUpdate adds to each run of 4·scanBlock elements of data its
// run's offset from buffer, read once per block into shared memory.
//
//qd:kernel
func uniformUpdate(data, buffer []uint32) {
	for b := range qd.Blocks(len(data)/(4*scanBlock), scanBlock) {
		buf := qd.Shared[[1]uint32]()
		for t := range b.Threads() {
			if t == 0 {
				buf[0] = buffer[b.Index()]
			}
		}
		for t := range b.Threads() {
			i := 4 * (b.Index()*scanBlock + t)
			data[i] += buf[0]
			data[i+1] += buf[0]
			data[i+2] += buf[0]
			data[i+3] += buf[0]
		}
	}
}

// ---- CUDA samples: sortingNetworks, bitonic sort (Samples/2_Concepts_and_Techniques/sortingNetworks) ----

// sharedSizeLimit is the sample's SHARED_SIZE_LIMIT: the keys a block
// sorts in shared memory, two per thread.
const sharedSizeLimit = 1024

// comparator orders the pairs at positions a and b of the shared keys k
// and values v: descending when dir is 0, ascending when it is 1, as the
// sample's Comparator.
func comparator(k, v *[sharedSizeLimit]uint32, a, b, dir uint32) {
	if (k[a] > k[b]) == (dir != 0) {
		k[a], k[b] = k[b], k[a]
		v[a], v[b] = v[b], v[a]
	}
}

// bitonicSortShared1 sorts each run of sharedSizeLimit keys of srcKey
// (with their values) into dstKey, alternately ascending (even runs) and
// descending (odd runs), so that each pair of runs is a bitonic sequence.
//
//qd:kernel
func bitonicSortShared1(dstKey, dstVal, srcKey, srcVal []uint32) {
	for b := range qd.Blocks(len(srcKey)/sharedSizeLimit, sharedSizeLimit/2) {
		sk := qd.Shared[[sharedSizeLimit]uint32]()
		sv := qd.Shared[[sharedSizeLimit]uint32]()
		base := b.Index() * sharedSizeLimit
		for t := range b.Threads() {
			sk[t] = srcKey[base+t]
			sv[t] = srcVal[base+t]
			sk[t+sharedSizeLimit/2] = srcKey[base+t+sharedSizeLimit/2]
			sv[t+sharedSizeLimit/2] = srcVal[base+t+sharedSizeLimit/2]
		}
		for size := uint32(2); size < sharedSizeLimit; size <<= 1 {
			for stride := size / 2; stride > 0; stride >>= 1 {
				for t := range b.Threads() {
					tt := uint32(t)
					ddd := uint32(0)
					if tt&(size/2) != 0 {
						ddd = 1
					}
					pos := 2*tt - (tt & (stride - 1))
					comparator(sk, sv, pos, pos+stride, ddd)
				}
			}
		}
		ddd := uint32(b.Index() & 1)
		for stride := uint32(sharedSizeLimit / 2); stride > 0; stride >>= 1 {
			for t := range b.Threads() {
				pos := 2*uint32(t) - (uint32(t) & (stride - 1))
				comparator(sk, sv, pos, pos+stride, ddd)
			}
		}
		for t := range b.Threads() {
			dstKey[base+t] = sk[t]
			dstVal[base+t] = sv[t]
			dstKey[base+t+sharedSizeLimit/2] = sk[t+sharedSizeLimit/2]
			dstVal[base+t+sharedSizeLimit/2] = sv[t+sharedSizeLimit/2]
		}
	}
}

// bitonicMergeGlobal is one step of the bitonic merge for a stride of
// sharedSizeLimit or more, in place: one comparator per thread, in
// blocks of 256.
//
//qd:kernel
func bitonicMergeGlobal(key, val []uint32, arrayLength, size, stride, dir uint32) {
	for b := range qd.Blocks(len(key)/512, 256) {
		for t := range b.Threads() {
			g := uint32(b.Index()*256 + t)
			comparatorI := g & (arrayLength/2 - 1)
			ddd := dir
			if comparatorI&(size/2) != 0 {
				ddd ^= 1
			}
			pos := 2*g - (g & (stride - 1))
			keyA, valA := key[pos], val[pos]
			keyB, valB := key[pos+stride], val[pos+stride]
			if (keyA > keyB) == (ddd != 0) {
				keyA, keyB = keyB, keyA
				valA, valB = valB, valA
			}
			key[pos], val[pos] = keyA, valA
			key[pos+stride], val[pos+stride] = keyB, valB
		}
	}
}

// bitonicMergeShared does, in place, the steps of the bitonic merge of
// sequences of size with strides below sharedSizeLimit, each block on its
// run of sharedSizeLimit keys in shared memory.
//
//qd:kernel
func bitonicMergeShared(key, val []uint32, arrayLength, size, dir uint32) {
	for b := range qd.Blocks(len(key)/sharedSizeLimit, sharedSizeLimit/2) {
		sk := qd.Shared[[sharedSizeLimit]uint32]()
		sv := qd.Shared[[sharedSizeLimit]uint32]()
		base := b.Index() * sharedSizeLimit
		for t := range b.Threads() {
			sk[t] = key[base+t]
			sv[t] = val[base+t]
			sk[t+sharedSizeLimit/2] = key[base+t+sharedSizeLimit/2]
			sv[t+sharedSizeLimit/2] = val[base+t+sharedSizeLimit/2]
		}
		for stride := uint32(sharedSizeLimit / 2); stride > 0; stride >>= 1 {
			for t := range b.Threads() {
				comparatorI := uint32(b.Index()*(sharedSizeLimit/2)+t) & (arrayLength/2 - 1)
				ddd := dir
				if comparatorI&(size/2) != 0 {
					ddd ^= 1
				}
				pos := 2*uint32(t) - (uint32(t) & (stride - 1))
				comparator(sk, sv, pos, pos+stride, ddd)
			}
		}
		for t := range b.Threads() {
			key[base+t] = sk[t]
			val[base+t] = sv[t]
			key[base+t+sharedSizeLimit/2] = sk[t+sharedSizeLimit/2]
			val[base+t+sharedSizeLimit/2] = sv[t+sharedSizeLimit/2]
		}
	}
}

// ---- Rodinia: hotspot (cuda/hotspot) ----

// hotspotBlock is Rodinia's BLOCK_SIZE for hotspot: 16×16 threads, one
// cell each.
const hotspotBlock = 16

// calculateTemp advances the temperatures tempSrc by iteration steps into
// tempDst (both rows×cols, with the dissipated power beside them): each
// block loads a 16×16 tile, steps it iteration times in shared memory
// (the valid part shrinking by a cell per side per step: a pyramid), and
// writes its inner (16-2·iteration)² cells. Edge cells take themselves
// for their missing neighbours. The arithmetic is Rodinia's, float64
// where C promotes to double (its 2.0 is a double constant).
//
//qd:kernel
func calculateTemp(iteration int, power, tempSrc, tempDst [][]float32, borderCols, borderRows int,
	capacitance, rx, ry, rz, step float32, blockCols, blockRows int) {
	for b := range qd.Blocks(blockCols*blockRows, hotspotBlock*hotspotBlock) {
		gridRows, gridCols := len(power), len(power[0])
		tempOn := qd.Shared[[hotspotBlock][hotspotBlock]float32]()
		powerOn := qd.Shared[[hotspotBlock][hotspotBlock]float32]()
		tempT := qd.Shared[[hotspotBlock][hotspotBlock]float32]()
		ambTemp := float32(80.0)
		stepDivCap := step / capacitance
		rx1, ry1, rz1 := 1/rx, 1/ry, 1/rz
		bx, by := gridXY(b.Index(), blockCols)
		small := hotspotBlock - iteration*2
		blkY, blkX := small*by-borderRows, small*bx-borderCols
		blkYmax, blkXmax := blkY+hotspotBlock-1, blkX+hotspotBlock-1
		validYmin, validYmax := 0, hotspotBlock-1
		if blkY < 0 {
			validYmin = -blkY
		}
		if blkYmax > gridRows-1 {
			validYmax = hotspotBlock - 1 - (blkYmax - gridRows + 1)
		}
		validXmin, validXmax := 0, hotspotBlock-1
		if blkX < 0 {
			validXmin = -blkX
		}
		if blkXmax > gridCols-1 {
			validXmax = hotspotBlock - 1 - (blkXmax - gridCols + 1)
		}
		computed := qd.NewPerThread[bool](b)
		for t := range b.Threads() {
			tx, ty := t%hotspotBlock, t/hotspotBlock
			if y, x := blkY+ty, blkX+tx; y >= 0 && y <= gridRows-1 && x >= 0 && x <= gridCols-1 {
				tempOn[ty][tx] = tempSrc[y][x]
				powerOn[ty][tx] = power[y][x]
			}
		}
		for i := 0; i < iteration; i++ {
			for t := range b.Threads() {
				tx, ty := t%hotspotBlock, t/hotspotBlock
				computed[t] = false
				if tx >= i+1 && tx <= hotspotBlock-i-2 && ty >= i+1 && ty <= hotspotBlock-i-2 &&
					tx >= validXmin && tx <= validXmax && ty >= validYmin && ty <= validYmax {
					computed[t] = true
					n, s := max(ty-1, validYmin), min(ty+1, validYmax)
					w, e := max(tx-1, validXmin), min(tx+1, validXmax)
					c := tempOn[ty][tx]
					ns := float64(tempOn[s][tx]+tempOn[n][tx]) - 2.0*float64(c)
					ew := float64(tempOn[ty][e]+tempOn[ty][w]) - 2.0*float64(c)
					tempT[ty][tx] = float32(float64(c) + float64(stepDivCap)*(float64(powerOn[ty][tx])+
						ns*float64(ry1)+ew*float64(rx1)+float64((ambTemp-c)*rz1)))
				}
			}
			if i == iteration-1 {
				break
			}
			for t := range b.Threads() {
				if computed[t] {
					tempOn[t/hotspotBlock][t%hotspotBlock] = tempT[t/hotspotBlock][t%hotspotBlock]
				}
			}
		}
		for t := range b.Threads() {
			tx, ty := t%hotspotBlock, t/hotspotBlock
			if computed[t] {
				tempDst[blkY+ty][blkX+tx] = tempT[ty][tx]
			}
		}
	}
}

// ---- Rodinia: nw, Needleman-Wunsch (cuda/nw) ----

// nwBlock is Rodinia's BLOCK_SIZE for nw: a block of 16 threads fills a
// 16×16 tile of the score matrix, a thread per column.
const nwBlock = 16

// maximum is Rodinia's maximum of three scores.
func maximum(a, b, c int32) int32 {
	k := b
	if a > b {
		k = a
	}
	if k <= c {
		return c
	}
	return k
}

// nwTile fills a tile: the anti-diagonals of its upper-left triangle,
// then those of its lower-right one, a barrier after each, from the
// tile's north and west borders in temp (row and column 0) and the
// substitution scores in ref.
func nwTile(b qd.Block, temp *[nwBlock + 1][nwBlock + 1]int32, ref *[nwBlock][nwBlock]int32, penalty int32) {
	for m := range nwBlock {
		for t := range b.Threads() {
			if t <= m {
				x, y := t+1, m-t+1
				temp[y][x] = maximum(temp[y-1][x-1]+ref[y-1][x-1], temp[y][x-1]-penalty, temp[y-1][x]-penalty)
			}
		}
	}
	for m := nwBlock - 2; m >= 0; m-- {
		for t := range b.Threads() {
			if t <= m {
				x, y := t+nwBlock-m, nwBlock-t
				temp[y][x] = maximum(temp[y-1][x-1]+ref[y-1][x-1], temp[y][x-1]-penalty, temp[y-1][x]-penalty)
			}
		}
	}
}

// needleCudaShared1 fills the i-th anti-diagonal of tiles of the upper-left
// triangle of the score matrix (cols×cols, row and column 0 the gap
// penalties): i blocks, one tile each.
//
//qd:kernel
func needleCudaShared1(reference, matrix []int32, cols int, penalty int32, i, blockWidth int) {
	for b := range qd.Blocks(i, nwBlock) {
		bix, biy := b.Index(), i-1-b.Index()
		nw := cols*nwBlock*biy + nwBlock*bix // the tile's north-west corner
		temp := qd.Shared[[nwBlock + 1][nwBlock + 1]int32]()
		ref := qd.Shared[[nwBlock][nwBlock]int32]()
		for t := range b.Threads() {
			if t == 0 {
				temp[0][0] = matrix[nw]
			}
			for ty := range nwBlock {
				ref[ty][t] = reference[nw+cols+1+t+cols*ty]
			}
		}
		for t := range b.Threads() {
			temp[t+1][0] = matrix[nw+cols+cols*t]
		}
		for t := range b.Threads() {
			temp[0][t+1] = matrix[nw+1+t]
		}
		nwTile(b, temp, ref, penalty)
		for t := range b.Threads() {
			for ty := range nwBlock {
				matrix[nw+cols+1+t+ty*cols] = temp[ty+1][t+1]
			}
		}
	}
}

// needleCudaShared2 fills the i-th anti-diagonal of tiles of the
// lower-right triangle, counted back from the corner.
//
//qd:kernel
func needleCudaShared2(reference, matrix []int32, cols int, penalty int32, i, blockWidth int) {
	for b := range qd.Blocks(i, nwBlock) {
		bix, biy := b.Index()+blockWidth-i, blockWidth-b.Index()-1
		nw := cols*nwBlock*biy + nwBlock*bix
		temp := qd.Shared[[nwBlock + 1][nwBlock + 1]int32]()
		ref := qd.Shared[[nwBlock][nwBlock]int32]()
		for t := range b.Threads() {
			for ty := range nwBlock {
				ref[ty][t] = reference[nw+cols+1+t+cols*ty]
			}
		}
		for t := range b.Threads() {
			if t == 0 {
				temp[0][0] = matrix[nw]
			}
			temp[t+1][0] = matrix[nw+cols+cols*t]
		}
		for t := range b.Threads() {
			temp[0][t+1] = matrix[nw+1+t]
		}
		nwTile(b, temp, ref, penalty)
		for t := range b.Threads() {
			for ty := range nwBlock {
				matrix[nw+cols+1+t+ty*cols] = temp[ty+1][t+1]
			}
		}
	}
}
