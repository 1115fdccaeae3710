package qd

// Small vectors for kernels: Vec2, Vec3 and Vec4 are fixed arrays of a float
// type with value-receiver methods that return new values, so that a kernel
// (and the same function run natively) writes a.Add(b).Scale(2) where CUDA
// C++ would write (a + b) * 2. Go has no operator overloading; methods are
// the next best thing, and the compiler inlines them into scalar registers.
//
// Every body here stays inside the kernel language: constant indices,
// composite literals, calls of qd math and of this library. Every product
// that feeds an addition is written T(x*y): the explicit conversion forbids Go
// from fusing it into an FMA (which it may do on arm64, ppc64, s390x, riscv64
// and amd64 v3), so the native result is the one that separately rounded
// multiplies and adds give, which is what the GPU code computes.
//
// Accuracy: Add, Sub, Mul, Div, Scale, Neg, Min, Max and Abs are exact per
// component up to the one rounding of the operation (Neg, Min, Max, Abs are
// exact). Dot, Sum and Norm2 sum left to right with separately rounded
// terms: the error is at most (n-1) ulp of the sum of the absolute terms.
// Norm is Sqrt(Norm2) and Normalized multiplies by 1/Norm; neither scales
// its input, so squares of components above about 1e154 (float64) or 1e19
// (float32) overflow to +Inf and squares below about 1e-162 or 1e-23 lose
// precision in the subnormal range.

// Vec2 is a 2-component vector (x, y).
type Vec2[T Float] [2]T

// Vec3 is a 3-component vector (x, y, z).
type Vec3[T Float] [3]T

// Vec4 is a 4-component vector (x, y, z, w).
type Vec4[T Float] [4]T

// ---- Vec2 ----

// Add returns a + b.
func (a Vec2[T]) Add(b Vec2[T]) Vec2[T] { return Vec2[T]{a[0] + b[0], a[1] + b[1]} }

// Sub returns a - b.
func (a Vec2[T]) Sub(b Vec2[T]) Vec2[T] { return Vec2[T]{a[0] - b[0], a[1] - b[1]} }

// Mul returns the component-wise product of a and b.
func (a Vec2[T]) Mul(b Vec2[T]) Vec2[T] { return Vec2[T]{T(a[0] * b[0]), T(a[1] * b[1])} }

// Div returns the component-wise quotient a / b (IEEE: x/0 is ±Inf or NaN).
func (a Vec2[T]) Div(b Vec2[T]) Vec2[T] { return Vec2[T]{a[0] / b[0], a[1] / b[1]} }

// Scale returns s·a.
func (a Vec2[T]) Scale(s T) Vec2[T] { return Vec2[T]{T(a[0] * s), T(a[1] * s)} }

// Neg returns -a.
func (a Vec2[T]) Neg() Vec2[T] { return Vec2[T]{-a[0], -a[1]} }

// Dot returns the dot product a·b.
func (a Vec2[T]) Dot(b Vec2[T]) T { return T(a[0]*b[0]) + T(a[1]*b[1]) }

// Cross returns a[0]·b[1] - a[1]·b[0], the z component of the 3-D cross
// product of (a, 0) and (b, 0): positive when b is counter-clockwise of a.
func (a Vec2[T]) Cross(b Vec2[T]) T { return T(a[0]*b[1]) - T(a[1]*b[0]) }

// Norm2 returns the squared Euclidean length a·a.
func (a Vec2[T]) Norm2() T { return T(a[0]*a[0]) + T(a[1]*a[1]) }

// Norm returns the Euclidean length of a, Sqrt(a·a) (no scaling: see the
// range note at the top of vec.go).
func (a Vec2[T]) Norm() T { return Sqrt(a.Norm2()) }

// Normalized returns a/|a|, computed as a·(1/|a|) (within 3 ulp per
// component). The zero vector gives the zero vector, never NaN.
func (a Vec2[T]) Normalized() Vec2[T] {
	n := a.Norm()
	if n == 0 {
		return Vec2[T]{}
	}
	return a.Scale(1 / n)
}

