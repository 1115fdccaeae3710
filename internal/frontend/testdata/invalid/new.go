package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	x[0] = * /* ERROR "pointers are not supported in kernels" */ new(float32)
}
