package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

func f(n int) int {
	return g(n)
}

func g(n int) int {
	return f /* ERROR "recursive call f → g → f is not supported" */ (n - 1)
}

//qd:kernel
func k(x []int) {
	x[0] = f(3)
}
