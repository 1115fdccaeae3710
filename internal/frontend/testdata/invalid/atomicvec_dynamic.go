package kernels

import "github.com/quadrants-go/qd"

type node struct {
	V  qd.Vec2[float32]
	Vs [2]qd.Vec2[float32]
}

//qd:kernel
func dynamic(grid []node, k int) {
	for i := range grid {
		qd.AtomicAddVec(&grid[i].Vs[k /* ERROR "indexes grid[i].Vs[k] inside an element of grid with k, which is not a constant" */], qd.Vec2[float32]{1, 1})
	}
}
