package qd

import (
	"strings"
	"testing"
)

const genericSrc = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func saxpy[T qd.Float](a T, x, y []T) {
	for i := range len(x) {
		y[i] += a * x[i]
	}
}

//qd:kernel
func fill[T int32 | float64](x [][]T, v T) {
	for i, j := range qd.NDRange(len(x), len(x[0])) {
		x[i][j] = v
	}
}

//qd:kernel
func plain(x []int32) {
	for i := range len(x) {
		x[i] = 7
	}
}
`

// TestGenericKernels: a launch instantiates a generic kernel from its
// arguments' types, Ndarrays and Go slices alike; an untyped constant
// takes the type the arrays give; each instance compiles once.
func TestGenericKernels(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, genericSrc)
		if got := strings.Join(m.Kernels(), " "); got != "plain saxpy fill" {
			t.Errorf("Kernels() = %q, want the plain kernels, then the generic ones", got)
		}
		k := kernelOf(t, m, "saxpy")
		if k.Name() != "saxpy" {
			t.Errorf("Name() = %q", k.Name())
		}

		x32 := newNdarray[float32](t, p, 8)
		y32 := newNdarray[float32](t, p, 8)
		check(t, x32.FillOn(p.DefaultStream(), 1))
		check(t, k.Launch(2.0, x32, y32)) // untyped: float32 from the arrays
		check(t, k.Launch(float32(3), x32, y32))
		wantAll(t, "y32", y32, 5)

		x64 := []float64{1, 2}
		y64 := []float64{10, 20}
		check(t, k.Launch(0.5, x64, y64)) // float64 from everything
		if y64[0] != 10.5 || y64[1] != 21 {
			t.Errorf("saxpy[float64] on slices: y = %v, want [10.5 21]", y64)
		}
		if n := len(k.g.instances); n != 2 {
			t.Errorf("%d instances after launches of two type lists, want 2", n)
		}

		f := kernelOf(t, m, "fill")
		grid := [][]int32{{0, 0}, {0, 0}}
		check(t, f.Launch(grid, int32(4)))
		check(t, f.Launch(grid, 5)) // untyped int: int32 from the grid
		if grid[1][1] != 5 {
			t.Errorf("fill[int32]: %v", grid)
		}

		// Errors name the kernel and the types.
		wantErr(t, k.Launch(float32(1), x32, []float64{1}), ErrInvalidArgument)
		err := f.Launch([][]float32{{1}}, float32(1))
		wantErr(t, err, ErrInvalidArgument)
		if err != nil && !strings.Contains(err.Error(), "fill") {
			t.Errorf("error %q does not name the kernel", err)
		}
		wantErr(t, k.Launch(nil, x32, y32), ErrInvalidArgument)

		check(t, m.Close())
		wantErr(t, k.Launch(float32(1), x32, y32), ErrClosed)
	})
}