// Min returns the component-wise minimum of a and b (Go's min: NaN if either
// is NaN).
func (a Vec2[T]) Min(b Vec2[T]) Vec2[T] { return Vec2[T]{min(a[0], b[0]), min(a[1], b[1])} }

// Max returns the component-wise maximum of a and b (Go's max: NaN if either
// is NaN).
func (a Vec2[T]) Max(b Vec2[T]) Vec2[T] { return Vec2[T]{max(a[0], b[0]), max(a[1], b[1])} }

// Abs returns the component-wise absolute value of a.
func (a Vec2[T]) Abs() Vec2[T] { return Vec2[T]{Abs(a[0]), Abs(a[1])} }

// Sum returns a[0] + a[1].
func (a Vec2[T]) Sum() T { return a[0] + a[1] }

// Outer returns the outer product a·bᵀ: m[i][j] = a[i]·b[j].
func (a Vec2[T]) Outer(b Vec2[T]) Mat2[T] {
	return Mat2[T]{
		{T(a[0] * b[0]), T(a[0] * b[1])},
		{T(a[1] * b[0]), T(a[1] * b[1])},
	}
}

// ---- Vec3 ----

// Add returns a + b.
func (a Vec3[T]) Add(b Vec3[T]) Vec3[T] { return Vec3[T]{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Sub returns a - b.
func (a Vec3[T]) Sub(b Vec3[T]) Vec3[T] { return Vec3[T]{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Mul returns the component-wise product of a and b.
func (a Vec3[T]) Mul(b Vec3[T]) Vec3[T] {
	return Vec3[T]{T(a[0] * b[0]), T(a[1] * b[1]), T(a[2] * b[2])}
}

// Div returns the component-wise quotient a / b (IEEE: x/0 is ±Inf or NaN).
func (a Vec3[T]) Div(b Vec3[T]) Vec3[T] { return Vec3[T]{a[0] / b[0], a[1] / b[1], a[2] / b[2]} }

// Scale returns s·a.
func (a Vec3[T]) Scale(s T) Vec3[T] { return Vec3[T]{T(a[0] * s), T(a[1] * s), T(a[2] * s)} }

// Neg returns -a.
func (a Vec3[T]) Neg() Vec3[T] { return Vec3[T]{-a[0], -a[1], -a[2]} }

// Dot returns the dot product a·b.
func (a Vec3[T]) Dot(b Vec3[T]) T { return T(a[0]*b[0]) + T(a[1]*b[1]) + T(a[2]*b[2]) }

// Cross returns the cross product a×b (right-handed: x×y = z).
func (a Vec3[T]) Cross(b Vec3[T]) Vec3[T] {
	return Vec3[T]{
		T(a[1]*b[2]) - T(a[2]*b[1]),
		T(a[2]*b[0]) - T(a[0]*b[2]),
		T(a[0]*b[1]) - T(a[1]*b[0]),
	}
}

// Norm2 returns the squared Euclidean length a·a.
func (a Vec3[T]) Norm2() T { return T(a[0]*a[0]) + T(a[1]*a[1]) + T(a[2]*a[2]) }

// Norm returns the Euclidean length of a, Sqrt(a·a) (no scaling: see the
// range note at the top of vec.go).
func (a Vec3[T]) Norm() T { return Sqrt(a.Norm2()) }

// Normalized returns a/|a|, computed as a·(1/|a|) (within 3 ulp per
// component). The zero vector gives the zero vector, never NaN.
func (a Vec3[T]) Normalized() Vec3[T] {
	n := a.Norm()
	if n == 0 {
		return Vec3[T]{}
	}
	return a.Scale(1 / n)
}

// Min returns the component-wise minimum of a and b (Go's min: NaN if either
// is NaN).
func (a Vec3[T]) Min(b Vec3[T]) Vec3[T] {
	return Vec3[T]{min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2])}
}

// Max returns the component-wise maximum of a and b (Go's max: NaN if either
// is NaN).
func (a Vec3[T]) Max(b Vec3[T]) Vec3[T] {
	return Vec3[T]{max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2])}
}

// Abs returns the component-wise absolute value of a.
func (a Vec3[T]) Abs() Vec3[T] { return Vec3[T]{Abs(a[0]), Abs(a[1]), Abs(a[2])} }

