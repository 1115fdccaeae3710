package bench

import "github.com/quadrants-go/qd"

// The block-level kernels of qd bench (internal/benchsuite/blocks.go).

// blockSum adds x into out[0]: each thread of nblocks blocks of 1024 sums
// a strided share of x, four loads at a time so that they are in flight
// together, the block adds its threads' sums with qd.BlockSum, and one
// thread per block adds that to out[0].
//
//qd:kernel
func blockSum(x, out []float32, nblocks int) {
	for b := range qd.Blocks(nblocks, 1024) {
		v := qd.NewPerThread[float32](b)
		stride := nblocks * 1024
		for t := range b.Threads() {
			var s float32
			i := b.Index()*1024 + t
			for ; i+3*stride < len(x); i += 4 * stride {
				x0, x1, x2, x3 := x[i], x[i+stride], x[i+2*stride], x[i+3*stride]
				s += x0
				s += x1
				s += x2
				s += x3
			}
			for ; i < len(x); i += stride {
				s += x[i]
			}
			v[t] = s
		}
		total := qd.BlockSum(b, v)
		for t := range b.Threads() {
			if t == 0 {
				qd.AtomicAdd(&out[0], total)
			}
		}
	}
}

// transpose sets out[j][i] = in[i][j] through a 64×65 shared tile (the
// extra column spreads a column's reads over the banks); a block of 64×4
// threads moves one 64×64 tile, each thread 16 of its elements, with the
// loads of a thread first so that they are in flight together. Whole
// tiles skip the bounds tests; the edge tiles make them.
//
//qd:kernel
func transpose(in, out [][]float32) {
	for b := range qd.Blocks(((len(in)+63)/64)*((len(in[0])+63)/64), 256) {
		rows, cols := len(in), len(in[0])
		tilesX := (cols + 63) / 64
		r0, c0 := b.Index()/tilesX*64, b.Index()%tilesX*64
		tile := qd.Shared[[64][65]float32]()
		if r0+64 <= rows && c0+64 <= cols {
			for t := range b.Threads() {
				tx, ty := t%64, t/64
				var v [16]float32
				for k := range 16 {
					v[k] = in[r0+ty+4*k][c0+tx]
				}
				for k := range 16 {
					tile[ty+4*k][tx] = v[k]
				}
			}
			for t := range b.Threads() {
				tx, ty := t%64, t/64
				for k := range 16 {
					out[c0+ty+4*k][r0+tx] = tile[tx][ty+4*k]
				}
			}
		} else {
			for t := range b.Threads() {
				tx, ty := t%64, t/64
				for k := range 16 {
					if i, j := r0+ty+4*k, c0+tx; i < rows && j < cols {
						tile[ty+4*k][tx] = in[i][j]
					}
				}
			}
			for t := range b.Threads() {
				tx, ty := t%64, t/64
				for k := range 16 {
					if i, j := c0+ty+4*k, r0+tx; i < cols && j < rows {
						out[i][j] = tile[tx][ty+4*k]
					}
				}
			}
		}
	}
}

// sgemm sets c = a·b for n×n float32 matrices (n a multiple of 64): a
// block of 256 threads computes a 64×64 tile of c, each thread a 4×4
// piece of it in registers, stepping along k 16 at a time through shared
// copies of a's and b's slices.
//
//qd:kernel
func sgemm(a, b, c [][]float32) {
	for blk := range qd.Blocks((len(c)/64)*(len(c)/64), 256) {
		n := len(c)
		tiles := n / 64
		r0, c0 := blk.Index()/tiles*64, blk.Index()%tiles*64
		as := qd.Shared[[16][64]float32]() // as[k][r] = a[r0+r][k0+k]
		bs := qd.Shared[[16][64]float32]() // bs[k][c] = b[k0+k][c0+c]
		acc := qd.NewPerThread[[4][4]float32](blk)
		for k0 := 0; k0 < n; k0 += 16 {
			for t := range blk.Threads() {
				// Each thread moves 4 elements of each slice (1024 each):
				// the 8 loads first, in flight together, then the stores.
				var va, vb [4]float32
				for q := range 4 {
					e := t + 256*q
					va[q] = a[r0+e/16][k0+e%16]
					vb[q] = b[k0+e/64][c0+e%64]
				}
				for q := range 4 {
					e := t + 256*q
					as[e%16][e/16] = va[q]
					bs[e/64][e%64] = vb[q]
				}
			}
			for t := range blk.Threads() {
				ty, tx := t/16, t%16
				for k := range 16 {
					var av, bv [4]float32
					for i := range 4 {
						av[i] = as[k][ty*4+i]
						bv[i] = bs[k][tx*4+i]
					}
					for i := range 4 {
						for j := range 4 {
							acc[t][i][j] += av[i] * bv[j]
						}
					}
				}
			}
		}
		for t := range blk.Threads() {
			ty, tx := t/16, t%16
			for i := range 4 {
				for j := range 4 {
					c[r0+ty*4+i][c0+tx*4+j] = acc[t][i][j]
				}
			}
		}
	}
}

