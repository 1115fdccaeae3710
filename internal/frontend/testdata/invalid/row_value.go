package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

func f(r []float32) float32 { return r[0] }

//qd:kernel
func k(x [][]float32, y []float32) {
	y[0] = f(x /* ERROR "sub-arrays such as x[0] cannot be passed to f" */ [0])
}
