package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

var _ = math.Pi
var _ = qd.Sqrt[float32]

// counts is named so that the composite literal's marker can follow its
// type: gofmt moves a comment written after "map" inside the brackets.
type counts map[int]int

//qd:kernel
func k(x []float32) {
	m /* ERROR "variable m has map type" */ := counts /* ERROR "maps are not supported in kernels" */ {}
	_ = m
}
