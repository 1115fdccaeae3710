// want: 15:17: range over
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	for i := range "abc" {
		x[0] = int32(i)
	}
}
