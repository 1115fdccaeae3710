package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func twoJobs(a, b []int32, c [][]float32) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] = 1
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(c), len(c[0])) {
			c[i][j] = qd.Sqrt(float32(i + j))
		}
		qd.LoopConfig(qd.BlockDim(128))
		for i := range len(b) {
			b[i] = 2
		}
	})
}
