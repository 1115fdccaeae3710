package kernels

import "github.com/quadrants-go/qd"

// Atomics on 8- and 16-bit elements stay refused: GPUs have no atomics of
// those widths, and qd.AtomicElem does not list them.
//
//qd:kernel
func k(x []int8) {
	qd. /* ERROR "int8 does not satisfy qd.AtomicElem" */ AtomicAdd(&x[0], 1)
}
