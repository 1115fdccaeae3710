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
	*p = 1 // p's declaration failed: no second error
}
