package kernels

import "github.com/quadrants-go/qd"

type base struct{ X, Y float32 }

func (b base) Len2() float32 { return b.X*b.X + b.Y*b.Y }

func (b *base) Grow(f float32) { b.X *= f; b.Y *= f }

type derived struct {
	base
	Z    float32
	Flag [2]bool
}

type Shape interface{ Area() float32 }

type sq struct{ S float32 }

func (s sq) Area() float32 { return s.S * s.S }

func total[T Shape](s T) float32 { return s.Area() + s.Area() }

func named(n int) (m qd.Mat2[float32], ok bool) {
	for i := range 2 {
		if i >= n {
			return
		}
		m[i][i] = float32(i + 1)
	}
	ok = true
	return
}

func touch(v qd.Vec2[float32]) float32 {
	v.Normalized()
	return v[0]
}

// edges: zero-size and anonymous values, embedded fields and promoted
// methods, methods through a constraint, method expressions, named
// results with bare returns, multi-value var declarations, and pointer
// receivers on dynamic elements and through embedding.
//
//qd:kernel
func edges(x []float32, j []int32, b []bool) {
	for i := range len(x) {
		var z [0]float32
		var e struct{}
		var anon struct{ A, B float32 }
		anon.B = x[i]
		d := derived{base: base{1, 2}, Z: 3}
		d.Grow(2)
		d.Flag[j[i]%2] = true
		b[i] = d.Flag[1] && e == struct{}{} && len(z) == 0
		s := qd.Vec3[float32].Add(qd.Vec3[float32]{1, 2, 3}, qd.Vec3[float32]{x[i], 0, 0})
		(&d).Grow(0.5)
		var grid [2][3]qd.Vec2[float32]
		grid[j[i]%2][j[i]%3][1] += x[i]
		grid[1][2] = grid[j[i]%2][0]
		m, ok := named(int(j[i]))
		var u, w = named(1)
		if !ok || !w {
			m = u
		}
		x[i] = d.Len2() + d.X + anon.B + s[0] + total(sq{x[i]}) + grid[1][2][1] + m[1][1] + touch(qd.Vec2[float32]{x[i], 1})
		for n, v := range grid[0] {
			v.Normalized()
			x[i] += v[1] * float32(n)
		}
		var k2 [2]derived
		k2[j[i]%2].Grow(3)
		x[i] += k2[0].X + k2[1].base.Len2()
	}
}
