package main

// This file is ordinary Go: it compiles with the example, which calls
// heatStep natively as its reference, and main.go embeds its text for
// qd.Compile.

import "github.com/quadrants-go/qd"

// heatCell is one explicit step of the heat equation at (i, j): the cell
// plus alpha times the discrete Laplacian; boundary cells stay fixed.
func heatCell(in [][]float32, i, j int, alpha float32) float32 {
	c := in[i][j]
	if i == 0 || j == 0 || i == len(in)-1 || j == len(in[0])-1 {
		return c
	}
	return c + alpha*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1])-4*c)
}

// heatStep advances the grid one time step.
//
//qd:kernel
func heatStep(in, out [][]float32, alpha float32) {
	for i, j := range qd.NDRange(len(in), len(in[0])) {
		out[i][j] = heatCell(in, i, j, alpha)
	}
}
