package qd

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randQuat[T Float](g *rand.Rand) Quat[T] {
	q := Quat[float64]{g.NormFloat64(), g.NormFloat64(), g.NormFloat64(), g.NormFloat64()}.Normalized()
	return Quat[T]{T(q[0]), T(q[1]), T(q[2]), T(q[3])}
}

func TestQuatSmall(t *testing.T) {
	qz := QuatFromAxisAngle(Vec3[float64]{0, 0, 2}, math.Pi/2) // axis need not be unit
	v := qz.Rotate(Vec3[float64]{1, 0, 0})
	if !near(v[0], 0, 1e-15, 1) || !near(v[1], 1, 1e-15, 1) || v[2] != 0 {
		t.Errorf("a quarter turn about z takes x to %v, want y", v)
	}
	if q := QuatIdent[float32](); q != (Quat[float32]{0, 0, 0, 1}) || q.Rotate(Vec3[float32]{1, 2, 3}) != (Vec3[float32]{1, 2, 3}) {
		t.Errorf("QuatIdent = %v, or does not fix vectors", q)
	}
	if m := QuatIdent[float64]().Mat3(); m != Ident3[float64]() {
		t.Errorf("QuatIdent.Mat3 = %v", m)
	}
	// i·j = k, j·i = -k (Hamilton).
	i, j := Quat[float64]{1, 0, 0, 0}, Quat[float64]{0, 1, 0, 0}
	if k := i.Mul(j); k != (Quat[float64]{0, 0, 1, 0}) {
		t.Errorf("i·j = %v, want k", k)
	}
	if k := j.Mul(i); k != (Quat[float64]{0, 0, -1, 0}) {
		t.Errorf("j·i = %v, want -k", k)
	}
	if c := (Quat[float64]{1, 2, 3, 4}).Conj(); c != (Quat[float64]{-1, -2, -3, 4}) {
		t.Errorf("Conj = %v", c)
	}
	if n := (Quat[float64]{1, 2, 2, 4}).Norm(); n != 5 {
		t.Errorf("Norm = %v, want 5", n)
	}
	if z := (Quat[float32]{}).Normalized(); z != (Quat[float32]{}) {
		t.Errorf("zero Normalized = %v, want zero", z)
	}
}

func TestQuatIdentities(t *testing.T) {
	t.Run("float32", testQuatIdentities[float32])
	t.Run("float64", testQuatIdentities[float64])
}

func testQuatIdentities[T Float](t *testing.T) {
	g := newRng(3)
	tol := 16 * epsOf[T]()
	for range 2000 {
		q, p := randQuat[T](g), randQuat[T](g)
		v := randVec3[T](g)
		rv := q.Rotate(v)
		mv := q.Mat3().MulVec(v)
		for k := range 3 {
			if !near(float64(rv[k]), float64(mv[k]), tol, 1) {
				t.Fatalf("Rotate %v vs Mat3·v %v", rv, mv)
			}
		}
		if !near(float64(rv.Norm()), float64(v.Norm()), tol, 1) {
			t.Fatalf("Rotate changed the length: %v -> %v", v.Norm(), rv.Norm())
		}
		// Mul composes rotations: (q·p)(v) = q(p(v)).
		a, b := q.Mul(p).Rotate(v), q.Rotate(p.Rotate(v))
		for k := range 3 {
			if !near(float64(a[k]), float64(b[k]), tol, 1) {
				t.Fatalf("(q·p)(v) = %v, q(p(v)) = %v", a, b)
			}
		}
		// The conjugate undoes the rotation; q·q* = 1.
		back := q.Conj().Rotate(rv)
		for k := range 3 {
			if !near(float64(back[k]), float64(v[k]), tol, 1) {
				t.Fatalf("q*(q(v)) = %v, want %v", back, v)
			}
		}
		one := q.Mul(q.Conj())
		if !near(float64(one[3]), 1, tol, 1) || !near(float64(Vec3[T]{one[0], one[1], one[2]}.Norm()), 0, tol, 1) {
			t.Fatalf("q·q* = %v", one)
		}
		// Mat3 is a rotation.
		m := q.Mat3()
		mtm := m.T().Mul(m)
		if d := maxDev(3, func(i, j int) float64 { return float64(mtm[i][j]) }, id); d > tol {
			t.Fatalf("Mat3ᵀ·Mat3 - I = %g", d)
		}
		if !near(float64(m.Det()), 1, 4*tol, 1) {
			t.Fatalf("det Mat3 = %v", m.Det())
		}
		// From axis and angle: the axis is fixed, and the angle is
		// recovered from the trace (tr R = 1 + 2cos θ).
		axis := randVec3[T](g)
		angle := T(math.Pi * g.Float64())
		r := QuatFromAxisAngle(axis, angle)
		if !near(float64(r.Norm()), 1, tol, 1) {
			t.Fatalf("|QuatFromAxisAngle| = %v", r.Norm())
		}
		fa := r.Rotate(axis)
		for k := range 3 {
			if !near(float64(fa[k]), float64(axis[k]), tol, 1) {
				t.Fatalf("the axis moved: %v -> %v", axis, fa)
			}
		}
		if c := (float64(r.Mat3().Trace()) - 1) / 2; !near(c, math.Cos(float64(angle)), tol, 1) {
			t.Fatalf("cos of the angle: %v, want %v", c, math.Cos(float64(angle)))
		}
	}
}
