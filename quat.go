package qd

// Quat is a quaternion stored as (x, y, z, w): q[0..2] is the vector
// (imaginary) part and q[3] the scalar part, the layout of Warp, Eigen's
// coefficients and most physics engines, so that a Quat read from or written
// to an array matches theirs. A unit quaternion represents the rotation by
// angle θ about the unit axis n as (n·sin(θ/2), cos(θ/2)); q and -q are the
// same rotation.
//
// Accuracy: Mul, Conj, Rotate and Mat3 use only separately rounded + - *
// (bit-identical between the native run and the GPU); Norm and Normalized add
// one [Sqrt] (correctly rounded everywhere). [QuatFromAxisAngle] calls qd.Sin and
// qd.Cos, which on a GPU are within the ulp bounds of docs/accuracy.md but not
// bit-identical to Go's math.
type Quat[T Float] [4]T

// QuatIdent returns the identity rotation (0, 0, 0, 1).
func QuatIdent[T Float]() Quat[T] { return Quat[T]{0, 0, 0, 1} }

// QuatFromAxisAngle returns the unit quaternion of the rotation by angle
// (radians, counter-clockwise looking down the axis towards the origin)
// about axis. The axis is normalized first, so it need not be unit; a zero
// axis gives (0, 0, 0, cos(angle/2)), which is not a rotation.
func QuatFromAxisAngle[T Float](axis Vec3[T], angle T) Quat[T] {
	n := axis.Normalized()
	h := angle / 2
	s := Sin(h)
	return Quat[T]{T(n[0] * s), T(n[1] * s), T(n[2] * s), Cos(h)}
}

// Mul returns the Hamilton product q·p: the rotation p followed by q.
func (q Quat[T]) Mul(p Quat[T]) Quat[T] {
	return Quat[T]{
		T(q[3]*p[0]) + T(q[0]*p[3]) + T(q[1]*p[2]) - T(q[2]*p[1]),
		T(q[3]*p[1]) - T(q[0]*p[2]) + T(q[1]*p[3]) + T(q[2]*p[0]),
		T(q[3]*p[2]) + T(q[0]*p[1]) - T(q[1]*p[0]) + T(q[2]*p[3]),
		T(q[3]*p[3]) - T(q[0]*p[0]) - T(q[1]*p[1]) - T(q[2]*p[2]),
	}
}

// Conj returns the conjugate (-x, -y, -z, w): for a unit quaternion, the
// inverse rotation.
func (q Quat[T]) Conj() Quat[T] { return Quat[T]{-q[0], -q[1], -q[2], q[3]} }

// Norm returns the length Sqrt(x² + y² + z² + w²).
func (q Quat[T]) Norm() T {
	return Sqrt(T(q[0]*q[0]) + T(q[1]*q[1]) + T(q[2]*q[2]) + T(q[3]*q[3]))
}

// Normalized returns q/|q|, computed as q·(1/|q|). The zero quaternion gives
// the zero quaternion, never NaN.
func (q Quat[T]) Normalized() Quat[T] {
	n := q.Norm()
	if n == 0 {
		return Quat[T]{}
	}
	s := 1 / n
	return Quat[T]{T(q[0] * s), T(q[1] * s), T(q[2] * s), T(q[3] * s)}
}

// Rotate returns v rotated by q, q·(v, 0)·q*. q must be a unit quaternion:
// Rotate does not normalize it, and for |q| ≠ 1 the result is not a
// rotation of v (nor a uniform scaling of one).
func (q Quat[T]) Rotate(v Vec3[T]) Vec3[T] {
	// With u the vector part: v' = v + w·t + u×t, t = 2·(u×v), which is
	// q·v·q* expanded for |q| = 1 in 15 multiplies instead of 28.
	u := Vec3[T]{q[0], q[1], q[2]}
	t := u.Cross(v).Scale(2)
	return v.Add(t.Scale(q[3])).Add(u.Cross(t))
}

// Mat3 returns the rotation matrix of the unit quaternion q: q.Mat3().MulVec(v)
// equals q.Rotate(v) up to rounding. Like Rotate it assumes |q| = 1.
func (q Quat[T]) Mat3() Mat3[T] {
	x, y, z, w := q[0], q[1], q[2], q[3]
	xx, yy, zz := T(x*x), T(y*y), T(z*z)
	xy, xz, yz := T(x*y), T(x*z), T(y*z)
	wx, wy, wz := T(w*x), T(w*y), T(w*z)
	// The products by 2 are exact, so fusing 1 - 2*(...) cannot change
	// the result: no conversion is needed there.
	return Mat3[T]{
		{1 - 2*(yy+zz), 2 * (xy - wz), 2 * (xz + wy)},
		{2 * (xy + wz), 1 - 2*(xx+zz), 2 * (yz - wx)},
		{2 * (xz - wy), 2 * (yz + wx), 1 - 2*(xx+yy)},
	}
}
