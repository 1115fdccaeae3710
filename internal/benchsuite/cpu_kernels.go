package benchsuite

// The CPU construct kernels: one kernel per construct that the
// CPU backend must run near plain Go's speed. This file is ordinary Go of
// package benchsuite, so the Go compiler type-checks it, and its text,
// embedded (cpuKernelSource in cpu_rows.go), is what qd.Compile compiles.
// The plain-Go references the kernels are measured against are in
// cpu_plain.go, written the way a Go programmer writes the same loop.

import (
	"math"

	"github.com/quadrants-go/qd"
)

// saxpy: one multiply-add per element, memory-light at the suite's size.
//
//qd:kernel
func saxpy(a float32, x, y []float32) {
	for i := range len(y) {
		y[i] = a*x[i] + y[i]
	}
}

// heatAt is the demo's heat cell (cmd/qd/demo_kernels.go): the cell plus
// alpha times the discrete Laplacian; boundary cells stay fixed.
func heatAt(in [][]float32, i, j int, alpha float32) float32 {
	c := in[i][j]
	if i == 0 || j == 0 || i == len(in)-1 || j == len(in[0])-1 {
		return c
	}
	return c + alpha*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1])-4*c)
}

// heat is the demo's kernel: one explicit heat-equation step over a grid,
// with a divergent branch on the border.
//
//qd:kernel
func heat(in, out [][]float32, alpha float32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		out[i][j] = heatAt(in, i, j, alpha)
	}
}

// stencil5 is a 2-D 5-point stencil over the interior of a grid: no branch,
// the range itself skips the border.
//
//qd:kernel
func stencil5(in, out [][]float32) {
	for i, j := range qd.NDRange(len(in)-2, len(in[0])-2) {
		out[i+1][j+1] = 0.5*in[i+1][j+1] + 0.125*((in[i][j+1]+in[i+2][j+1])+(in[i+1][j]+in[i+1][j+2]))
	}
}

// sum adds every element of x into out[0]: a reduction (the atomic's
// result is unused and its address does not depend on i).
//
//qd:kernel
func sum(x, out []float32) {
	for i := range len(x) {
		qd.AtomicAdd(&out[0], x[i])
	}
}

// branches is a piecewise function: data-dependent if/else on every element.
//
//qd:kernel
func branches(x, y []float32) {
	for i := range len(x) {
		v := x[i]
		if v < 0.25 {
			v = v * v
		} else if v < 0.5 {
			v = 0.5 - v
		} else {
			v = v*0.5 + 1
		}
		y[i] = v
	}
}

// collatz counts Collatz steps (at most 64) from each element: an inner
// loop whose trip count differs from element to element, with a branch.
//
//qd:kernel
func collatz(x, steps []int32) {
	for i := range len(x) {
		v, n := x[i], int32(0)
		for v != 1 && n < 64 {
			if v%2 == 0 {
				v = v / 2
			} else {
				v = 3*v + 1
			}
			n++
		}
		steps[i] = n
	}
}

// poly evaluates a degree-32 polynomial by Horner's rule in an inner loop of
// uniform trip count: compute-bound.
//
//qd:kernel
func poly(x, y []float32) {
	for i := range len(y) {
		xi, acc := x[i], float32(0)
		for k := 0; k < 32; k++ {
			acc = acc*xi + 0.5
		}
		y[i] = acc
	}
}

// mathy calls the math library on every element.
//
//qd:kernel
func mathy(x, y []float32) {
	for i := range len(x) {
		v := float64(x[i])
		y[i] = float32(math.Sqrt(v*v+1)*math.Exp(-v*v) + math.Sin(v))
	}
}

// scan writes the prefix sums of x to y: a long serial loop in a serial
// task (no parallel loop around it).
//
//qd:kernel
func scan(x, y []float32) {
	acc := float32(0)
	for i := 0; i < len(x); i++ {
		acc += x[i]
		y[i] = acc
	}
}

// rows3 scales rows of 3 components (x, y, z of a point): a 2-D range whose
// rows are too short for row batches.
//
//qd:kernel
func rows3(in, out [][]float32, s float32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		out[i][j] = in[i][j]*s + 1
	}
}
