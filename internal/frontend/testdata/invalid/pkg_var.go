package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

var g float32 = 1

//qd:kernel
func k(x []float32) {
	x[0] = g // ERROR "package-level variable g cannot be used in kernels"
}
