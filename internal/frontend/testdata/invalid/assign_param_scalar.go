package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32, n int) {
	n /* ERROR "cannot assign to kernel parameter n" */ = 2
	x[0] = float32(n)
}
