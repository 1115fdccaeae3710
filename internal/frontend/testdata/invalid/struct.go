package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

type P struct{ X float32 }

//qd:kernel
func k(x []float32, p /* ERROR "parameter p has type P: struct and fixed-size array parameters are not supported yet; pass each field or component as its own parameter" */ P) {
}
