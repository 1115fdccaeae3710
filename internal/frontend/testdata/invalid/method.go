package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

type T int

func (T) f() float32 { return 1 }

//qd:kernel
func k(x []float32) {
	var t T
	x[0] = t. /* ERROR "method calls are not supported in kernels" */ f()
}
