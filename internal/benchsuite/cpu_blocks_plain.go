package benchsuite

// The plain-Go references of the block kernels on the CPU (cpu_blocks.go):
// each is the serial loop a Go programmer writes for the same algorithm,
// run on one goroutine — not a thread-by-thread emulation of the kernel.
// Issue 24's CPU bar holds the kernels, per core, to at least these
// speeds. The results equal the kernels' exactly (the set-ups pick inputs
// whose float sums are exact in any order).

// blockSumPlain is the block reduce's sum: one accumulator, added to
// out[0] as the kernel's atomic does.
func blockSumPlain(x, out []float32) {
	var s float32
	for _, v := range x {
		s += v
	}
	out[0] += s
}

// transposePlain is a tiled transpose: 32×32 tiles, so that the column
// writes of a tile stay in cache lines the tile's next rows reuse.
func transposePlain(in, out [][]float32) {
	const tile = 32
	rows, cols := len(in), len(in[0])
	for i0 := 0; i0 < rows; i0 += tile {
		for j0 := 0; j0 < cols; j0 += tile {
			for i := i0; i < min(i0+tile, rows); i++ {
				row := in[i]
				for j := j0; j < min(j0+tile, cols); j++ {
					out[j][i] = row[j]
				}
			}
		}
	}
}

// sgemmPlain is a blocked matrix product c = a·b (n×n, n a multiple of
// 64): for each 64×64 tile of c, the i-k-j loop over 64-wide slices of
// a's rows and b's rows, so that the tiles stay in cache. Every element
// is summed in k order, as the kernel sums it.
func sgemmPlain(a, b, c [][]float32) {
	const tile = 64
	n := len(c)
	for i0 := 0; i0 < n; i0 += tile {
		for j0 := 0; j0 < n; j0 += tile {
			for i := i0; i < i0+tile; i++ {
				clear(c[i][j0 : j0+tile])
			}
			for k0 := 0; k0 < n; k0 += tile {
				for i := i0; i < i0+tile; i++ {
					ci, ai := c[i][j0:j0+tile], a[i][k0:k0+tile]
					for k, aik := range ai {
						bk := b[k0+k][j0 : j0+tile]
						for j := range ci {
							ci[j] += aik * bk[j]
						}
					}
				}
			}
		}
	}
}

// histogram256Plain counts the bytes of data, four to a word, into local
// bins, then adds them to hist, as the kernel's blocks do.
func histogram256Plain(data, hist []uint32) {
	var bins [256]uint32
	for _, w := range data {
		bins[w&255]++
		bins[w>>8&255]++
		bins[w>>16&255]++
		bins[w>>24]++
	}
	for i, c := range bins {
		hist[i] += c
	}
}

// scanPlain writes the exclusive prefix sums of x to y.
func scanPlain(x, y []int32) {
	var s int32
	for i, v := range x {
		y[i] = s
		s += v
	}
}

// radixSortPlain sorts keys with their values by key, stably: the
// kernels' algorithm, a least-significant-digit radix sort of eight
// passes of 4 bits, each counting the digits, scanning the counts and
// scattering the pairs; tk and tv are its second buffers. An even number
// of passes leaves the result in keys and vals.
func radixSortPlain(keys, vals, tk, tv []uint32) {
	for shift := uint(0); shift < 32; shift += 4 {
		var next [16]int
		for _, k := range keys {
			next[k>>shift&15]++
		}
		sum := 0
		for d, c := range next {
			next[d], sum = sum, sum+c
		}
		for i, k := range keys {
			d := k >> shift & 15
			tk[next[d]], tv[next[d]] = k, vals[i]
			next[d]++
		}
		keys, vals, tk, tv = tk, tv, keys, vals
	}
}
