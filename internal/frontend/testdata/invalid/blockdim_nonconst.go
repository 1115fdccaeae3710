package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32, n int) {
	qd.LoopConfig(qd.BlockDim(n /* ERROR "qd.BlockDim needs a constant between 1 and 1024" */))
	for i := range len(x) {
		x[i] = 0
	}
}
