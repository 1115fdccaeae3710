package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	for range 3 {
		qd. /* ERROR "qd.StreamParallel cannot be used inside a parallel loop" */ StreamParallel(func() {})
	}
}
