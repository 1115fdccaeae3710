package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int, c bool) {
	qd.StreamParallel(func() {
		if c {
			return // ERROR "return inside a qd.StreamParallel block is only supported as its last statement"
		}
		x[0] = 1
	})
}
