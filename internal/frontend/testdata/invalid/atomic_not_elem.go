package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	var v int32
	qd.AtomicAdd(& /* ERROR "the first argument of qd.AtomicAdd must be the address of an array element" */ v, 1)
}
