package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float32) {
	var c /* ERROR "variable c has channel type chan int" */ chan int
	_ = c
}
