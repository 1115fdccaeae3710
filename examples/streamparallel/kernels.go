package main

// The stream-parallel kernel; ordinary Go, also run natively as the
// reference (main.go embeds this file's text for qd.Compile).

import "github.com/quadrants-go/qd"

// prepare does three independent jobs in one launch. Each qd.StreamParallel
// block runs on its own stream, so the jobs overlap; the loops inside one
// block run in order.
//
//qd:kernel
func prepare(hist []int32, values []int32, grid [][]float32, ramp []float32) {
	qd.StreamParallel(func() { // job 1: a histogram, with atomics
		for i := range len(hist) {
			hist[i] = 0
		}
		for i := range len(values) {
			qd.AtomicAdd(&hist[values[i]%int32(len(hist))], 1)
		}
	})
	qd.StreamParallel(func() { // job 2: a 2-D field
		for i, j := range qd.NDRange(len(grid), len(grid[0])) {
			grid[i][j] = qd.Sqrt(float32(i*i + j*j))
		}
	})
	qd.StreamParallel(func() { // job 3: two loops in order: a ramp, then doubled
		for i := range len(ramp) {
			ramp[i] = float32(i) / float32(len(ramp))
		}
		for i := range len(ramp) {
			ramp[i] = 2 * ramp[i]
		}
	})
}

// prepareSerial is the same three jobs without groups: every loop runs on
// the launch stream, one after the other.
//
//qd:kernel
func prepareSerial(hist []int32, values []int32, grid [][]float32, ramp []float32) {
	for i := range len(hist) {
		hist[i] = 0
	}
	for i := range len(values) {
		qd.AtomicAdd(&hist[values[i]%int32(len(hist))], 1)
	}
	for i, j := range qd.NDRange(len(grid), len(grid[0])) {
		grid[i][j] = qd.Sqrt(float32(i*i + j*j))
	}
	for i := range len(ramp) {
		ramp[i] = float32(i) / float32(len(ramp))
	}
	for i := range len(ramp) {
		ramp[i] = 2 * ramp[i]
	}
}
