package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	qd. /* ERROR "qd.LoopConfig must be immediately followed by a parallel loop" */ LoopConfig(qd.BlockDim(64))
	x[0] = 1
}
