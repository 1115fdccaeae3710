// Streamparallel launches one kernel whose top-level statements are
// qd.StreamParallel blocks: each block runs on its own stream (the first on
// the launch stream, the others on pooled streams forked from it and
// joined back with events), so three independent jobs overlap in one
// launch. The same loops without the blocks give the same results, one
// loop after another.
//
//	go run ./examples/streamparallel
package main
