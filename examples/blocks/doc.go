// Blocks shows block-level kernels: a tiled matrix product, a histogram
// with bins privatised in shared memory, an exclusive scan built on the
// block collectives, and a stable radix sort of key-value pairs, or of keys alone (SortKeysOn), built on
// those (sort.go: copy the sorter for your own keys). The matrix product,
// the histogram and the scan run on the device and again natively (the
// kernels are plain Go); the sort is checked against slices.SortStableFunc.
//
//	go run ./examples/blocks
package main
