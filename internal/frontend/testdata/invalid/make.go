package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	y /* ERROR "variable y has array type []float32" */ := make /* ERROR "builtin make is not supported in kernels" */ ([]float32, 3)
	_ = y
}
