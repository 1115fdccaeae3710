package main

// The demo's kernels. This file is ordinary Go of package main: the Go
// compiler type-checks it with the command, the demo calls heatStep
// natively as its plain-Go reference, and the same text, embedded into the
// binary (heatKernels in demo.go), is what qd.Compile compiles for the
// device.

import "github.com/quadrants-go/qd"

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

// heatStep advances one simulation one time step, in parallel over the
// grid.
//
//qd:kernel
func heatStep(in, out [][]float32, alpha float32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		out[i][j] = heatCell(in, i, j, alpha)
	}
}

// heatStep4 advances four simulations one step each: the same four loops as
// heatStep4Groups, run one after the other on the launch stream.
//
//qd:kernel
func heatStep4(in0, out0, in1, out1, in2, out2, in3, out3 [][]float32, alpha float32) {
	for i, j := range qd.NDRange(len(in0), len(in0[0])) {
		out0[i][j] = heatCell(in0, i, j, alpha)
	}
	for i, j := range qd.NDRange(len(in1), len(in1[0])) {
		out1[i][j] = heatCell(in1, i, j, alpha)
	}
	for i, j := range qd.NDRange(len(in2), len(in2[0])) {
		out2[i][j] = heatCell(in2, i, j, alpha)
	}
	for i, j := range qd.NDRange(len(in3), len(in3[0])) {
		out3[i][j] = heatCell(in3, i, j, alpha)
	}
}

// heatStep4Groups is heatStep4 with each simulation's loop in its own
// qd.StreamParallel block: one launch, four streams, forked from and joined
// back into the launch stream.
//
//qd:kernel
func heatStep4Groups(in0, out0, in1, out1, in2, out2, in3, out3 [][]float32, alpha float32) {
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(in0), len(in0[0])) {
			out0[i][j] = heatCell(in0, i, j, alpha)
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(in1), len(in1[0])) {
			out1[i][j] = heatCell(in1, i, j, alpha)
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(in2), len(in2[0])) {
			out2[i][j] = heatCell(in2, i, j, alpha)
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(in3), len(in3[0])) {
			out3[i][j] = heatCell(in3, i, j, alpha)
		}
	})
}
