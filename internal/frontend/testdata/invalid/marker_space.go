// want: 4:1: // qd:kernel is not the kernel marker: write //qd:kernel
package kernels

// qd:kernel
func k(x []float32) {
	for i := range x {
		x[i] = 1
	}
}
