package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []float64) {
	c /* ERROR "variable c has type complex128" */ := 1 /* ERROR "constant (1 + 2i) has type complex128" */ + 2i
	_ = c
}
