package benchsuite

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// The ports' inputs and their plain-Go references. The drivers of
// testdata/ports (common.h) make the same inputs with the same generator,
// so that data-dependent work (the histogram's atomics on its bins, the
// sort's swaps) is the same on both sides.

// lcg is the inputs' generator: x ← 1664525·x + 1013904223 mod 2^32.
func lcg(x *uint32) uint32 {
	*x = *x*1664525 + 1013904223
	return *x
}

// matrixMulInputs are small integers, so that every sum is exact in
// float32 in any order and with or without fused multiply-adds.
func matrixMulInputs(hA, wA, wB int) (a, b []float32) {
	a, b = make([]float32, hA*wA), make([]float32, wA*wB)
	for i := range a {
		a[i] = float32(i%7 - 3)
	}
	for i := range b {
		b[i] = float32(i%5 - 2)
	}
	return a, b
}

// checkMatrixMul compares c with a·b computed on the host: every row of
// c, or every 64th for products of more than 2^27 multiply-adds (a 2048³
// product on the host would take seconds).
func checkMatrixMul(c, a, b []float32, hA, wA, wB int) error {
	step := 1
	if hA*wA*wB > 1<<27 {
		step = 64
	}
	row := make([]float32, wB)
	for i := 0; i < hA; i += step {
		clear(row)
		for k := range wA {
			aik := a[i*wA+k]
			for j := range wB {
				row[j] += aik * b[k*wB+j]
			}
		}
		for j := range wB {
			if g := c[i*wB+j]; g != row[j] {
				return fmt.Errorf("matrixMul: c[%d][%d] = %v, want %v", i, j, g, row[j])
			}
		}
	}
	return nil
}

// histogramInput is words of four random bytes (the generator's top 8
// bits), as the sample's rand() % 256 bytes.
func histogramInput(words int) []uint32 {
	x := uint32(2009)
	out := make([]uint32, words)
	for i := range out {
		var w uint32
		for sh := 0; sh < 32; sh += 8 {
			w |= (lcg(&x) >> 24) << sh
		}
		out[i] = w
	}
	return out
}

// scanInput is random words, as the sample's rand(); the sums wrap.
func scanInput(n int) []uint32 {
	x := uint32(2009)
	out := make([]uint32, n)
	for i := range out {
		out[i] = lcg(&x)
	}
	return out
}

// sortInput is the sample's: keys below 65536, values their indices.
func sortInput(n int) (keys, vals []uint32) {
	x := uint32(2001)
	keys, vals = make([]uint32, n), make([]uint32, n)
	for i := range keys {
		keys[i] = (lcg(&x) >> 8) % 65536
		vals[i] = uint32(i)
	}
	return keys, vals
}

// checkSorted checks that keys are in descending order and that vals
// permutes the indices of src so that each key sits with its own index.
func checkSorted(keys, vals, src []uint32) error {
	seen := make([]bool, len(src))
	for i := range keys {
		if i > 0 && keys[i] > keys[i-1] {
			return fmt.Errorf("bitonicSort: key[%d] = %d after key[%d] = %d: not descending", i, keys[i], i-1, keys[i-1])
		}
		v := vals[i]
		if int(v) >= len(src) || seen[v] || src[v] != keys[i] {
			return fmt.Errorf("bitonicSort: place %d holds key %d with value %d, which is not a distinct index of that key", i, keys[i], v)
		}
		seen[v] = true
	}
	return nil
}

// hotspotInputs are temperatures from 300 to 349 and small powers.
func hotspotInputs(n int) (temp, power []float32) {
	temp, power = make([]float32, n*n), make([]float32, n*n)
	for i := range n {
		for j := range n {
			temp[i*n+j] = float32(300 + (i*7+j*13)%50)
			power[i*n+j] = float32((i*3+j*5)%97) * float32(1e-4)
		}
	}
	return temp, power
}

// hotspotParams are the constants Rodinia's compute_tran_temp derives
// from the chip's size and the grid's, in its float and double steps.
type hotspotParams struct {
	capacitance, rx, ry, rz, step float32
}

