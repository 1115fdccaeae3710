package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	for i := range "abc" /* ERROR "range over \"abc\" is not supported" */ {
		x[0] = int32(i)
	}
}
