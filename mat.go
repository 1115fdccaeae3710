package qd

// Small square matrices for kernels, row-major: m[i][j] is row i, column j,
// so a composite literal reads as the matrix is written on paper:
//
//	m := qd.Mat2[float32]{{a, b}, {c, d}} // [a b; c d]
//
// As in vec.go, every product that feeds an addition is written T(x*y) so
// that Go cannot fuse it into an FMA natively, and loops index only with
// constants or with the variable of a range loop over a constant.
//
// Accuracy: Add, Sub and Scale round once per entry; MulVec, Mul and Trace
// sum separately rounded products left to right (error at most n-1 ulp of
// the sum of the absolute terms). Det expands by cofactors (Mat4: along the
// 2x2 minors of the first two rows), so it is accurate relative to the
// product of the entries' magnitudes, not to |Det|: for a nearly singular
// matrix Det is mostly rounding. Inv is the adjugate times 1/Det (one
// division); its relative error grows like the condition number times a few
// ulp, and a singular matrix (Det = 0) gives 1/Det = ±Inf, so every entry of
// Inv is ±Inf, or NaN where the adjugate entry is 0 (0·Inf) — never a
// panic. A kernel that must handle singular input tests Det first.

// Mat2 is a 2x2 matrix, row-major: m[i][j] is row i, column j.
type Mat2[T Float] [2][2]T

// Mat3 is a 3x3 matrix, row-major: m[i][j] is row i, column j.
type Mat3[T Float] [3][3]T

// Mat4 is a 4x4 matrix, row-major: m[i][j] is row i, column j.
type Mat4[T Float] [4][4]T

// Ident2 returns the 2x2 identity matrix.
func Ident2[T Float]() Mat2[T] { return Mat2[T]{{1, 0}, {0, 1}} }

// Ident3 returns the 3x3 identity matrix.
func Ident3[T Float]() Mat3[T] { return Mat3[T]{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} }

// Ident4 returns the 4x4 identity matrix.
func Ident4[T Float]() Mat4[T] {
	return Mat4[T]{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
}

// Diag2 returns the diagonal matrix with v on its diagonal.
func Diag2[T Float](v Vec2[T]) Mat2[T] { return Mat2[T]{{v[0], 0}, {0, v[1]}} }

// Diag3 returns the diagonal matrix with v on its diagonal.
func Diag3[T Float](v Vec3[T]) Mat3[T] {
	return Mat3[T]{{v[0], 0, 0}, {0, v[1], 0}, {0, 0, v[2]}}
}

// Diag4 returns the diagonal matrix with v on its diagonal.
func Diag4[T Float](v Vec4[T]) Mat4[T] {
	return Mat4[T]{{v[0], 0, 0, 0}, {0, v[1], 0, 0}, {0, 0, v[2], 0}, {0, 0, 0, v[3]}}
}

// ---- Mat2 ----

// Add returns a + b.
func (a Mat2[T]) Add(b Mat2[T]) Mat2[T] {
	return Mat2[T]{{a[0][0] + b[0][0], a[0][1] + b[0][1]}, {a[1][0] + b[1][0], a[1][1] + b[1][1]}}
}

// Sub returns a - b.
func (a Mat2[T]) Sub(b Mat2[T]) Mat2[T] {
	return Mat2[T]{{a[0][0] - b[0][0], a[0][1] - b[0][1]}, {a[1][0] - b[1][0], a[1][1] - b[1][1]}}
}

// Scale returns s·a.
func (a Mat2[T]) Scale(s T) Mat2[T] {
	return Mat2[T]{{T(a[0][0] * s), T(a[0][1] * s)}, {T(a[1][0] * s), T(a[1][1] * s)}}
}

// MulVec returns the matrix-vector product a·v.
func (a Mat2[T]) MulVec(v Vec2[T]) Vec2[T] {
	return Vec2[T]{
		T(a[0][0]*v[0]) + T(a[0][1]*v[1]),
		T(a[1][0]*v[0]) + T(a[1][1]*v[1]),
	}
}

// Mul returns the matrix product a·b.
func (a Mat2[T]) Mul(b Mat2[T]) Mat2[T] {
	var r Mat2[T]
	for i := range 2 {
		for j := range 2 {
			r[i][j] = T(a[i][0]*b[0][j]) + T(a[i][1]*b[1][j])
		}
	}
	return r
}

// T returns the transpose of a.
func (a Mat2[T]) T() Mat2[T] { return Mat2[T]{{a[0][0], a[1][0]}, {a[0][1], a[1][1]}} }

// Trace returns the sum of the diagonal entries.
func (a Mat2[T]) Trace() T { return a[0][0] + a[1][1] }

// Det returns the determinant a00·a11 - a01·a10.
func (a Mat2[T]) Det() T { return T(a[0][0]*a[1][1]) - T(a[0][1]*a[1][0]) }

// Inv returns the inverse of a, the adjugate times 1/Det. A singular matrix
// gives ±Inf and NaN entries (see the note at the top of mat.go).
func (a Mat2[T]) Inv() Mat2[T] {
	d := 1 / a.Det()
	adj := Mat2[T]{{a[1][1], -a[0][1]}, {-a[1][0], a[0][0]}}
	return adj.Scale(d)
}

// ---- Mat3 ----

// Add returns a + b.
func (a Mat3[T]) Add(b Mat3[T]) Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = a[i][j] + b[i][j]
		}
	}
	return r
}

