package main

// Kernels for the host-slice example; ordinary Go, also run natively as the
// reference (main.go embeds this file's text for qd.Compile).

import "github.com/quadrants-go/qd"

// scale multiplies every element of x by a.
//
//qd:kernel
func scale(a float64, x []float64) {
	for i := range len(x) {
		x[i] *= a
	}
}

// transpose writes the transpose of m into t.
//
//qd:kernel
func transpose(m, t [][]int32) {
	for i, j := range qd.NDRange(len(m), len(m[0])) {
		t[j][i] = m[i][j]
	}
}
