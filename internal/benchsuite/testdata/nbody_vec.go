// The n-body kernel of testdata/nbody.go written with qd.Vec3, as a user
// would (nbody.go embeds this file): the row that checks the value types
// cost nothing. The operations and their order are the scalar kernel's,
// so both give the same accelerations bit for bit.

package bench

import "github.com/quadrants-go/qd"

//qd:kernel
func nbodyVec(pos []qd.Vec3[float32], m []float32, acc []qd.Vec3[float32], eps2 float32) {
	for i := range len(pos) {
		pi := pos[i]
		var f qd.Vec3[float32]
		for j := 0; j < len(pos); j++ {
			d := pos[j].Sub(pi)
			inv := 1 / qd.Sqrt(d.Dot(d)+eps2)
			f = f.Add(d.Scale(m[j] * inv * inv * inv))
		}
		acc[i] = f
	}
}

// nbodyVecSoA is the same step with qd.Vec3 values over the scalar
// kernel's arrays (one per coordinate): the types without the change of
// layout.
//
//qd:kernel
func nbodyVecSoA(px, py, pz, m, ax, ay, az []float32, eps2 float32) {
	for i := range len(px) {
		pi := qd.Vec3[float32]{px[i], py[i], pz[i]}
		var f qd.Vec3[float32]
		for j := 0; j < len(px); j++ {
			d := qd.Vec3[float32]{px[j], py[j], pz[j]}.Sub(pi)
			inv := 1 / qd.Sqrt(d.Dot(d)+eps2)
			f = f.Add(d.Scale(m[j] * inv * inv * inv))
		}
		ax[i], ay[i], az[i] = f[0], f[1], f[2]
	}
}