// Sub returns a - b.
func (a Mat3[T]) Sub(b Mat3[T]) Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = a[i][j] - b[i][j]
		}
	}
	return r
}

// Scale returns s·a.
func (a Mat3[T]) Scale(s T) Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = T(a[i][j] * s)
		}
	}
	return r
}

// MulVec returns the matrix-vector product a·v.
func (a Mat3[T]) MulVec(v Vec3[T]) Vec3[T] {
	return Vec3[T]{
		T(a[0][0]*v[0]) + T(a[0][1]*v[1]) + T(a[0][2]*v[2]),
		T(a[1][0]*v[0]) + T(a[1][1]*v[1]) + T(a[1][2]*v[2]),
		T(a[2][0]*v[0]) + T(a[2][1]*v[1]) + T(a[2][2]*v[2]),
	}
}

// Mul returns the matrix product a·b.
func (a Mat3[T]) Mul(b Mat3[T]) Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = T(a[i][0]*b[0][j]) + T(a[i][1]*b[1][j]) + T(a[i][2]*b[2][j])
		}
	}
	return r
}

// T returns the transpose of a.
func (a Mat3[T]) T() Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = a[j][i]
		}
	}
	return r
}

// Trace returns the sum of the diagonal entries.
func (a Mat3[T]) Trace() T { return a[0][0] + a[1][1] + a[2][2] }

// Det returns the determinant, expanded along the first row.
func (a Mat3[T]) Det() T {
	c0 := T(a[1][1]*a[2][2]) - T(a[1][2]*a[2][1])
	c1 := T(a[1][2]*a[2][0]) - T(a[1][0]*a[2][2])
	c2 := T(a[1][0]*a[2][1]) - T(a[1][1]*a[2][0])
	return T(a[0][0]*c0) + T(a[0][1]*c1) + T(a[0][2]*c2)
}

// Inv returns the inverse of a, the adjugate times 1/Det. A singular matrix
// gives ±Inf and NaN entries (see the note at the top of mat.go).
func (a Mat3[T]) Inv() Mat3[T] {
	// The cofactors of the first row are the first column of the adjugate;
	// computing them once serves both the determinant and the inverse.
	c00 := T(a[1][1]*a[2][2]) - T(a[1][2]*a[2][1])
	c01 := T(a[1][2]*a[2][0]) - T(a[1][0]*a[2][2])
	c02 := T(a[1][0]*a[2][1]) - T(a[1][1]*a[2][0])
	d := 1 / (T(a[0][0]*c00) + T(a[0][1]*c01) + T(a[0][2]*c02))
	adj := Mat3[T]{
		{c00, T(a[0][2]*a[2][1]) - T(a[0][1]*a[2][2]), T(a[0][1]*a[1][2]) - T(a[0][2]*a[1][1])},
		{c01, T(a[0][0]*a[2][2]) - T(a[0][2]*a[2][0]), T(a[0][2]*a[1][0]) - T(a[0][0]*a[1][2])},
		{c02, T(a[0][1]*a[2][0]) - T(a[0][0]*a[2][1]), T(a[0][0]*a[1][1]) - T(a[0][1]*a[1][0])},
	}
	return adj.Scale(d)
}

// ---- Mat4 ----

// Add returns a + b.
func (a Mat4[T]) Add(b Mat4[T]) Mat4[T] {
	var r Mat4[T]
	for i := range 4 {
		for j := range 4 {
			r[i][j] = a[i][j] + b[i][j]
		}
	}
	return r
}

// Sub returns a - b.
func (a Mat4[T]) Sub(b Mat4[T]) Mat4[T] {
	var r Mat4[T]
	for i := range 4 {
		for j := range 4 {
			r[i][j] = a[i][j] - b[i][j]
		}
	}
	return r
}

// Scale returns s·a.
func (a Mat4[T]) Scale(s T) Mat4[T] {
	var r Mat4[T]
	for i := range 4 {
		for j := range 4 {
			r[i][j] = T(a[i][j] * s)
		}
	}
	return r
}

// MulVec returns the matrix-vector product a·v.
func (a Mat4[T]) MulVec(v Vec4[T]) Vec4[T] {
	var r Vec4[T]
	for i := range 4 {
		r[i] = T(a[i][0]*v[0]) + T(a[i][1]*v[1]) + T(a[i][2]*v[2]) + T(a[i][3]*v[3])
	}
	return r
}

// Mul returns the matrix product a·b.
func (a Mat4[T]) Mul(b Mat4[T]) Mat4[T] {
	var r Mat4[T]
	for i := range 4 {
		for j := range 4 {
			r[i][j] = T(a[i][0]*b[0][j]) + T(a[i][1]*b[1][j]) + T(a[i][2]*b[2][j]) + T(a[i][3]*b[3][j])
		}
	}
	return r
}