// Sum returns a[0] + a[1] + a[2].
func (a Vec3[T]) Sum() T { return a[0] + a[1] + a[2] }

// Outer returns the outer product a·bᵀ: m[i][j] = a[i]·b[j].
func (a Vec3[T]) Outer(b Vec3[T]) Mat3[T] {
	return Mat3[T]{
		{T(a[0] * b[0]), T(a[0] * b[1]), T(a[0] * b[2])},
		{T(a[1] * b[0]), T(a[1] * b[1]), T(a[1] * b[2])},
		{T(a[2] * b[0]), T(a[2] * b[1]), T(a[2] * b[2])},
	}
}

// ---- Vec4 ----

// Add returns a + b.
func (a Vec4[T]) Add(b Vec4[T]) Vec4[T] {
	return Vec4[T]{a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]}
}

// Sub returns a - b.
func (a Vec4[T]) Sub(b Vec4[T]) Vec4[T] {
	return Vec4[T]{a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]}
}

// Mul returns the component-wise product of a and b.
func (a Vec4[T]) Mul(b Vec4[T]) Vec4[T] {
	return Vec4[T]{T(a[0] * b[0]), T(a[1] * b[1]), T(a[2] * b[2]), T(a[3] * b[3])}
}

// Div returns the component-wise quotient a / b (IEEE: x/0 is ±Inf or NaN).
func (a Vec4[T]) Div(b Vec4[T]) Vec4[T] {
	return Vec4[T]{a[0] / b[0], a[1] / b[1], a[2] / b[2], a[3] / b[3]}
}

// Scale returns s·a.
func (a Vec4[T]) Scale(s T) Vec4[T] {
	return Vec4[T]{T(a[0] * s), T(a[1] * s), T(a[2] * s), T(a[3] * s)}
}

// Neg returns -a.
func (a Vec4[T]) Neg() Vec4[T] { return Vec4[T]{-a[0], -a[1], -a[2], -a[3]} }

// Dot returns the dot product a·b.
func (a Vec4[T]) Dot(b Vec4[T]) T {
	return T(a[0]*b[0]) + T(a[1]*b[1]) + T(a[2]*b[2]) + T(a[3]*b[3])
}

// Norm2 returns the squared Euclidean length a·a.
func (a Vec4[T]) Norm2() T {
	return T(a[0]*a[0]) + T(a[1]*a[1]) + T(a[2]*a[2]) + T(a[3]*a[3])
}

// Norm returns the Euclidean length of a, Sqrt(a·a) (no scaling: see the
// range note at the top of vec.go).
func (a Vec4[T]) Norm() T { return Sqrt(a.Norm2()) }

// Normalized returns a/|a|, computed as a·(1/|a|) (within 3 ulp per
// component). The zero vector gives the zero vector, never NaN.
func (a Vec4[T]) Normalized() Vec4[T] {
	n := a.Norm()
	if n == 0 {
		return Vec4[T]{}
	}
	return a.Scale(1 / n)
}

// Min returns the component-wise minimum of a and b (Go's min: NaN if either
// is NaN).
func (a Vec4[T]) Min(b Vec4[T]) Vec4[T] {
	return Vec4[T]{min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])}
}

// Max returns the component-wise maximum of a and b (Go's max: NaN if either
// is NaN).
func (a Vec4[T]) Max(b Vec4[T]) Vec4[T] {
	return Vec4[T]{max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])}
}

// Abs returns the component-wise absolute value of a.
func (a Vec4[T]) Abs() Vec4[T] { return Vec4[T]{Abs(a[0]), Abs(a[1]), Abs(a[2]), Abs(a[3])} }

// Sum returns a[0] + a[1] + a[2] + a[3].
func (a Vec4[T]) Sum() T { return a[0] + a[1] + a[2] + a[3] }

// Outer returns the outer product a·bᵀ: m[i][j] = a[i]·b[j].
func (a Vec4[T]) Outer(b Vec4[T]) Mat4[T] {
	var m Mat4[T]
	for i := range 4 {
		for j := range 4 {
			m[i][j] = T(a[i] * b[j])
		}
	}
	return m
}
