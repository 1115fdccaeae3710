package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

func f[T float32 | float64](x T) T { return x }

//qd:kernel
func k(x []float32) {
	x[0] = f /* ERROR "generic function f cannot be called in kernels" */ (x[1])
}
