package main

import (
	"fmt"
	"math"

	"github.com/quadrants-go/qd"
)

// initialParticles returns n particles in the block [0.2, 0.6]², moving
// down at 1, as the 88-line version starts, but with positions from qd's
// counter-based generator instead of a global random state: particle k's
// position is the first two draws of stream k under a fixed seed, so every
// run on every machine starts from the same state, whatever n is.
func initialParticles(n int) []Particle {
	ps := make([]Particle, n)
	for k := range ps {
		r := qd.NewRand(88, uint64(k))
		x := 0.2 + 0.4*r.Float32()
		y := 0.2 + 0.4*r.Float32()
		ps[k] = Particle{X: qd.Vec2[float32]{x, y}, V: qd.Vec2[float32]{0, -1}, J: 1}
	}
	return ps
}

// newGrid returns a zeroed grid of nGrid×nGrid cells.
func newGrid() [][]Cell {
	g := make([][]Cell, nGrid)
	for i := range g {
		g[i] = make([]Cell, nGrid)
	}
	return g
}

// substep advances ps by one time step with the kernels called as plain Go,
// in the order the program launches them; grid is scratch.
func substep(ps []Particle, grid [][]Cell) {
	clearGrid(grid)
	p2g(ps, grid)
	gridUpdate(grid)
	g2p(ps, grid)
}

// The bounds of the check of qd's particles against plain Go's after the
// first frame. The two cannot agree bit for bit: p2g's float atomics add
// each node's contributions in whatever order the threads reach it (on a GPU
// and between the CPU backend's workers alike), and float addition is not
// associative, so node sums differ in their last bits and the differences
// grow a little with every substep. Natively, running the particles in
// another order (TestReorderWithinBounds) moves positions by under 1e-7,
// velocities by under 2e-6, J by under 1e-7 and C by under 2e-4 after 50
// substeps (C sums terms of size |v|·dx·D⁻¹ ≈ 500|v| that cancel to near
// zero, so its absolute error is the largest). The bounds are about 100×
// that, and still far below what a wrong kernel gives: a particle moves by
// dt·|v| ≈ 2e-4 in one substep, 20× tolX, so a missing or misplaced term
// shows at once.
const (
	tolX = 1e-5 // box units: 1/800 of a cell
	tolV = 1e-4
	tolJ = 1e-5
	tolC = 1e-2
)

// diff is the largest difference between two particle sets, per field.
type diff struct {
	x, v, j, c float64
	worst      int // the particle with the largest position difference
}

// compare returns the largest per-field differences between got and want.
func compare(got, want []Particle) diff {
	var d diff
	for k := range want {
		g, w := got[k], want[k]
		for a := range 2 {
			if e := absDiff(g.X[a], w.X[a]); e > d.x || math.IsNaN(e) {
				d.x, d.worst = e, k
			}
			d.v = max(d.v, absDiff(g.V[a], w.V[a]))
			for b := range 2 {
				d.c = max(d.c, absDiff(g.C[a][b], w.C[a][b]))
			}
		}
		d.j = max(d.j, absDiff(g.J, w.J))
	}
	return d
}

// absDiff is |a - b| in float64; NaN when either is NaN.
func absDiff(a, b float32) float64 { return math.Abs(float64(a) - float64(b)) }

// check returns an error naming the first field whose difference exceeds
// its bound (a NaN exceeds every bound).
func (d diff) check() error {
	for _, f := range []struct {
		name     string
		got, tol float64
	}{{"position", d.x, tolX}, {"velocity", d.v, tolV}, {"J", d.j, tolJ}, {"C", d.c, tolC}} {
		if !(f.got <= f.tol) {
			return fmt.Errorf("qd's particles differ from plain Go's: %s by %.3g, more than the bound %.0e (particle %d's position differs by %.3g)",
				f.name, f.got, f.tol, d.worst, d.x)
		}
	}
	return nil
}

func (d diff) String() string {
	return fmt.Sprintf("max |Δx| %.2g (bound %.0e), |Δv| %.2g (%.0e), |ΔJ| %.2g (%.0e), |ΔC| %.2g (%.0e)",
		d.x, tolX, d.v, tolV, d.j, tolJ, d.c, tolC)
}
