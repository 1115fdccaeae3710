package main

// This file is ordinary Go: it compiles with the example, which calls saxpy
// natively as its reference, and main.go embeds its text for qd.Compile.

//qd:kernel
func saxpy(a float32, x, y []float32) {
	for i := range len(x) { // a top-level range loop: parallel over [0, len(x))
		y[i] = a*x[i] + y[i]
	}
}
