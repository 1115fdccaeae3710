package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	r /* ERROR "variable r has function type" */ := qd. /* ERROR "qd.NDRange can only be the range of a for loop" */ NDRange(1, 2)
	_ = r
}
