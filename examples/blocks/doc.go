// Blocks shows block-level kernels: a tiled matrix product, a histogram
// with bins privatised in shared memory, and an exclusive scan built on
// the block collectives. Each runs on the device and again natively (the
// kernels are plain Go), and the results are compared.
//
//	go run ./examples/blocks
package main
