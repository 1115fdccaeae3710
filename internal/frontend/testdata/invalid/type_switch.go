// want: 16:2: type switches are not supported
package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	var v any
	switch v.(type) {
	}
}
