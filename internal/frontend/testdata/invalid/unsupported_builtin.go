// want: 15:9: builtin cap is not supported
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int) {
	x[0] = cap(x)
}
