package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x, y []float32) {
	x /* ERROR "cannot assign to array parameter x" */ = y // ERROR "array y can only be indexed"
}
