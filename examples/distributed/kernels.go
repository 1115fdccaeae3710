package main

// The example's kernel: ordinary Go that the example also runs natively
// as its reference (main.go embeds this file's text for qd.Compile).

import "github.com/quadrants-go/qd"

// jacobi advances the interior of a slab one Jacobi sweep of the heat
// equation's steady state: every cell but those of the first and last
// rows (the halo) and columns (a fixed boundary) becomes the mean of its
// four neighbours. res[0] gains the sum of the squared changes, whose
// square root over the whole grid is the residual.
//
//qd:kernel
func jacobi(cur, next [][]float32, res []float32) {
	for r, c := range qd.NDRange(len(next)-2, len(next[0])-2) {
		i, j := r+1, c+1
		v := 0.25 * (cur[i-1][j] + cur[i+1][j] + cur[i][j-1] + cur[i][j+1])
		d := v - cur[i][j]
		next[i][j] = v
		qd.AtomicAdd(&res[0], d*d)
	}
}
