package kernels

// QD:Kernel
// ERROR "// QD:Kernel is not the kernel marker: write //qd:kernel"
func k(x []float32) {
	for i := range x {
		x[i] = 1
	}
}
