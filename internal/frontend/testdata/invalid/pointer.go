// want: 15:7: & is only supported as &x[i]
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	p := &x[0]
	*p = 1
}
