package qd

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randMat2[T Float](g *rand.Rand) Mat2[T] {
	var m Mat2[T]
	for i := range 2 {
		for j := range 2 {
			m[i][j] = T(sym(g))
		}
	}
	return m
}

func randMat3[T Float](g *rand.Rand) Mat3[T] {
	var m Mat3[T]
	for i := range 3 {
		for j := range 3 {
			m[i][j] = T(sym(g))
		}
	}
	return m
}

func randMat4[T Float](g *rand.Rand) Mat4[T] {
	var m Mat4[T]
	for i := range 4 {
		for j := range 4 {
			m[i][j] = T(sym(g))
		}
	}
	return m
}

// maxDev returns max |a[i][j] - b[i][j]| over an n×n matrix given as a
// function, in float64.
func maxDev(n int, a, b func(i, j int) float64) float64 {
	d := 0.0
	for i := range n {
		for j := range n {
			d = max(d, math.Abs(a(i, j)-b(i, j)))
		}
	}
	return d
}

func id(i, j int) float64 {
	if i == j {
		return 1
	}
	return 0
}

// leibnizDet is the determinant by the permutation expansion, in float64:
// an independent check of the cofactor formulas.
func leibnizDet(n int, a func(i, j int) float64) float64 {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	var det float64
	var rec func(k int, sign float64)
	rec = func(k int, sign float64) {
		if k == n {
			p := sign
			for i := range n {
				p *= a(i, perm[i])
			}
			det += p
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			s := sign
			if i != k {
				s = -s
			}
			rec(k+1, s)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0, 1)
	return det
}

func TestMatSmall(t *testing.T) {
	a2 := Mat2[float64]{{1, 2}, {3, 4}}
	a3 := Mat3[float64]{{2, 0, 1}, {1, 3, 0}, {0, 1, 4}}
	a4 := Mat4[float64]{{1, 0, 2, 0}, {0, 1, 0, 3}, {4, 0, 1, 0}, {0, 5, 0, 1}}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"Mat2.Add", a2.Add(a2), Mat2[float64]{{2, 4}, {6, 8}}},
		{"Mat2.Sub", a2.Sub(Ident2[float64]()), Mat2[float64]{{0, 2}, {3, 3}}},
		{"Mat2.Scale", a2.Scale(-1), Mat2[float64]{{-1, -2}, {-3, -4}}},
		{"Mat2.MulVec", a2.MulVec(Vec2[float64]{1, -1}), Vec2[float64]{-1, -1}},
		{"Mat2.Mul", a2.Mul(a2), Mat2[float64]{{7, 10}, {15, 22}}},
		{"Mat2.T", a2.T(), Mat2[float64]{{1, 3}, {2, 4}}},
		{"Mat2.Det", a2.Det(), -2.0},
		{"Mat2.Inv", a2.Inv(), Mat2[float64]{{-2, 1}, {1.5, -0.5}}},
		{"Mat2.Trace", a2.Trace(), 5.0},
		{"Diag2", Diag2(Vec2[float32]{2, 3}), Mat2[float32]{{2, 0}, {0, 3}}},
		{"Mat3.Add", a3.Add(Ident3[float64]()), Mat3[float64]{{3, 0, 1}, {1, 4, 0}, {0, 1, 5}}},
		{"Mat3.Sub", a3.Sub(a3), Mat3[float64]{}},
		{"Mat3.Scale", a3.Scale(2), Mat3[float64]{{4, 0, 2}, {2, 6, 0}, {0, 2, 8}}},
		{"Mat3.MulVec", a3.MulVec(Vec3[float64]{1, 2, 3}), Vec3[float64]{5, 7, 14}},
		{"Mat3.Mul", a3.Mul(Ident3[float64]()), a3},
		{"Mat3.T", a3.T(), Mat3[float64]{{2, 1, 0}, {0, 3, 1}, {1, 0, 4}}},
		{"Mat3.Det", a3.Det(), 25.0},
		{"Mat3.Trace", a3.Trace(), 9.0},
		{"Diag3", Diag3(Vec3[float64]{1, 2, 3}).Trace(), 6.0},
		{"Mat4.Add", a4.Add(a4)[3], [4]float64{0, 10, 0, 2}},
		{"Mat4.Sub", a4.Sub(Ident4[float64]())[0], [4]float64{0, 0, 2, 0}},
		{"Mat4.Scale", a4.Scale(3)[2], [4]float64{12, 0, 3, 0}},
		{"Mat4.MulVec", a4.MulVec(Vec4[float64]{1, 1, 1, 1}), Vec4[float64]{3, 4, 5, 6}},
		{"Mat4.Mul", Ident4[float64]().Mul(a4), a4},
		{"Mat4.T", a4.T()[0], [4]float64{1, 0, 4, 0}},
		{"Mat4.Det", a4.Det(), (1 - 8) * (1 - 15.0)},
		{"Mat4.Trace", a4.Trace(), 4.0},
		{"Diag4", Diag4(Vec4[float64]{1, 2, 3, 4}).Det(), 24.0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestMatIdentities(t *testing.T) {
	t.Run("float32", testMatIdentities[float32])
	t.Run("float64", testMatIdentities[float64])
}

// testMatIdentities checks the algebra on random matrices: (ab)ᵀ = bᵀaᵀ,
// Det against the permutation expansion, det(ab) = det a·det b,
// (ab)v = a(bv), and Inv·m ≈ I relative to the condition estimate
// |m|·|Inv(m)|. It records the worst Inv residual in eps units.
func testMatIdentities[T Float](t *testing.T) {
	g := newRng(2)
	eps := epsOf[T]()
	var worstInv [3]float64
	for range 3000 {
		a2, b2 := randMat2[T](g), randMat2[T](g)
		a3, b3 := randMat3[T](g), randMat3[T](g)
		a4, b4 := randMat4[T](g), randMat4[T](g)
		v3 := randVec3[T](g)

		if a3.Mul(b3).T() != b3.T().Mul(a3.T()) || a2.Mul(b2).T() != b2.T().Mul(a2.T()) || a4.Mul(b4).T() != b4.T().Mul(a4.T()) {
			t.Fatal("(ab)ᵀ ≠ bᵀaᵀ")
		}
		if d := maxDev(3, func(i, j int) float64 { return float64(a3.Mul(b3).MulVec(v3)[i]) },
			func(i, j int) float64 { return float64(a3.MulVec(b3.MulVec(v3))[i]) }); d > 32*eps {
			t.Fatalf("(ab)v ≠ a(bv): %g", d)
		}
		for n, got := range []float64{float64(a2.Det()), float64(a3.Det()), float64(a4.Det())} {
			n += 2
			want := leibnizDet(n, func(i, j int) float64 {
				switch n {
				case 2:
					return float64(a2[i][j])
				case 3:
					return float64(a3[i][j])
				}
				return float64(a4[i][j])
			})
			if !near(got, want, 64*eps, 1) {
				t.Fatalf("Det of a %dx%d: %g, permutation expansion %g", n, n, got, want)
			}
		}
		if d, w := float64(a4.Mul(b4).Det()), float64(a4.Det())*float64(b4.Det()); !near(d, w, 256*eps, 1) {
			t.Fatalf("det(ab) = %g, det a·det b = %g", d, w)
		}
		i2, i3, i4 := a2.Inv(), a3.Inv(), a4.Inv()
		r2, r3, r4 := i2.Mul(a2), i3.Mul(a3), i4.Mul(a4)
		// Relative to the condition number: |I - Inv·m| ≲ c·eps·κ.
		k2 := matNorm(2, func(i, j int) float64 { return float64(a2[i][j]) }) * matNorm(2, func(i, j int) float64 { return float64(i2[i][j]) })
		k3 := matNorm(3, func(i, j int) float64 { return float64(a3[i][j]) }) * matNorm(3, func(i, j int) float64 { return float64(i3[i][j]) })
		k4 := matNorm(4, func(i, j int) float64 { return float64(a4[i][j]) }) * matNorm(4, func(i, j int) float64 { return float64(i4[i][j]) })
		worstInv[0] = max(worstInv[0], maxDev(2, func(i, j int) float64 { return float64(r2[i][j]) }, id)/(k2*eps))
		worstInv[1] = max(worstInv[1], maxDev(3, func(i, j int) float64 { return float64(r3[i][j]) }, id)/(k3*eps))
		worstInv[2] = max(worstInv[2], maxDev(4, func(i, j int) float64 { return float64(r4[i][j]) }, id)/(k4*eps))
	}
	t.Logf("%s: worst |Inv(m)·m - I|max / (κ∞·eps): 2x2 %.2f, 3x3 %.2f, 4x4 %.2f", typeName[T](), worstInv[0], worstInv[1], worstInv[2])
	for n, w := range worstInv {
		if w > 8 {
			t.Errorf("%dx%d: Inv residual %.2f κ·eps, want ≤ 8", n+2, n+2, w)
		}
	}
}

// matNorm is the infinity norm (maximum absolute row sum).
func matNorm(n int, a func(i, j int) float64) float64 {
	m := 0.0
	for i := range n {
		s := 0.0
		for j := range n {
			s += math.Abs(a(i, j))
		}
		m = max(m, s)
	}
	return m
}

// TestMatInvSingular: a singular matrix gives Inf and NaN, not a panic.
func TestMatInvSingular(t *testing.T) {
	bad := func(x float64) bool { return math.IsInf(x, 0) || math.IsNaN(x) }
	i2 := Mat2[float64]{{1, 2}, {2, 4}}.Inv()
	i3 := Mat3[float32]{{1, 2, 3}, {2, 4, 6}, {0, 0, 1}}.Inv()
	i4 := Mat4[float64]{}.Inv()
	for i := range 2 {
		for j := range 2 {
			if !bad(i2[i][j]) {
				t.Errorf("Mat2 singular Inv[%d][%d] = %v, want ±Inf or NaN", i, j, i2[i][j])
			}
		}
	}
	for i := range 3 {
		for j := range 3 {
			if !bad(float64(i3[i][j])) {
				t.Errorf("Mat3 singular Inv[%d][%d] = %v, want ±Inf or NaN", i, j, i3[i][j])
			}
		}
	}
	for i := range 4 {
		for j := range 4 {
			if !math.IsNaN(i4[i][j]) {
				t.Errorf("Mat4 zero Inv[%d][%d] = %v, want NaN (0·Inf)", i, j, i4[i][j])
			}
		}
	}
}
