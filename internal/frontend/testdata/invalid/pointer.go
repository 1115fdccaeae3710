package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	p /* ERROR "variable p has pointer type *float32" */ := & /* ERROR "& is only supported as &x[i]" */ x[0]
	* /* ERROR "pointers are not supported in kernels" */ p = 1
}
