// want: 15:2: complex numbers are not supported
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float64) {
	c := 1 + 2i
	_ = c
}
