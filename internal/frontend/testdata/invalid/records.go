package kernels

import "github.com/quadrants-go/qd"

type Cell struct {
	V qd.Vec2[float32]
	M float32
}

type Grid struct{ W [2][]float32 }

func (c *Cell) Clear() { *c = Cell{} }

//qd:kernel
func slices(gs /* ERROR "parameter gs has type []Grid; in its element type Grid, field W has type [2][]float32, whose elements have type []float32: slices are not supported inside values" */ []Grid) {
}

//qd:kernel
func whole(grid [][]Cell, x []float32) {
	for i := range len(grid) {
		grid[i][1].Clear()
		(& /* ERROR "&grid[i][0]: pointers into array parameters are not supported in kernels" */ grid[i][0]).Clear()
		k := int(x[i])
		grid[i][0].V[k] = 1
		qd.AtomicAdd(&grid[i][0].V[k /* ERROR "the first argument of qd.AtomicAdd indexes grid[i][0].V[k] inside an element of grid with k, which is not a constant" */], 1)
		c /* ERROR "variable c has array type []Cell" */ := grid /* ERROR "grid[i] is a row of the 2-dimensional array grid; index all 2 dimensions to reach an element" */ [i]
		_ = c
	}
}
