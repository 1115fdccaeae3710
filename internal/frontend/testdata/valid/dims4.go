package kernels

import "github.com/quadrants-go/qd"

// 4-D arrays: indexed with four indices, measured with len per dimension,
// walked with nested loops or NDRange3 over the leading dimensions.

//qd:kernel
func scale4(x [][][][]float32, s float32) {
	for i := range x {
		for j := range len(x[i]) {
			for k := range len(x[0][0]) {
				for l := range len(x[0][0][0]) {
					x[i][j][k][l] *= s
				}
			}
		}
	}
}

//qd:kernel
func sum4(x [][][][]int16, out [][][]int32) {
	for p := range qd.NDRange3(len(x), len(x[0]), len(x[0][0])) {
		var acc int32
		for l := range len(x[0][0][0]) {
			acc += int32(x[p.I][p.J][p.K][l])
		}
		out[p.I][p.J][p.K] = acc
	}
}
