package qd_test

import (
	"fmt"

	"github.com/quadrants-go/qd"
)

// Vectors are values: every method returns a new one.
func ExampleVec3() {
	a := qd.Vec3[float32]{1, 0, 0}
	b := qd.Vec3[float32]{0, 2, 0}
	fmt.Println(a.Add(b).Scale(2))
	fmt.Println(a.Dot(b), a.Cross(b), b.Norm(), b.Normalized())
	fmt.Println(qd.Vec3[float32]{}.Normalized()) // the zero vector stays zero
	// Output:
	// [2 4 0]
	// 0 [0 0 2] 2 [0 1 0]
	// [0 0 0]
}

// Matrices are row-major: m[i][j] is row i, column j, as the literal reads.
func ExampleMat3() {
	m := qd.Mat3[float64]{
		{2, 0, 0},
		{0, 3, 1},
		{0, 0, 1},
	}
	v := qd.Vec3[float64]{1, 1, 1}
	fmt.Println(m.MulVec(v), m.Det(), m.Trace())
	fmt.Println(m.Inv().Mul(m) == qd.Ident3[float64]())
	fmt.Println(m.T()[1])
	// Output:
	// [2 4 1] 6 6
	// true
	// [0 3 0]
}

// SVD3 factors a deformation gradient into rotations and stretches: the
// last singular value carries the sign of the determinant, so u and v stay
// rotations even for an inverted element.
func ExampleSVD3() {
	f := qd.Mat3[float64]{
		{0, -2, 0}, // a quarter turn about z after stretching x by 2
		{1, 0, 0},
		{0, 0, -0.5}, // and flipping z: det < 0
	}
	u, s, v := qd.SVD3(f)
	fmt.Printf("s = [%.3f %.3f %.3f]\n", s[0], s[1], s[2])
	fmt.Printf("det u = %.3f, det v = %.3f\n", u.Det(), v.Det())
	back := u.Mul(qd.Diag3(s)).Mul(v.T())
	fmt.Printf("u·diag(s)·vᵀ row 0 = [%.3f %.3f %.3f]\n", back[0][0], back[0][1], back[0][2])

	r, _ := qd.PolarDecompose3(f)
	fmt.Printf("polar rotation det = %.3f\n", r.Det())
	// Output:
	// s = [2.000 1.000 -0.500]
	// det u = 1.000, det v = 1.000
	// u·diag(s)·vᵀ row 0 = [0.000 -2.000 0.000]
	// polar rotation det = 1.000
}

// A Rand per element and a fixed seed: the same numbers on every backend,
// whatever the launch shape, and in the native run.
func ExampleRand() {
	noise := make([]float32, 4)
	for i := range noise { // in a kernel, the parallel loop
		r := qd.NewRand(2026, uint64(i)) // stream i for element i
		noise[i] = r.NormFloat32()
	}
	fmt.Printf("%.4f\n", noise)

	r := qd.NewRand(0, 0)
	fmt.Printf("%08x\n", r.Uint32()) // Random123's known answer for key 0, counter 0
	fmt.Printf("%.6f %.6f\n", r.Float32(), r.Float64())
	// Output:
	// [-1.2845 0.6156 -1.2892 0.5517]
	// 6627e8d5
	// 0.880520 0.735713
}
