package kernels

// qd:kernel
// ERROR "// qd:kernel is not the kernel marker: write //qd:kernel"
func k(x []float32) {
	for i := range x {
		x[i] = 1
	}
}
