// want: 18:2: every top-level statement must be a qd.StreamParallel block
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
	x[1] = 2
}
