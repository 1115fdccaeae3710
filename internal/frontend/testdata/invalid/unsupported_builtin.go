package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int) {
	x[0] = cap /* ERROR "builtin cap is not supported in kernels" */ (x)
}
