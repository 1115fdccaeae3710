package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k(x [][]int) {
	for i, r /* ERROR "the range value of x would be a row" */ := range x {
		_, _ = i, r
	}
}
