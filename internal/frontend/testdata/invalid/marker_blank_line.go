package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
// ERROR "//qd:kernel must be on the line directly above a func declaration"

func k(x []float32) {
}
