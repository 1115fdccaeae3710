package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	for i := range len(x) {
		if i > 3 {
			return // ERROR "return inside a parallel loop is not supported"
		}
		x[i] = 0
	}
}
