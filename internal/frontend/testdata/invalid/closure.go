// want: 15:7: function literals (closures) are not supported
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	f := func() {}
	f()
}
