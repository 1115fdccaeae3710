// want: 15:2: cannot assign to array parameter x
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x, y []float32) {
	x = y
}
