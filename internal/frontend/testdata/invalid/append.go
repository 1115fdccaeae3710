package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	x /* ERROR "cannot assign to array parameter x" */ = append /* ERROR "builtin append is not supported in kernels" */ (x, 1)
}
