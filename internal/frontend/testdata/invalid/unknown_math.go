package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float64) {
	x[0] = math. /* ERROR "math.Cbrt is not supported in kernels" */ Cbrt(x[1])
}
