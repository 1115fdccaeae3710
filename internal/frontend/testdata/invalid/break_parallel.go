// want: 16:3: break cannot leave a parallel loop
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	for i := range len(x) {
		break
		x[i] = 0
	}
}
