// want: 15:9: pointers are not supported in kernels
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	x[0] = *new(float32)
}
