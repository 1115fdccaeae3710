package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	var /* ERROR "every top-level statement must be a qd.StreamParallel block" */ f /* ERROR "variable f has function type" */ func()
	qd.StreamParallel(f /* ERROR "the argument of qd.StreamParallel must be a function literal" */)
}
