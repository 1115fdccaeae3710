// Multigpu splits a grid across every GPU of the machine: each device
// holds a slab of rows, runs a kernel per time step on its own stream, and
// takes the rows it needs from its neighbours (the halo) by peer copies
// that only events order; the host enqueues every step and reads the
// result once, checked against the same kernel run as plain Go.
//
//	go run ./examples/multigpu                      # every GPU (one on a one-GPU machine, or the CPU)
//	go run ./examples/multigpu -devices 1           # one device
//	go run ./examples/multigpu -parts 4             # 4 slabs, round-robin over the devices
//	go run ./examples/multigpu -rows 8192 -cols 8192 -work 512 -steps 20 -check=false
//
// One Program per device (qd.WithDevice). Each slab is an array of its
// rows plus one halo row above and one below, twice (the step reads one
// and writes the other). A step on every device:
//
//	stream d: step(cur, next) → record done[d]
//	stream d: wait done[d-1] → next[d] top halo ← next[d-1] last row   (a peer copy)
//	stream d: wait done[d+1] → next[d] bottom halo ← next[d+1] first row
//
// Each device pulls its halo on its own stream after waiting, on the
// device, for its neighbours' kernels: the host never blocks between
// steps. The next step's kernel on d then follows the copies (same
// stream), and a neighbour overwrites the rows d copied only after it has
// waited for d's next kernel, which follows those copies: each array is
// written only after every reader of its old rows.
//
// With more slabs than devices (-parts), several Programs share a device
// and the same code copies between them: that is how it runs, and is
// tested, on a machine with one GPU or none.
package main
