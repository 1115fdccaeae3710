package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func flags(bs [][2]bool) {
	for i := range bs {
		qd. /* ERROR "[2]bool does not satisfy qd.AtomicVec" */ AtomicAddVec(&bs[i], [2]bool{true, false})
	}
}
