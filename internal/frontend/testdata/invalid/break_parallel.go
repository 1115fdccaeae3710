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
		break // ERROR "break cannot leave a parallel loop"
		x[i] = 0
	}
}