// histogram256 counts the bytes of data, four to a word, into 256 bins:
// each of nblocks blocks counts a strided share into bins of its own in
// shared memory, then adds them to hist.
//
//qd:kernel
func histogram256(data []uint32, hist []uint32, nblocks int) {
	for b := range qd.Blocks(nblocks, 256) {
		bins := qd.Shared[[256]uint32]()
		for t := range b.Threads() {
			for i := b.Index()*256 + t; i < len(data); i += nblocks * 256 {
				w := data[i]
				qd.AtomicAdd(&bins[w&255], 1)
				qd.AtomicAdd(&bins[(w>>8)&255], 1)
				qd.AtomicAdd(&bins[(w>>16)&255], 1)
				qd.AtomicAdd(&bins[w>>24], 1)
			}
		}
		for t := range b.Threads() {
			qd.AtomicAdd(&hist[t], bins[t])
		}
	}
}

// scanThreads and scanItems shape the scan kernels: a block of 128
// threads, each handling 16 elements, so a run of scanRun = 2048. Measured
// on the H200 over 2^26 int32 (the two big passes, ms): 1024×8 0.095 +
// 0.240, 512×8 0.086 + 0.202, 256×8 0.080 + 0.179, 256×16 0.071 + 0.210,
// 128×16 0.068 + 0.174: small blocks keep more of them resident, so one
// block's loads overlap another's barriers.
const (
	scanThreads = 128
	scanItems   = 16
	scanRun     = scanThreads * scanItems
)

// scanTotals writes the sum of each run of scanRun elements of x to sums:
// the first pass of an exclusive scan.
//
//qd:kernel
func scanTotals(x, sums []int32) {
	for b := range qd.Blocks(len(sums), scanThreads) {
		v := qd.NewPerThread[int32](b)
		for t := range b.Threads() {
			base := b.Index()*scanRun + t
			var s int32
			for k := range scanItems {
				if i := base + scanThreads*k; i < len(x) {
					s += x[i]
				}
			}
			v[t] = s
		}
		total := qd.BlockSum(b, v)
		for t := range b.Threads() {
			if t == 0 {
				sums[b.Index()] = total
			}
		}
	}
}

// scanRuns writes to y the exclusive scan of x, given in offsets the
// exclusive scan of the runs' sums: the second pass. A block's run is
// staged in shared memory so that each thread scans scanItems consecutive
// elements while the loads and stores of global memory stay coalesced;
// the staging skips a word after every 32 (padded), so that the threads
// of a warp reading consecutive words each hit different banks. A thread
// keeps its elements' partial sums in registers (items) between the
// block scan's thread loops.
//
//qd:kernel
func scanRuns(x, y, offsets []int32) {
	for b := range qd.Blocks(len(offsets), scanThreads) {
		run := qd.Shared[[scanRun + scanRun/32]int32]()
		base := b.Index() * scanRun
		for t := range b.Threads() {
			var v [scanItems]int32
			for k := range scanItems {
				if i := base + scanThreads*k + t; i < len(x) {
					v[k] = x[i]
				}
			}
			for k := range scanItems {
				run[padded(scanThreads*k+t)] = v[k]
			}
		}
		items := qd.NewPerThread[[scanItems]int32](b)
		v := qd.NewPerThread[int32](b)
		for t := range b.Threads() {
			var s int32
			for k := range scanItems {
				e := run[padded(t*scanItems+k)]
				items[t][k] = s
				s += e
			}
			v[t] = s
		}
		prefix := qd.BlockExclusiveSum(b, v)
		off := offsets[b.Index()]
		for t := range b.Threads() {
			s := off + prefix[t]
			for k := range scanItems {
				run[padded(t*scanItems+k)] = s + items[t][k]
			}
		}
		for t := range b.Threads() {
			var v [scanItems]int32
			for k := range scanItems {
				v[k] = run[padded(scanThreads*k+t)]
			}
			for k := range scanItems {
				if i := base + scanThreads*k + t; i < len(x) {
					y[i] = v[k]
				}
			}
		}
	}
}

// padded is the place of element p of a staged run: a word skipped after
// every 32.
func padded(p int) int { return p + p/32 }
