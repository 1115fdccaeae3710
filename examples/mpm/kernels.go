package main

// The kernels of one substep of the MLS-MPM fluid (Hu et al., "A moving
// least squares material point method with displacement discontinuity and
// two-way rigid body coupling", SIGGRAPH 2018), in the shape of its 88-line
// 2-D demonstration. Particles carry a position, a velocity, the APIC affine
// matrix C and the volume ratio J of a weakly compressible fluid; a substep
// clears the grid, scatters the particles to it (p2g), updates its velocities
// (gridUpdate) and gathers them back into the particles (g2p).
//
// This file is ordinary Go: it compiles with the example, whose reference
// calls these kernels as plain Go, serially, and main.go embeds its text for
// qd.Compile, which runs the same functions in parallel.

import "github.com/quadrants-go/qd"

// The simulation's constants: a unit box [0, 1]² of nGrid² cells.
const (
	nGrid   = 128
	dx      = 1.0 / nGrid
	invDx   = nGrid
	dt      = 2e-4 // the 88-line version's time step for 8192 particles on 128² cells
	pVol    = (dx * 0.5) * (dx * 0.5)
	pRho    = 1
	pMass   = pVol * pRho
	gravity = 9.8
	bound   = 3   // the walls: cells within bound of an edge lose velocity into it
	bulkE   = 400 // stiffness of the equation of state: pressure is bulkE·(1 - J)

	// stressCoef turns J - 1 into the stress part of P2G's affine matrix:
	// -dt · vol · D⁻¹ · E(J - 1), where D⁻¹ = 4/dx² for quadratic B-splines.
	stressCoef = -dt * pVol * 4 * invDx * invDx * bulkE
	// apicScale is D⁻¹ again: it turns Σ w·v·dposᵀ into the affine matrix C.
	apicScale = 4 * invDx * invDx
)

// Particle is one particle of fluid.
type Particle struct {
	X, V qd.Vec2[float32] // position and velocity
	C    qd.Mat2[float32] // APIC: the affine velocity field around the particle
	J    float32          // volume ratio: volume now over volume at rest
}

// Cell is one node of the grid: its momentum, then its velocity once
// gridUpdate has run, and its mass.
type Cell struct {
	V qd.Vec2[float32]
	M float32
}

// splat returns the vector (s, s).
func splat(s float32) qd.Vec2[float32] { return qd.Vec2[float32]{s, s} }

// stencil returns the 3×3 nodes that a particle at x touches: the lower-left
// one (bi, bj), x's offset fx from it in cells (each component in [0.5,
// 1.5)), and the quadratic B-spline weights: w[k][a] is the weight of node
// b+k along axis a.
func stencil(x qd.Vec2[float32]) (bi, bj int, fx qd.Vec2[float32], w [3]qd.Vec2[float32]) {
	xg := x.Scale(invDx)
	bi, bj = int(xg[0]-0.5), int(xg[1]-0.5) // truncation is floor here: x > 0
	fx = xg.Sub(qd.Vec2[float32]{float32(bi), float32(bj)})
	a := splat(1.5).Sub(fx)
	b := fx.Sub(splat(1))
	c := fx.Sub(splat(0.5))
	w = [3]qd.Vec2[float32]{a.Mul(a).Scale(0.5), splat(0.75).Sub(b.Mul(b)), c.Mul(c).Scale(0.5)}
	return bi, bj, fx, w
}

// clearGrid zeroes every node before p2g adds to them.
//
//qd:kernel
func clearGrid(grid [][]Cell) {
	for i, j := range qd.NDRange(len(grid), len(grid[0])) {
		grid[i][j] = Cell{}
	}
}

// p2g scatters each particle's mass and momentum to its 3×3 nodes: its own
// momentum, plus what its affine field C and its pressure carry to each
// node's offset. Neighbouring particles add to the same nodes at once, hence
// the atomics.
//
//qd:kernel
func p2g(ps []Particle, grid [][]Cell) {
	for p := range len(ps) {
		q := ps[p]
		bi, bj, fx, w := stencil(q.X)
		stress := stressCoef * (q.J - 1)
		affine := qd.Mat2[float32]{{stress, 0}, {0, stress}}.Add(q.C.Scale(pMass))
		mv := q.V.Scale(pMass)
		for i := range 3 {
			for j := range 3 {
				dpos := qd.Vec2[float32]{float32(i), float32(j)}.Sub(fx).Scale(dx)
				wt := w[i][0] * w[j][1]
				dv := mv.Add(affine.MulVec(dpos)).Scale(wt)
				// One atomic add per component of the momentum. A Cell is
				// 12 bytes, so V stays two scalar adds in PTX; a 16-byte
				// Cell would make it one red.global.add.v2.f32 on sm_90.
				qd.AtomicAddVec(&grid[bi+i][bj+j].V, dv)
				qd.AtomicAdd(&grid[bi+i][bj+j].M, wt*pMass)
			}
		}
	}
}

// gridUpdate turns each node's momentum into a velocity, adds gravity, and
// stops motion into the walls: within bound cells of a wall, a velocity
// component towards it becomes 0 (the fluid slides along the wall).
//
//qd:kernel
func gridUpdate(grid [][]Cell) {
	for i, j := range qd.NDRange(len(grid), len(grid[0])) {
		c := grid[i][j]
		v := c.V
		if c.M > 0 {
			v = qd.Vec2[float32]{v[0] / c.M, v[1] / c.M}
		}
		v[1] -= dt * gravity
		if (i < bound && v[0] < 0) || (i > nGrid-bound && v[0] > 0) {
			v[0] = 0
		}
		if (j < bound && v[1] < 0) || (j > nGrid-bound && v[1] > 0) {
			v[1] = 0
		}
		grid[i][j].V = v
	}
}

// g2p gathers each particle's new velocity and affine matrix from its 3×3
// nodes, moves the particle, and scales J by the velocity field's divergence
// (the trace of C) over the substep.
//
//qd:kernel
func g2p(ps []Particle, grid [][]Cell) {
	for p := range len(ps) {
		q := ps[p]
		bi, bj, fx, w := stencil(q.X)
		var v qd.Vec2[float32]
		var c qd.Mat2[float32]
		for i := range 3 {
			for j := range 3 {
				dpos := qd.Vec2[float32]{float32(i), float32(j)}.Sub(fx).Scale(dx)
				wt := w[i][0] * w[j][1]
				gv := grid[bi+i][bj+j].V
				v = v.Add(gv.Scale(wt))
				c = c.Add(gv.Outer(dpos).Scale(wt * apicScale))
			}
		}
		q.V = v
		q.X = q.X.Add(v.Scale(dt))
		q.J *= 1 + dt*c.Trace()
		q.C = c
		ps[p] = q
	}
}
