package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

type big [300]float32

// floats is named so that the composite literal's marker can follow its
// type: gofmt moves a comment written after "[" past the brackets.
type floats []float32

type P struct{ X float32 }

func (p P) Get() float32 { return p.X }

func (p *P) Set(v float32) { p.X = v }

func scale(p *P, s float32) { p.X *= s }

//qd:kernel
func k(x []float32, idx []int32) {
	for i := range len(x) {
		var b /* ERROR "variable b has type big of more than 256 scalars; kernels keep local values in registers: use an array parameter for larger data" */ big
		_ = b
		var m [9]qd.Mat3[float32]
		x[i] = m[idx /* ERROR "index is not a constant, and the array it indexes has 81 scalars, more than the 64 that one dynamic access may touch" */ [i]][0][0]
		var p P
		f /* ERROR "variable f has function type func() float32" */ := p. /* ERROR "method values are not supported in kernels; call the method" */ Get
		_ = f
		scale(& /* ERROR "pointer parameters are not supported in kernels; return the new value instead, or make scale a method with a pointer receiver" */ p, 2)
		( /* ERROR "method expressions with a pointer receiver are not supported in kernels" */ *P).Set(&p, 1)
		s /* ERROR "variable s has array type floats" */ := floats /* ERROR "slice literals are not supported in kernels; use a fixed-size array [N]T" */ {1, 2}
		_ = s
		q /* ERROR "variable q has pointer type *P" */ := & /* ERROR "& is only supported as &x[i], the first argument of a qd atomic" */ p
		_ = q
		type /* ERROR "type declarations are not supported in kernels; declare the type at the top level of the file" */ local struct{}
	}
}
