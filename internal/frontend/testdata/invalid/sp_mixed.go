package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	qd.StreamParallel(func() {
		x[0] = 1
	})
	x /* ERRORx `every top-level statement must be a qd\.StreamParallel block \(first block at sp_mixed\.go:\d+:2\)` */ [1] = 2
}
