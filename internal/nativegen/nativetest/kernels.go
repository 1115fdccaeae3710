package nativetest

import (
	"math"

	"github.com/quadrants-go/qd"
)

// scaleAdd: a range over an int, serial code before and after.
//
//qd:kernel
func scaleAdd(a float32, x, y []float32, total []float32) {
	n := len(x)
	for i := range n {
		y[i] = a*x[i] + y[i]
	}
	total[0] = float32(n)
}

// countdown: a range over a typed count; int32 loop variable.
//
//qd:kernel
func countdown(n int32, out []int32) {
	for i := range n {
		out[i] = n - i
	}
}

// negate: a range over a slice with index and value.
//
//qd:kernel
func negate(x []float64) {
	for i, v := range x {
		x[i] = -v
	}
}

// grid: a 2-D range with a helper, a continue and a data-dependent inner
// loop.
//
//qd:kernel
func grid(in, out [][]float32, steps []int32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		if i == 0 {
			out[i][j] = -1
			continue
		}
		s := float32(0)
		for k := int32(0); k < steps[j%len(steps)]; k++ {
			s += cell(in, i, j)
		}
		out[i][j] = s
	}
}

func cell(in [][]float32, i, j int) float32 {
	return in[i-1][j] + float32(math.Sqrt(float64(j)))
}

// volume: a 3-D range.
//
//qd:kernel
func volume(v [][][]int32) {
	for p := range qd.NDRange3(len(v), len(v[0]), len(v[0][0])) {
		v[p.I][p.J][p.K] = int32(p.I*10000 + p.J*100 + p.K)
	}
}

// reverseBlocks: blocks with shared memory, per-thread values and a
// block collective.
//
//qd:kernel
func reverseBlocks(x, y []float32, sums []float32) {
	for b := range qd.Blocks(len(x)/64, 64) {
		tile := qd.Shared[[64]float32]()
		v := qd.NewPerThread[float32](b)
		for t := range b.Threads() {
			tile[t] = x[b.Index()*64+t]
			v[t] = tile[t]
		}
		for t := range b.Threads() {
			y[b.Index()*64+t] = tile[63-t]
		}
		s := qd.BlockSum(b, v)
		for t := range b.Threads() {
			if t == 0 {
				sums[b.Index()] = s
			}
		}
	}
}

// histogram: atomics at data-dependent addresses.
//
//qd:kernel
func histogram(data []uint8, bins []uint32) {
	for i := range len(data) {
		qd.AtomicAdd(&bins[data[i]&15], 1)
	}
}

// total: reductions into fixed elements (one local per chunk, then an
// atomic), beside a scatter that stays atomic.
//
//qd:kernel
func total(x []float32, out []float32, counts []int32) {
	for i := range len(x) {
		if x[i] > 1 {
			qd.AtomicAdd(&out[0], x[i])
			qd.AtomicAdd(&counts[1], 1)
		}
		qd.AtomicAdd(&counts[2+i%2], 1)
	}
}

// twoStreams: stream-parallel blocks, each with a parallel loop.
//
//qd:kernel
func twoStreams(a, b []int32) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] += 1
		}
	})
	qd.StreamParallel(func() {
		for i := range len(b) {
			b[i] *= 2
		}
	})
}

// outOfRange reads past the end of x when n is too large.
//
//qd:kernel
func outOfRange(x []float32, n int) {
	for i := range n {
		x[i] = 1
	}
}

// spin loops until stop[0] is set, which nothing does: only a stopped
// launch ends it.
//
//qd:kernel
func spin(stop []int32, out []int32) {
	for i := range 1 {
		for stop[0] == 0 {
			out[i]++
		}
	}
}

// spinCounted and spinRange loop until a stop, as spin does, in loops
// whose counter qd gen's stop check reads (every 1024th iteration).
//
//qd:kernel
func spinCounted(stop []int32, out []int32) {
	for i := range 1 {
		for k := 0; stop[0] == 0; k++ {
			out[i] += int32(k & 1)
		}
	}
}

//qd:kernel
func spinRange(stop []int32, out []int32) {
	for i := range 1 {
		for range 1 << 62 {
			out[i] += stop[0] + 1
		}
	}
}

// scatter adds w[i] at the data-dependent bin idx[i]: a scatter that qd
// gen privatises in chunks long enough, and leaves atomic in short ones.
//
//qd:kernel
func scatter(idx []int32, w []float32, h []float32, counts []int64) {
	for i := range len(idx) {
		qd.AtomicAdd(&h[idx[i]], w[i])
		qd.AtomicAdd(&counts[idx[i]%4], 1)
	}
}

// scatter2 adds into the rows of a 2-D grid at data-dependent cells: a
// scatter qd gen privatises in loops long enough, as scatter's.
//
//qd:kernel
func scatter2(idx []int32, grid [][]float32) {
	for i := range len(idx) {
		qd.AtomicAdd(&grid[idx[i]%8][idx[i]/8], 1)
	}
}

// meet is a loop of 4 iterations, the first heavy: the rest are split over
// the workers only if the loop is split by its cost, not its count.
// Iteration 1 waits for iteration 3, so they must run at once; the wait
// is bounded, and met[1] says whether it ended by meeting.
//
//qd:kernel
func meet(flag []int32, met []float32, work int) {
	for i := range 4 {
		if i == 0 {
			s := float32(0)
			for k := range work {
				s += float32(k & 1)
			}
			met[0] = s
		}
		if i == 1 {
			met[1] = -1
			for k := 0; k < 1<<26; k++ {
				if qd.AtomicAdd(&flag[0], 0) != 0 {
					met[1] = 1
					break
				}
			}
		}
		if i == 3 {
			qd.AtomicAdd(&flag[0], 1)
		}
	}
}
