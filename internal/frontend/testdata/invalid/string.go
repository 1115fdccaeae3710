package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	s /* ERROR "variable s has type string" */ := "a" // ERROR "constant \"a\" has type string"
	_ = s
}
