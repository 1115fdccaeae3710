// want: 15:9: math.Cbrt is not supported in kernels; supported: Sqrt
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float64) {
	x[0] = math.Cbrt(x[1])
}
