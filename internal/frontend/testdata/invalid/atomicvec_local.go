package kernels

import "github.com/quadrants-go/qd"

type node struct {
	V  qd.Vec2[float32]
	Vs [2]qd.Vec2[float32]
}

//qd:kernel
func local(grid []node) {
	for i := range grid {
		var v qd.Vec2[float32]
		qd.AtomicAddVec(& /* ERROR "the first argument of qd.AtomicAddVec must be the address of a vector in an array parameter" */ v, grid[i].V)
		grid[i].V = v
	}
}
