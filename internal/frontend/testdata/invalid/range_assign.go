package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k(x []int) {
	i := 0
	for /* ERROR "range loops must declare their variables" */ i = range 3 {
	}
	x[0] = i
}
