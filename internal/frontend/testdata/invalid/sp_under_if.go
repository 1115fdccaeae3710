package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32, c bool) {
	if c {
		qd. /* ERROR "qd.StreamParallel must be a top-level statement of the kernel, not inside if" */ StreamParallel(func() {})
	}
}
