package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k[ /* ERROR "kernel k cannot be generic" */ T float32 | float64](x /* ERROR "parameter x has type parameter type T" */ []T) {
}
