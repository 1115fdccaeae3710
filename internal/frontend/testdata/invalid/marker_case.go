// want: 4:1: // QD:Kernel is not the kernel marker: write //qd:kernel
package kernels

// QD:Kernel
func k(x []float32) {
	for i := range x {
		x[i] = 1
	}
}
