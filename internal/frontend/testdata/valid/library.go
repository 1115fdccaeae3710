package kernels

import "github.com/quadrants-go/qd"

// linalg uses vectors, matrices and quaternions of qd's value library.
//
//qd:kernel
func linalg(x []float32, out [][]float32) {
	for i := range len(x) {
		a := qd.Vec3[float32]{x[i], 1, 2}
		b := qd.Vec3[float32]{0, x[i], 1}
		c := a.Cross(b)
		m := qd.Mat3[float32]{{x[i], 1, 0}, {0, 2, 1}, {1, 0, 3}}
		inv := m.Inv()
		q := qd.Quat[float32]{0, 0, x[i], 1}.Normalized()
		r := q.Rotate(c)
		out[i][0] = inv.MulVec(c)[0] + r[1] + m.Det()
	}
}

// random draws from qd.Rand: a pointer receiver on a local.
//
//qd:kernel
func random(seed uint64, out []uint32, f []float32) {
	for i := range len(out) {
		r := qd.NewRand(seed, uint64(i))
		out[i] = r.Uint32()
		f[i] = r.Float32()
	}
}
