package frontend

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/lower"
)

// kernelValues100 is a kernel of about 100 lines (from //qd:kernel to the
// closing brace, with its helpers and types) in the style of an MLS-MPM
// substep: particles as structs of qd.Vec2 and qd.Mat2, a quadratic
// B-spline stencil in fixed arrays, a polar decomposition per particle and
// a grid update, for the compile-time bar of kernels with values.
const kernelValues100 = `package kernels

import "github.com/quadrants-go/qd"

type Vec = qd.Vec2[float32]
type Mat = qd.Mat2[float32]

type particle struct {
	X, V Vec
	C, F Mat
	J    float32
}

type stencil struct {
	Base [2]int
	W    [3]Vec
	Fx   Vec
}

const (
	dx    = 1.0 / 64
	invDx = 64.0
	mu    = 0.3
	la    = 0.2
)

func weights(x Vec) stencil {
	var s stencil
	for d := range 2 {
		b := int(x[d]*invDx - 0.5)
		s.Base[d] = b
		s.Fx[d] = x[d]*invDx - float32(b)
	}
	for d := range 2 {
		f := s.Fx[d]
		s.W[0][d] = 0.5 * (1.5 - f) * (1.5 - f)
		s.W[1][d] = 0.75 - (f-1)*(f-1)
		s.W[2][d] = 0.5 * (f - 0.5) * (f - 0.5)
	}
	return s
}

func (p *particle) stress(dt float32) Mat {
	r, _ := qd.PolarDecompose2(p.F)
	e := p.F.Sub(r).Scale(2 * mu)
	ft := p.F.T()
	st := e.Mul(ft).Add(qd.Ident2[float32]().Scale(la * p.J * (p.J - 1)))
	return st.Scale(-dt * 4 * invDx * invDx)
}

func (p *particle) advance(dt float32, v Vec, c Mat) {
	p.V = v
	p.C = c
	p.X = p.X.Add(v.Scale(dt))
	p.F = qd.Ident2[float32]().Add(c.Scale(dt)).Mul(p.F)
	p.J *= 1 + dt*c.Trace()
}

//qd:kernel
func substep(dt float32, xs, vs [][]float32, fs [][]float32, gridV, gridM [][]float32, n int) {
	for i := range n {
		p := particle{X: Vec{xs[i][0], xs[i][1]}, V: Vec{vs[i][0], vs[i][1]}, J: fs[i][4]}
		p.F = Mat{{fs[i][0], fs[i][1]}, {fs[i][2], fs[i][3]}}
		s := weights(p.X)
		aff := p.stress(dt).Add(p.C)
		for a := range 3 {
			for b := range 3 {
				w := s.W[a][0] * s.W[b][1]
				dpos := Vec{(float32(a) - s.Fx[0]) * dx, (float32(b) - s.Fx[1]) * dx}
				mom := p.V.Add(aff.MulVec(dpos)).Scale(w)
				gi, gj := s.Base[0]+a, s.Base[1]+b
				if gi < 0 || gj < 0 || gi >= len(gridM) || gj >= len(gridM[0]) {
					continue
				}
				qd.AtomicAdd(&gridV[gi][2*gj], mom[0])
				qd.AtomicAdd(&gridV[gi][2*gj+1], mom[1])
				qd.AtomicAdd(&gridM[gi][gj], w)
			}
		}
	}
	for i, j := range qd.NDRange(len(gridM), len(gridM[0])) {
		m := gridM[i][j]
		if m <= 0 {
			continue
		}
		v := Vec{gridV[i][2*j], gridV[i][2*j+1]}.Scale(1 / m)
		v[1] -= dt * 9.8
		if i < 3 && v[0] < 0 || i > len(gridM)-3 && v[0] > 0 {
			v[0] = 0
		}
		if j < 3 && v[1] < 0 || j > len(gridM[0])-3 && v[1] > 0 {
			v[1] = 0
		}
		gridV[i][2*j], gridV[i][2*j+1] = v[0], v[1]
	}
	for i := range n {
		p := particle{X: Vec{xs[i][0], xs[i][1]}, J: fs[i][4]}
		p.F = Mat{{fs[i][0], fs[i][1]}, {fs[i][2], fs[i][3]}}
		s := weights(p.X)
		var v Vec
		var c Mat
		for a := range 3 {
			for b := range 3 {
				gi, gj := s.Base[0]+a, s.Base[1]+b
				if gi < 0 || gj < 0 || gi >= len(gridM) || gj >= len(gridM[0]) {
					continue
				}
				w := s.W[a][0] * s.W[b][1]
				g := Vec{gridV[gi][2*gj], gridV[gi][2*gj+1]}
				dpos := Vec{float32(a) - s.Fx[0], float32(b) - s.Fx[1]}
				v = v.Add(g.Scale(w))
				c = c.Add(g.Outer(dpos).Scale(4 * invDx * w))
			}
		}
		p.advance(dt, v, c)
		xs[i][0], xs[i][1], vs[i][0], vs[i][1] = p.X[0], p.X[1], p.V[0], p.V[1]
		fs[i][0], fs[i][1], fs[i][2], fs[i][3], fs[i][4] = p.F[0][0], p.F[0][1], p.F[1][0], p.F[1][1], p.J
	}
}
`

// TestValues100Lines checks that the benchmark's kernel is the size it
// says, compiles, and unrolls its stencil loops.
func TestValues100Lines(t *testing.T) {
	src := kernelValues100[strings.Index(kernelValues100, "type Vec"):]
	if n := strings.Count(src, "\n"); n < 90 || n > 130 {
		t.Errorf("the kernel has %d lines", n)
	}
	ks, err := Parse("substep.go", []byte(kernelValues100))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		checkKernel(t, k)
	}
}

// BenchmarkCompileValues100PTX measures source → PTX text for sm_90 of the
// 100-line kernel of values (the bar: 10 ms): Parse, with the library's
// inlining and the stencils' unrolling, lower.Lower and ptx.Generate.
func BenchmarkCompileValues100PTX(b *testing.B) {
	target, err := ptx.TargetFor(90, 12040)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ks, err := Parse("substep.go", []byte(kernelValues100))
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range ks {
			plan, err := lower.Lower(k)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := ptx.Generate(plan, target, ptx.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
