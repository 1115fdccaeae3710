// Hostslices passes ordinary Go slices as kernel arguments: []T for a 1-D
// array parameter, [][]T (rectangular) for a 2-D one. qd copies them to the
// device before the kernel and back after it, in the order of the launch
// stream, and the launch returns once the results are in the slices. No
// Ndarray is needed, at the cost of a copy each way per launch.
//
//	go run ./examples/hostslices
package main
