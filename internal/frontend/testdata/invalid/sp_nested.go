package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	qd.StreamParallel(func() {
		qd. /* ERROR "qd.StreamParallel blocks cannot be nested" */ StreamParallel(func() {})
	})
}
