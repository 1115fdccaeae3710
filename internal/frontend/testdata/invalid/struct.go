// want: 16:21: struct type
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

type P struct{ X float32 }

//qd:kernel
func k(x []float32, p P) {
}
