package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	x[0] = x /* ERROR "slicing is not supported in kernels" */ [1:][0]
}
