// want: 13:1: //qd:kernel must be on the line directly above a func declaration
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel

func k(x []float32) {
}
