package main

// The device arrays of the qd run: Ndarrays of struct elements, in Go's
// layout, which the kernels' []Particle and [][]Cell parameters share.

import "github.com/quadrants-go/qd"

// deviceState holds the particles and the grid in device memory.
type deviceState struct {
	ps   *qd.Ndarray[Particle]
	grid *qd.Ndarray[Cell]
}

// newDeviceState allocates the arrays (the Program closes them) and copies
// the particles in.
func newDeviceState(p *qd.Program, start []Particle) (*deviceState, error) {
	ps, err := qd.NewNdarray[Particle](p, len(start))
	if err != nil {
		return nil, err
	}
	grid, err := qd.NewNdarray[Cell](p, nGrid, nGrid) // zero-filled
	if err != nil {
		return nil, err
	}
	if err := ps.CopyFromHost(start); err != nil {
		return nil, err
	}
	return &deviceState{ps, grid}, nil
}

// args returns the kernels' arguments: the particles and the grid.
func (d *deviceState) args() (ps, grid any) { return d.ps, d.grid }

// read copies the particles into dst once every write enqueued before has run.
func (d *deviceState) read(dst []Particle) error { return d.ps.CopyToHost(dst) }

// reset copies start into the particles again; the grid needs nothing, as
// every substep clears it first.
func (d *deviceState) reset(start []Particle) error { return d.ps.CopyFromHost(start) }
