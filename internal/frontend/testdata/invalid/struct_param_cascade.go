package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

type Particle struct{ X, V float32 }

// A refused parameter gives one error: its uses say nothing more.
//
//qd:kernel
func k(ps /* ERROR "parameter ps has type []Particle: arrays of structs or fixed-size arrays are not supported as kernel parameters yet; pass one array per field or component" */ []Particle, vs /* ERROR "parameter vs has type [][]qd.Vec2[float32]: arrays of structs" */ [][]qd.Vec2[float32]) {
	for i := range len(ps) {
		ps[i].X += ps[i].V
		vs[i][0] = vs[i][1].Add(vs[i][0])
	}
}
