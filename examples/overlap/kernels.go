//go:build ignore

package main

import "github.com/quadrants-go/qd"

// smooth replaces every element by a polynomial of itself: enough work per
// element that the kernel takes about as long as its chunk's copies.
//
//qd:kernel
func smooth(x []float32, terms int) {
	for i := range len(x) {
		v := x[i]
		acc := float32(0)
		for k := 0; k < terms; k++ {
			acc = acc*v + 0.5
		}
		x[i] = acc + qd.Sqrt(v*v)
	}
}
