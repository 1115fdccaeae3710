// want: 16:3: qd.StreamParallel blocks cannot be nested
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
		qd.StreamParallel(func() {})
	})
}