func newHotspotParams(n int) hotspotParams {
	const (
		factorChip = 0.5
		specHeatSi = 1.75e6
		kSi        = 100
		maxPd      = 3.0e6
		precision  = 0.001
	)
	tChip, chipHeight, chipWidth := float32(0.0005), float32(0.016), float32(0.016)
	gh, gw := chipHeight/float32(n), chipWidth/float32(n)
	t, h, w := float64(tChip), float64(gh), float64(gw)
	maxSlope := float32(maxPd / (factorChip * t * specHeatSi))
	return hotspotParams{
		capacitance: float32(factorChip * specHeatSi * t * w * h),
		rx:          float32(w / (2.0 * kSi * t * h)),
		ry:          float32(h / (2.0 * kSi * t * w)),
		rz:          tChip / (kSi * gh * gw),
		step:        float32(precision / float64(maxSlope)),
	}
}

// hotspotRef runs steps of the plain 5-point update that the pyramid
// kernel computes, an edge cell taking itself for a missing neighbour,
// with the kernel's arithmetic; the rows are shared out among the cores.
func hotspotRef(temp, power []float32, n, steps int, p hotspotParams) []float32 {
	cur, next := append([]float32(nil), temp...), make([]float32, n*n)
	const ambTemp = float32(80.0)
	stepDivCap := p.step / p.capacitance
	rx1, ry1, rz1 := 1/p.rx, 1/p.ry, 1/p.rz
	workers := runtime.NumCPU()
	for range steps {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := w * n / workers; r < (w+1)*n/workers; r++ {
					no, so := max(r-1, 0), min(r+1, n-1)
					for c := range n {
						we, ea := max(c-1, 0), min(c+1, n-1)
						v := cur[r*n+c]
						ns := float64(cur[so*n+c]+cur[no*n+c]) - 2.0*float64(v)
						ew := float64(cur[r*n+ea]+cur[r*n+we]) - 2.0*float64(v)
						next[r*n+c] = float32(float64(v) + float64(stepDivCap)*(float64(power[r*n+c])+
							ns*float64(ry1)+ew*float64(rx1)+float64((ambTemp-v)*rz1)))
					}
				}
			}()
		}
		wg.Wait()
		cur, next = next, cur
	}
	return cur
}

// checkHotspot compares within a relative 1e-4: fast math contracts the
// update into fused multiply-adds (exact float semantics give the
// reference's bits). A NaN matches a NaN: with 60 steps on a 4096² grid
// the update is unstable (its step grows with the grid) and the
// reference's cells become NaN too.
func checkHotspot(got, want []float32, n int) error {
	for i := range want {
		if g, w := float64(got[i]), float64(want[i]); math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= 1e-4*math.Abs(float64(want[i]))) {
			return fmt.Errorf("hotspot: temp[%d][%d] = %v, want %v", i/n, i%n, got[i], want[i])
		}
	}
	return nil
}

// nwInputs are Rodinia's score matrix, (n+1)², its row and column 0 the
// gap penalties and the rest 0, and substitution scores from -4 to 11 (the
// range of BLOSUM62, which Rodinia indexes with random residues).
func nwInputs(n int, penalty int32) (ref, matrix []int32) {
	cols := n + 1
	ref, matrix = make([]int32, cols*cols), make([]int32, cols*cols)
	x := uint32(7)
	for i := 1; i < cols; i++ {
		for j := 1; j < cols; j++ {
			ref[i*cols+j] = int32(lcg(&x)>>28) - 4
		}
	}
	for i := 1; i < cols; i++ {
		matrix[i*cols] = -int32(i) * penalty
		matrix[i] = -int32(i) * penalty
	}
	return ref, matrix
}

// nwRef fills the score matrix cell by cell: the best of the diagonal
// step with its substitution score and the two gaps.
func nwRef(ref, matrix []int32, n int, penalty int32) []int32 {
	cols := n + 1
	m := append([]int32(nil), matrix...)
	for i := 1; i < cols; i++ {
		for j := 1; j < cols; j++ {
			m[i*cols+j] = max(m[(i-1)*cols+j-1]+ref[i*cols+j], m[i*cols+j-1]-penalty, m[(i-1)*cols+j]-penalty)
		}
	}
	return m
}
