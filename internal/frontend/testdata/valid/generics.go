package kernels

import "github.com/quadrants-go/qd"

type pair[T qd.Float] struct{ A, B T }

func (p pair[T]) Sum() T { return p.A + p.B }

func (p *pair[T]) Swap() { p.A, p.B = p.B, p.A }

func lerp[T qd.Float](a, b, t T) T { return a + T(t*(b-a)) }

// eps is decomp.go's precision test: folded once T is known.
func eps[T qd.Float]() T {
	e := T(0x1p-106)
	if T(1+1e-10) == 1 {
		e = 0x1p-48
	}
	return e
}

// helpers instantiates generic helpers and types, explicitly and by
// inference.
//
//qd:kernel
func helpers(x []float32, y []float64) {
	for i := range len(x) {
		p := pair[float32]{x[i], 2}
		p.Swap()
		x[i] = lerp(p.A, p.Sum(), 0.25) + eps[float32]()
		y[i] = lerp[float64](y[i], 1, 0.5) + eps[float64]()
	}
}

// saxpy is a generic kernel, instantiated by the test:
//
// instantiate saxpy[float32]
// instantiate saxpy[float64]
//
//qd:kernel
func saxpy[T qd.Float](a T, x, y []T) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i] + T(0.5)
	}
}

// norms is a generic kernel over a vector's element type.
//
// instantiate norms[float32]
//
//qd:kernel
func norms[T qd.Float](x, out []T) {
	for i := range len(x) {
		v := qd.Vec3[T]{x[i], 1, 2}
		out[i] = v.Cross(qd.Vec3[T]{0, 0, 1}).Norm2()
	}
}
