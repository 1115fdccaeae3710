package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

type P struct{ X float32 }

//qd:kernel
func k(x []float32, p /* ERROR "parameter p has struct type kernels.P" */ P) {
}
