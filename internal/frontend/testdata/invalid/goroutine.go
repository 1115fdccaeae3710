package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	for i := range len(x) {
		go /* ERROR "go statements are not supported in kernels" */ func() {}()
		_ = i
	}
}
