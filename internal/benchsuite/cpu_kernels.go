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

// The classes of issue 25 (kernels where the CPU backend loses to plain
// serial Go); docs/cpu.md lists them with their row ids.

// rareBranch (class 4): heavy work under a branch true for about 8 of
// 1024 elements (x < 1/128 over unitInputs); the rest copy.
//
//qd:kernel
func rareBranch(x, y []float32) {
	for i := range len(y) {
		v := x[i]
		if v < 1.0/128 {
			for range 64 {
				v = v*v*0.5 + 0.25
			}
		}
		y[i] = v
	}
}

// mandel (class 5): an escape-time fractal, a loop whose trip count (up
// to 256) varies per element; y is the iteration count.
//
//qd:kernel
func mandel(x, y []float32) {
	for i := range len(y) {
		cr := x[i]*2.5 - 2
		ci := float32(i%256)/128 - 1
		zr, zi := float32(0), float32(0)
		k := 0
		for k < 256 && zr*zr+zi*zi < 4 {
			zr, zi = zr*zr-zi*zi+cr, 2*zr*zi+ci
			k++
		}
		y[i] = float32(k)
	}
}

// intDivRem (class 6): integer / and % per element by a data-dependent
// divisor.
//
//qd:kernel
func intDivRem(x, y []int32) {
	for i := range len(y) {
		d := x[i]%97 + 1
		y[i] = (x[i]*31)/d + x[i]%d
	}
}

// histogram (class 3): qd.AtomicAdd at data-dependent addresses, the
// read-modify-write h[idx[i]] += 1 that a plain Go loop does serially.
//
//qd:kernel
func histogram(idx []int32, h []float32) {
	for i := range len(idx) {
		qd.AtomicAdd(&h[idx[i]], 1)
	}
}

// nbody1 (class 1): a parallel loop of a few thousand iterations, each a
// loop over every body: too few iterations for the count to say it is
// worth splitting.
//
//qd:kernel
func nbody1(x, y []float32) {
	for i := range len(y) {
		s := float32(0)
		for j := range len(x) {
			d := x[i] - x[j]
			s += 1 / (d*d + 0.01)
		}
		y[i] = s
	}
}

// pairForce (class 2): arrays with a short last dimension, (n, 2), and
// force[i][0] += f in an inner loop, as particle codes write them.
//
//qd:kernel
func pairForce(pos, force [][]float32) {
	for i := range len(pos) {
		force[i][0], force[i][1] = 0, 0
		for k := 1; k <= 8; k++ {
			j := (i + k) % len(pos)
			force[i][0] += pos[j][0] - pos[i][0]
			force[i][1] += pos[j][1] - pos[i][1]
		}
	}
}

// matmul4 (class 7): a matrix product register-blocked 1×4, each
// iteration of the inner loop reading four neighbouring columns of b:
// strided and offset accesses across iterations.
//
//qd:kernel
func matmul4(a, b, c [][]float32, m4 int) {
	for i := range len(c) {
		for j4 := range m4 {
			j := 4 * j4
			var s0, s1, s2, s3 float32
			for k := range len(b) {
				av := a[i][k]
				s0 += av * b[k][j]
				s1 += av * b[k][j+1]
				s2 += av * b[k][j+2]
				s3 += av * b[k][j+3]
			}
			c[i][j], c[i][j+1], c[i][j+2], c[i][j+3] = s0, s1, s2, s3
		}
	}
}
