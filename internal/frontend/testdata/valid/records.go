package kernels

import "github.com/quadrants-go/qd"

// Arrays of records: elements that are structs or fixed arrays, read and
// written one leaf at a time in Go's layout.

type inner struct {
	A [2]float32
	B int32
}

type particle struct {
	X, V qd.Vec2[float32]
	C    qd.Mat2[float32]
	In   inner
	Hot  bool
	N    int64
}

type cell struct {
	V qd.Vec2[float32]
	M float32
}

type pair[T qd.Float] struct{ A, B T }

func (c *cell) Reset() { *c = cell{} }

func (c cell) Mass() float32 { return c.M }

func (p *pair[T]) Swap() { p.A, p.B = p.B, p.A }

func kinetic(ps []particle, i int) float32 { return ps[i].V.Dot(ps[i].V) }

// loads: whole elements, fields, nested fields and constant elements.
//
//qd:kernel
func loads(ps []particle, out []float32) {
	for i := range len(ps) {
		q := ps[i]
		v := ps[i].V
		out[i] = q.J() + v[0] + ps[i].In.A[1] + float32(ps[i].In.B) + ps[i].C[1][0] + kinetic(ps, i)
		if ps[i].Hot {
			out[i] += float32(ps[i].N)
		}
	}
}

func (p particle) J() float32 { return p.C.Trace() }

// stores: whole elements, sub-aggregates, leaves, op= and ++, and an
// element from another element's fields.
//
//qd:kernel
func stores(ps []particle, x []float32) {
	for i := range len(ps) {
		ps[i].X = qd.Vec2[float32]{x[i], 1}
		ps[i].V[1] += x[i]
		ps[i].In.B++
		ps[i].In.A[0] *= 2
		ps[i].Hot = !ps[i].Hot
		if i > 0 {
			ps[i] = particle{X: ps[i].V, V: ps[i].X, N: ps[i-1].N}
		}
	}
}

// grids: two and three dimensions, atomics on leaves, methods with value
// and pointer receivers, and a range over the records.
//
//qd:kernel
func grids(grid [][]cell, vol [][][]qd.Vec3[float32], ps []particle) {
	for i, j := range qd.NDRange(len(grid), len(grid[0])) {
		grid[i][j].Reset()
		qd.AtomicAdd(&grid[i][j].M, 1)
		qd.AtomicAdd(&grid[i][j].V[1], grid[i][j].Mass())
		vol[i][j][0] = vol[i][j][1].Add(qd.Vec3[float32]{1, 2, 3})
		vol[i][j][0][2] = 5
	}
	for _, q := range ps {
		grid[0][0].M += q.In.A[0]
	}
}

// generic: an array of a generic value type.
//
// instantiate generic[float64]
//
//qd:kernel
func generic[T qd.Float](ps []pair[T]) {
	for i := range len(ps) {
		ps[i].Swap()
		ps[i].A += ps[i].B
	}
}

// dynamic: indices into arrays inside elements that are no constants:
// each access is one alternative per element.
//
//qd:kernel
func dynamic(ps []particle, k []int32, out []float32) {
	for i := range len(ps) {
		j := k[i]
		out[i] = ps[i].X[j] + ps[i].C[j][1-j]
		ps[i].V[j] = out[i]
		ps[i].C[j][j] *= 2
		ps[i].In.A[j]++
		r := ps[i].C[j]
		ps[i].C[1-j] = r
	}
}
