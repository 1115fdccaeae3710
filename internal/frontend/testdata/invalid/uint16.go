package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	var s /* ERROR "variable s has type uint16" */ uint16
	_ = s
}
