// The n-body kernel of qd bench's compute-bound rows (nbody.go embeds
// this file); testdata/nbody.cu is the same loop in CUDA C.

package bench

import "github.com/quadrants-go/qd"

//qd:kernel
func nbody(px, py, pz, m, ax, ay, az []float32, eps2 float32) {
	for i := range len(px) {
		xi, yi, zi := px[i], py[i], pz[i]
		var fx, fy, fz float32
		for j := 0; j < len(px); j++ {
			dx := px[j] - xi
			dy := py[j] - yi
			dz := pz[j] - zi
			r2 := dx*dx + dy*dy + dz*dz + eps2
			inv := 1 / qd.Sqrt(r2)
			s := m[j] * inv * inv * inv
			fx += dx * s
			fy += dy * s
			fz += dz * s
		}
		ax[i] = fx
		ay[i] = fy
		az[i] = fz
	}
}
