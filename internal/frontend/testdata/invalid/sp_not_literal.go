// want: 16:20: the argument of qd.StreamParallel must be a function literal
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	var f func()
	qd.StreamParallel(f)
}
