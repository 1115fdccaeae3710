package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

func f() {
	qd. /* ERROR "qd.StreamParallel can only be used in a //qd:kernel function, not in helper f" */ StreamParallel(func() {})
}

//qd:kernel
func k(x []float32) {
	f()
}
