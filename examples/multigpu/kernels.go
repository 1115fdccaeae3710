package main

// The example's kernel: ordinary Go that the example also runs natively as
// its reference (main.go embeds this file's text for qd.Compile).

import "github.com/quadrants-go/qd"

// step advances the interior rows of a slab (all but the first and the
// last, its halo) one time step: each cell becomes the mean of itself and
// its four neighbours (columns wrap around), then passes through work
// rounds of s = s/2 + v/2, which converge to the mean: arithmetic that
// makes a step compute bound for a large work.
//
//qd:kernel
func step(cur, next [][]float32, work int) {
	for r, j := range qd.NDRange(len(next)-2, len(next[0])) {
		i := r + 1
		w := len(next[0])
		v := (cur[i][j] + cur[i-1][j] + cur[i+1][j] + cur[i][(j+w-1)%w] + cur[i][(j+1)%w]) * 0.2
		s := float32(0)
		for k := 0; k < work; k++ {
			s = s*0.5 + v*0.5
		}
		next[i][j] = s
	}
}
