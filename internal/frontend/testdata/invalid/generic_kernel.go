package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k[ /* ERROR "kernel k is generic; launching generic kernels is not supported yet" */ T float32 | float64](x []T) {
}
