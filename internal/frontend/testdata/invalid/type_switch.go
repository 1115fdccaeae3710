package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int32) {
	var v /* ERROR "variable v has interface type any" */ any
	switch /* ERROR "type switches are not supported in kernels" */ v.(type) {
	}
}