// T returns the transpose of a.
func (a Mat4[T]) T() Mat4[T] {
	var r Mat4[T]
	for i := range 4 {
		for j := range 4 {
			r[i][j] = a[j][i]
		}
	}
	return r
}

// Trace returns the sum of the diagonal entries.
func (a Mat4[T]) Trace() T { return a[0][0] + a[1][1] + a[2][2] + a[3][3] }

// minors4 returns the twelve 2x2 minors that Det and Inv of a Mat4 share:
// s[k] of rows 0 and 1 over the column pairs (0,1) (0,2) (0,3) (1,2) (1,3)
// (2,3), and c[k] of rows 2 and 3 over the complementary pairs, so that the
// Laplace expansion along the first two rows pairs s[k] with c[5-k].
func minors4[T Float](a Mat4[T]) (s, c [6]T) {
	s[0] = T(a[0][0]*a[1][1]) - T(a[1][0]*a[0][1])
	s[1] = T(a[0][0]*a[1][2]) - T(a[1][0]*a[0][2])
	s[2] = T(a[0][0]*a[1][3]) - T(a[1][0]*a[0][3])
	s[3] = T(a[0][1]*a[1][2]) - T(a[1][1]*a[0][2])
	s[4] = T(a[0][1]*a[1][3]) - T(a[1][1]*a[0][3])
	s[5] = T(a[0][2]*a[1][3]) - T(a[1][2]*a[0][3])
	c[5] = T(a[2][2]*a[3][3]) - T(a[3][2]*a[2][3])
	c[4] = T(a[2][1]*a[3][3]) - T(a[3][1]*a[2][3])
	c[3] = T(a[2][1]*a[3][2]) - T(a[3][1]*a[2][2])
	c[2] = T(a[2][0]*a[3][3]) - T(a[3][0]*a[2][3])
	c[1] = T(a[2][0]*a[3][2]) - T(a[3][0]*a[2][2])
	c[0] = T(a[2][0]*a[3][1]) - T(a[3][0]*a[2][1])
	return s, c
}

// det4 is the Laplace expansion along the first two rows.
func det4[T Float](s, c [6]T) T {
	return T(s[0]*c[5]) - T(s[1]*c[4]) + T(s[2]*c[3]) + T(s[3]*c[2]) - T(s[4]*c[1]) + T(s[5]*c[0])
}

// Det returns the determinant, by the Laplace expansion along the 2x2 minors
// of the first two rows.
func (a Mat4[T]) Det() T {
	s, c := minors4(a)
	return det4(s, c)
}

// Inv returns the inverse of a, the adjugate times 1/Det. A singular matrix
// gives ±Inf and NaN entries (see the note at the top of mat.go).
func (a Mat4[T]) Inv() Mat4[T] {
	s, c := minors4(a)
	d := 1 / det4(s, c)
	// Each adjugate entry is a cofactor: a 3x3 minor expanded along the
	// row it shares with the 2x2 minors of the other two rows.
	adj := Mat4[T]{
		{
			T(a[1][1]*c[5]) - T(a[1][2]*c[4]) + T(a[1][3]*c[3]),
			T(a[0][2]*c[4]) - T(a[0][1]*c[5]) - T(a[0][3]*c[3]),
			T(a[3][1]*s[5]) - T(a[3][2]*s[4]) + T(a[3][3]*s[3]),
			T(a[2][2]*s[4]) - T(a[2][1]*s[5]) - T(a[2][3]*s[3]),
		},
		{
			T(a[1][2]*c[2]) - T(a[1][0]*c[5]) - T(a[1][3]*c[1]),
			T(a[0][0]*c[5]) - T(a[0][2]*c[2]) + T(a[0][3]*c[1]),
			T(a[3][2]*s[2]) - T(a[3][0]*s[5]) - T(a[3][3]*s[1]),
			T(a[2][0]*s[5]) - T(a[2][2]*s[2]) + T(a[2][3]*s[1]),
		},
		{
			T(a[1][0]*c[4]) - T(a[1][1]*c[2]) + T(a[1][3]*c[0]),
			T(a[0][1]*c[2]) - T(a[0][0]*c[4]) - T(a[0][3]*c[0]),
			T(a[3][0]*s[4]) - T(a[3][1]*s[2]) + T(a[3][3]*s[0]),
			T(a[2][1]*s[2]) - T(a[2][0]*s[4]) - T(a[2][3]*s[0]),
		},
		{
			T(a[1][1]*c[1]) - T(a[1][0]*c[3]) - T(a[1][2]*c[0]),
			T(a[0][0]*c[3]) - T(a[0][1]*c[1]) + T(a[0][2]*c[0]),
			T(a[3][1]*s[1]) - T(a[3][0]*s[3]) - T(a[3][2]*s[0]),
			T(a[2][0]*s[3]) - T(a[2][1]*s[1]) + T(a[2][2]*s[0]),
		},
	}
	return adj.Scale(d)
}
