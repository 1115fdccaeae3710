package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

type Particle struct {
	X, V float32
	Name string
}

type Link struct {
	Next *Link
	W    [2][]float32
}

// A refused parameter gives one error: its uses say nothing more.
//
//qd:kernel
func k(ps /* ERROR "parameter ps has type []Particle; in its element type Particle, field Name has type string: strings are not supported in kernels" */ []Particle, ls /* ERROR "parameter ls has type [][]Link; in its element type Link, field Next has type *Link: pointers are not supported" */ [][]Link) {
	for i := range len(ps) {
		ps[i].X += ps[i].V
		ls[i][0] = ls[i][1]
	}
}
