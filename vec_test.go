package qd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Helpers shared by the tests of vec.go, mat.go, quat.go and decomp.go.

// epsOf is the unit roundoff of T: 2^-24 for float32, 2^-53 for float64.
// T(1+1e-10) == 1 only for float32, the precision test the kernel language
// allows (and the one kernels would write).
func epsOf[T Float]() float64 {
	if T(1+1e-10) == 1 {
		return 0x1p-24
	}
	return 0x1p-53
}

// typeName names T for subtest names and logs.
func typeName[T Float]() string {
	if T(1+1e-10) == 1 {
		return "float32"
	}
	return "float64"
}

func newRng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func sym(g *rand.Rand) float64 { return 2*g.Float64() - 1 }

func randVec3[T Float](g *rand.Rand) Vec3[T] { return Vec3[T]{T(sym(g)), T(sym(g)), T(sym(g))} }

// near reports whether got is within tol of want, relative to scale.
func near(got, want, tol, scale float64) bool {
	return math.Abs(got-want) <= tol*scale
}

func TestVecComponentwise(t *testing.T) {
	a2, b2 := Vec2[float64]{1, -2}, Vec2[float64]{4, 8}
	a3, b3 := Vec3[float64]{1, -2, 3}, Vec3[float64]{4, 8, -16}
	a4, b4 := Vec4[float64]{1, -2, 3, -4}, Vec4[float64]{4, 8, -16, 2}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"Vec2.Add", a2.Add(b2), Vec2[float64]{5, 6}},
		{"Vec2.Sub", a2.Sub(b2), Vec2[float64]{-3, -10}},
		{"Vec2.Mul", a2.Mul(b2), Vec2[float64]{4, -16}},
		{"Vec2.Div", a2.Div(b2), Vec2[float64]{0.25, -0.25}},
		{"Vec2.Scale", a2.Scale(-3), Vec2[float64]{-3, 6}},
		{"Vec2.Neg", a2.Neg(), Vec2[float64]{-1, 2}},
		{"Vec2.Min", a2.Min(b2), Vec2[float64]{1, -2}},
		{"Vec2.Max", a2.Max(b2), Vec2[float64]{4, 8}},
		{"Vec2.Abs", a2.Abs(), Vec2[float64]{1, 2}},
		{"Vec2.Sum", a2.Sum(), -1.0},
		{"Vec2.Dot", a2.Dot(b2), -12.0},
		{"Vec2.Norm2", a2.Norm2(), 5.0},
		{"Vec2.Cross", a2.Cross(b2), 16.0},
		{"Vec2.Outer", a2.Outer(b2), Mat2[float64]{{4, 8}, {-8, -16}}},
		{"Vec3.Add", a3.Add(b3), Vec3[float64]{5, 6, -13}},
		{"Vec3.Sub", a3.Sub(b3), Vec3[float64]{-3, -10, 19}},
		{"Vec3.Mul", a3.Mul(b3), Vec3[float64]{4, -16, -48}},
		{"Vec3.Div", a3.Div(b3), Vec3[float64]{0.25, -0.25, -0.1875}},
		{"Vec3.Scale", a3.Scale(2), Vec3[float64]{2, -4, 6}},
		{"Vec3.Neg", a3.Neg(), Vec3[float64]{-1, 2, -3}},
		{"Vec3.Min", a3.Min(b3), Vec3[float64]{1, -2, -16}},
		{"Vec3.Max", a3.Max(b3), Vec3[float64]{4, 8, 3}},
		{"Vec3.Abs", a3.Abs(), Vec3[float64]{1, 2, 3}},
		{"Vec3.Sum", a3.Sum(), 2.0},
		{"Vec3.Dot", a3.Dot(b3), -60.0},
		{"Vec3.Norm2", a3.Norm2(), 14.0},
		{"Vec3.Cross", a3.Cross(b3), Vec3[float64]{8, 28, 16}},
		{"Vec3.Outer", a3.Outer(b3), Mat3[float64]{{4, 8, -16}, {-8, -16, 32}, {12, 24, -48}}},
		{"Vec4.Add", a4.Add(b4), Vec4[float64]{5, 6, -13, -2}},
		{"Vec4.Sub", a4.Sub(b4), Vec4[float64]{-3, -10, 19, -6}},
		{"Vec4.Mul", a4.Mul(b4), Vec4[float64]{4, -16, -48, -8}},
		{"Vec4.Div", a4.Div(b4), Vec4[float64]{0.25, -0.25, -0.1875, -2}},
		{"Vec4.Scale", a4.Scale(0.5), Vec4[float64]{0.5, -1, 1.5, -2}},
		{"Vec4.Neg", a4.Neg(), Vec4[float64]{-1, 2, -3, 4}},
		{"Vec4.Min", a4.Min(b4), Vec4[float64]{1, -2, -16, -4}},
		{"Vec4.Max", a4.Max(b4), Vec4[float64]{4, 8, 3, 2}},
		{"Vec4.Abs", a4.Abs(), Vec4[float64]{1, 2, 3, 4}},
		{"Vec4.Sum", a4.Sum(), -2.0},
		{"Vec4.Dot", a4.Dot(b4), -68.0},
		{"Vec4.Norm2", a4.Norm2(), 30.0},
		{"Vec4.Outer", a4.Outer(b4)[3], [4]float64{-16, -32, 64, -8}},
		{"Vec3.Norm", Vec3[float64]{2, 3, 6}.Norm(), 7.0},
		{"Vec2.Norm", Vec2[float32]{3, 4}.Norm(), float32(5)},
		{"Vec4.Norm", Vec4[float64]{1, 1, 1, 1}.Norm(), 2.0},
		{"Vec2.Normalized", Vec2[float64]{0, -5}.Normalized(), Vec2[float64]{0, -1}},
		{"Vec3.Normalized", Vec3[float64]{0, 3, 0}.Normalized(), Vec3[float64]{0, 1, 0}},
		{"Vec4.Normalized", Vec4[float64]{2, 2, 2, 2}.Normalized(), Vec4[float64]{0.5, 0.5, 0.5, 0.5}},
		{"Vec2.Normalized zero", Vec2[float32]{}.Normalized(), Vec2[float32]{}},
		{"Vec3.Normalized zero", Vec3[float64]{}.Normalized(), Vec3[float64]{}},
		{"Vec4.Normalized zero", Vec4[float32]{}.Normalized(), Vec4[float32]{}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestVecIdentities(t *testing.T) {
	t.Run("float32", testVecIdentities[float32])
	t.Run("float64", testVecIdentities[float64])
}

func testVecIdentities[T Float](t *testing.T) {
	g := newRng(1)
	tol := 16 * epsOf[T]()
	for range 2000 {
		a, b, c := randVec3[T](g), randVec3[T](g), randVec3[T](g)
		ab := a.Cross(b)
		if ab != b.Cross(a).Neg() {
			t.Fatalf("a×b ≠ -(b×a) for %v, %v", a, b)
		}
		// a×b ⊥ a, b; |a×b|² = |a|²|b|² - (a·b)²
		if !near(float64(ab.Dot(a)), 0, tol, 1) || !near(float64(ab.Dot(b)), 0, tol, 1) {
			t.Fatalf("a×b not orthogonal to a, b: %v %v", ab.Dot(a), ab.Dot(b))
		}
		lag := float64(a.Norm2())*float64(b.Norm2()) - float64(a.Dot(b))*float64(a.Dot(b))
		if !near(float64(ab.Norm2()), lag, tol, 1) {
			t.Fatalf("Lagrange identity: %v vs %v", ab.Norm2(), lag)
		}
		// triple product a·(b×c) = det [a; b; c]
		m := Mat3[T]{a, b, c}
		if !near(float64(a.Dot(b.Cross(c))), float64(m.Det()), tol, 1) {
			t.Fatalf("a·(b×c) = %v, det = %v", a.Dot(b.Cross(c)), m.Det())
		}
		// outer(a, b)·c = a (b·c)
		o, w := a.Outer(b).MulVec(c), a.Scale(b.Dot(c))
		for i := range 3 {
			if !near(float64(o[i]), float64(w[i]), tol, 1) {
				t.Fatalf("outer: %v vs %v", o, w)
			}
		}
		n := a.Normalized()
		if !near(float64(n.Norm()), 1, 2*epsOf[T](), 2) {
			t.Fatalf("|Normalized(%v)| = %v", a, n.Norm())
		}
		if d := a.Sub(b).Add(b).Sub(a).Norm(); !near(float64(d), 0, tol, 1) {
			t.Fatalf("|a - b + b - a| = %v", d)
		}
		a2, b2 := Vec2[T]{a[0], a[1]}, Vec2[T]{b[0], b[1]}
		a3, b3 := Vec3[T]{a[0], a[1], 0}, Vec3[T]{b[0], b[1], 0}
		if z := a3.Cross(b3)[2]; a2.Cross(b2) != z {
			t.Fatalf("Vec2.Cross = %v, 3-D cross z = %v", a2.Cross(b2), z)
		}
	}
}
