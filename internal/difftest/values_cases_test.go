package difftest

// The cases of the value kernels (values.go). Every operation they use is
// an IEEE operation, a conversion or an integer one, so the results must
// match the native run bit for bit on every backend.

import (
	"math/rand/v2"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffcheck"
)

// The record element types of the value kernels, which diffcheck makes
// Ndarrays of.
func init() {
	diffcheck.RecordElem[body]()
	diffcheck.RecordElem[gridCell]()
	diffcheck.RecordElem[vecCell]()
	diffcheck.RecordElem[qd.Vec4[float32]]()
	diffcheck.RecordElem[[3]int64]()
	diffcheck.RecordElem[qd.Vec2[float64]]()
}

// matrixEntry draws a matrix entry: mostly moderate values, with exact
// zeros, repeated values and tiny or large ones often enough that the
// decompositions' branches (rank-deficient input, sorted swaps) all run.
func matrixEntry(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return logUniform(r, 1e-8, 1e8, true)
	}
	return uniform(r, -3, 3)
}

func valueCases() []diffCase {
	return []diffCase{
		{kernel: "vecOps", fn: vecOps, gen: func(r *rand.Rand, n int) []any {
			a := grid(n, 4, func(int, int) float32 { return float32(randFloat(r)) })
			b := grid(n, 4, func(int, int) float32 { return float32(randFloat(r)) })
			return []any{a, b, zeros[float32](n, 24)}
		}},
		{kernel: "matOps", fn: matOps, gen: func(r *rand.Rand, n int) []any {
			return []any{grid(n, 9, func(int, int) float64 { return matrixEntry(r) }), zeros[float64](n, 21)}
		}},
		{kernel: "decomps", fn: decomps, gen: func(r *rand.Rand, n int) []any {
			a := grid(n, 9, func(int, int) float64 { return matrixEntry(r) })
			for i := range a {
				switch r.IntN(8) {
				case 0: // the zero matrix
					clear(a[i])
				case 1: // rank one
					for k := range 9 {
						a[i][k] = a[i][k%3] * float64(k/3+1)
					}
				}
			}
			return []any{a, zeros[float64](n, 43), zeros[float32](n, 10)}
		}},
		{kernel: "quats", fn: quats, gen: func(r *rand.Rand, n int) []any {
			return []any{grid(n, 8, func(int, int) float32 { return float32(uniform(r, -2, 2)) }), zeros[float32](n, 5)}
		}},
		{kernel: "structs", fn: structs, gen: func(r *rand.Rand, n int) []any {
			k := make([]int32, n)
			for i := range k {
				k[i] = int32(r.IntN(3))
			}
			return []any{floats[float32](r, n), k, zeros[float32](n, 9)}
		}},
		{kernel: "records", fn: records, gen: func(r *rand.Rand, n int) []any {
			ps := make([]body, n)
			k := make([]int32, n)
			for i := range ps {
				f := func() float32 { return float32(uniform(r, -2, 2)) }
				ps[i] = body{X: qd.Vec3[float32]{f(), f(), f()}, V: qd.Vec3[float32]{f(), f(), f()}, M: Meters(f()), Tag: [2]int32{int32(r.IntN(100)), 1}}
				k[i] = int32(r.IntN(3))
			}
			return []any{ps, zeros[gridCell](n, 3), k, make([]gridCell, 3)}
		}},
		{kernel: "vecAtomics", fn: vecAtomics, gen: func(r *rand.Rand, n int) []any {
			k := make([]int32, n)
			for i := range k {
				k[i] = int32(r.IntN(3))
			}
			return []any{k, make([]vecCell, 3), make([]qd.Vec4[float32], 2), make([][3]int64, 3), make([]qd.Vec2[float64], 1)}
		}},
		{kernel: "rands", fn: rands, gen: func(r *rand.Rand, n int) []any {
			return []any{r.Uint64(), make([]uint32, n), make([]uint64, n), make([]float32, n), make([]float64, n)}
		}},
		{kernel: "generics", fn: generics, gen: func(r *rand.Rand, n int) []any {
			return []any{floats[float64](r, n), zeros[float64](n, 3)}
		}},
		{kernel: "smallInts", fn: smallInts, gen: func(r *rand.Rand, n int) []any {
			a, b, u, f := make([]int8, n), make([]uint8, n), make([]uint16, n), make([]float32, n)
			for i := range n {
				a[i], b[i], u[i] = int8(r.Uint32()), uint8(r.Uint32()), uint16(r.Uint32())
				f[i] = float32(uniform(r, -127.9, 127.9))
			}
			if n > 1 {
				a[0], b[0] = 127, 200 // int8(127)+1 and uint8(200)*2 wrap
				a[1] = -128
			}
			c := grid(n, 2, func(int, int) int16 { return int16(r.Uint32()) })
			return []any{a, b, c, u, f, zeros[int32](n, 14)}
		}},
		{kernel: "fourDims", fn: fourDims, gen: func(r *rand.Rand, n int) []any {
			m := max(n/16, 1)
			x := make([][][][]float32, m)
			out := make([][][]float32, m)
			for i := range x {
				x[i] = make([][][]float32, 3)
				out[i] = make([][]float32, 3)
				for j := range x[i] {
					x[i][j] = grid(2, 5, func(int, int) float32 { return float32(uniform(r, -2, 2)) })
					out[i][j] = make([]float32, 2)
				}
			}
			return []any{x, out}
		}},
	}
}
