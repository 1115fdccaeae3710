package kernels

import "github.com/quadrants-go/qd"

// Vector atomics: qd.AtomicAddVec is one atomic add per component, each
// its own statement on the same element, indices and values in locals.

type node struct {
	V qd.Vec2[float32]
	M float32
	C [3]int32
}

// scatter adds into an element chosen by a load: the index is spilled once
// and every component's atomic uses it.
//
//qd:kernel
func scatter(grid []node, vs []qd.Vec2[float32], cell []int32) {
	for i := range vs {
		c := cell[i]
		qd.AtomicAddVec(&grid[c].V, vs[i].Scale(2))
		qd.AtomicAddVec(&grid[c].C, [3]int32{1, int32(i), -1})
	}
}

// whole adds a whole element of a vector array, and a row of a 2-D one.
//
//qd:kernel
func whole(acc []qd.Vec3[float64], g [][]qd.Vec4[float32], xs []float64) {
	for i, j := range qd.NDRange(len(g), len(g[0])) {
		qd.AtomicAddVec(&acc[i%2], qd.Vec3[float64]{xs[i], 1, 0})
		qd.AtomicAddVec(&g[i][j], qd.Vec4[float32]{1, 2, 3, 4})
	}
}

// total is a reduction per component: the element does not vary with the
// parallel index.
//
//qd:kernel
func total(sum []qd.Vec2[float32], vs []qd.Vec2[float32]) {
	for i := range vs {
		qd.AtomicAddVec(&sum[0], vs[i])
	}
}
