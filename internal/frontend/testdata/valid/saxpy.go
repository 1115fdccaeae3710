package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func saxpy(a float32, x, y []float32) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i]
	}
}
