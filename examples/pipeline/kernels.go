package main

// Kernels of the pipeline; ordinary Go that the example also runs natively
// as its reference (main.go embeds this file's text for qd.Compile).

import "github.com/quadrants-go/qd"

// produce writes batch b's input into buf.
//
//qd:kernel
func produce(buf []float32, b int) {
	for i := range len(buf) {
		buf[i] = float32((i*7+b*13)%101) * 0.5
	}
}

// consume turns the batch in buf into row b of out.
//
//qd:kernel
func consume(buf []float32, out [][]float32, b int) {
	for i := range len(buf) {
		out[b][i] = qd.Sqrt(buf[i]) + float32(b)
	}
}
