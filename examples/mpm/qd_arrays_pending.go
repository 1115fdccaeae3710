//go:build !qdstructs

package main

// This build stands in for qd_arrays.go while qd.NewNdarray takes only
// scalar elements (qd.Elem): Ndarrays of Particle and Cell do not compile
// yet, and the program must. qd.Compile of kernels.go fails before these are
// reached today; if it stops failing, newDeviceState says what to do.

import (
	"errors"

	"github.com/quadrants-go/qd"
)

// errNoStructArrays is newDeviceState's error in this build.
var errNoStructArrays = errors.New("qd.Compile accepts kernels.go, but this build of the example has no Ndarrays of structs: " +
	"build it with -tags qdstructs (qd.NewNdarray[Particle] needs qd.Elem to admit structs), " +
	"and then delete qd_arrays_pending.go")

type deviceState struct{}

func newDeviceState(*qd.Program, []Particle) (*deviceState, error) { return nil, errNoStructArrays }

func (*deviceState) args() (ps, grid any) { return nil, nil }

func (*deviceState) read([]Particle) error { return errNoStructArrays }

func (*deviceState) reset([]Particle) error { return errNoStructArrays }
