package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	f /* ERROR "variable f has function type" */ := func /* ERROR "function literals (closures) are not supported" */ () {
	}
	f() // f's declaration failed: no second error
}
