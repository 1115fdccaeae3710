package main

// The demo's kernels. This file is ordinary Go of package main: the Go
// compiler type-checks it with the command, the demo calls the kernels
// natively as its plain-Go reference, and the same text, embedded into the
// binary (demoKernels in demo.go), is what qd.Compile compiles for the
// device.

import "github.com/quadrants-go/qd"

// poly replaces each x[i] by a polynomial of degree work in x[i], by
// Horner's rule with every coefficient 0.5: work dependent multiply-adds
// per element. The pipeline section sets work so that a chunk's kernel
// takes about as long as its copy.
//
//qd:kernel
func poly(x []float32, work int64) {
	for i := range len(x) {
		v := x[i]
		acc := float32(0)
		for k := int64(0); k < work; k++ {
			acc = acc*v + 0.5
		}
		x[i] = acc
	}
}

// walkRun moves one random walker steps times, one unit left or right as
// its own linear congruential generator (state s) says: a chain of
// dependent integer arithmetic that no amount of parallel hardware
// shortens. Kernels inline it.
func walkRun(s uint32, x int32, steps int64) (uint32, int32) {
	for k := int64(0); k < steps; k++ {
		s = s*1664525 + 1013904223
		x += int32(s>>31)*2 - 1
	}
	return s, x
}

// walk advances one Monte Carlo simulation: walker i has generator state
// s[i] and position x[i]. With a few thousand walkers it keeps only part
// of a GPU busy, and for a long time: latency-bound work, which streams
// overlap.
//
//qd:kernel
func walk(s []uint32, x []int32, steps int64) {
	for i := range len(s) {
		s[i], x[i] = walkRun(s[i], x[i], steps)
	}
}

// walk4 advances four simulations, one loop after the other on the launch
// stream.
//
//qd:kernel
func walk4(s0 []uint32, x0 []int32, s1 []uint32, x1 []int32, s2 []uint32, x2 []int32, s3 []uint32, x3 []int32, steps int64) {
	for i := range len(s0) {
		s0[i], x0[i] = walkRun(s0[i], x0[i], steps)
	}
	for i := range len(s1) {
		s1[i], x1[i] = walkRun(s1[i], x1[i], steps)
	}
	for i := range len(s2) {
		s2[i], x2[i] = walkRun(s2[i], x2[i], steps)
	}
	for i := range len(s3) {
		s3[i], x3[i] = walkRun(s3[i], x3[i], steps)
	}
}

// walk4Groups is walk4 with each loop in its own qd.StreamParallel block:
// one launch, four streams, forked from and joined back into the launch
// stream.
//
//qd:kernel
func walk4Groups(s0 []uint32, x0 []int32, s1 []uint32, x1 []int32, s2 []uint32, x2 []int32, s3 []uint32, x3 []int32, steps int64) {
	qd.StreamParallel(func() {
		for i := range len(s0) {
			s0[i], x0[i] = walkRun(s0[i], x0[i], steps)
		}
	})
	qd.StreamParallel(func() {
		for i := range len(s1) {
			s1[i], x1[i] = walkRun(s1[i], x1[i], steps)
		}
	})
	qd.StreamParallel(func() {
		for i := range len(s2) {
			s2[i], x2[i] = walkRun(s2[i], x2[i], steps)
		}
	})
	qd.StreamParallel(func() {
		for i := range len(s3) {
			s3[i], x3[i] = walkRun(s3[i], x3[i], steps)
		}
	})
}

// heatCell is one explicit step of the heat equation at (i, j): the cell
// plus alpha times the discrete Laplacian; boundary cells stay fixed.
// Kernels inline it.
func heatCell(in [][]float32, i, j int, alpha float32) float32 {
	c := in[i][j]
	if i == 0 || j == 0 || i == len(in)-1 || j == len(in[0])-1 {
		return c
	}
	return c + alpha*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1])-4*c)
}

// heatStep advances one heat simulation one time step, in parallel over
// the grid. On a small grid it is over in a few microseconds: the cost of
// launching it is what counts, which graphs cut.
//
//qd:kernel
func heatStep(in, out [][]float32, alpha float32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		out[i][j] = heatCell(in, i, j, alpha)
	}
}
