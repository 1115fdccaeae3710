package qd

import (
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
)

// The decomposition tests run SVD2/3, PolarDecompose2/3 and SymEig3 on
// random matrices of several kinds, measure the worst errors in units of
// the type's eps, log them (docs/accuracy.md records them) and assert
// bounds a little above the measured worst cases. Errors are evaluated in
// float64 from the returned values.

// decompN is the number of random matrices per decomposition and type.
// The default keeps the test fast; docs/accuracy.md reports a run with
// -args -decomp.n=100000 (go test -run 'SVD|Polar|SymEig' -v . -args
// -decomp.n=100000). -short divides it by 10, e.g. under -race.
var decompN = flag.Int("decomp.n", 10000, "random matrices per decomposition test and type")

func decompCount() int {
	if testing.Short() {
		return *decompN / 10
	}
	return *decompN
}

// exactEvery: one kind-cycle in exactEvery is built exactly (buildBig),
// which is slow, and measures the accuracy of the values.
const exactEvery = 20

func exactBuild(i, kinds int) bool { return (i/kinds)%exactEvery == 0 }

// twoProd returns x·y as an unevaluated sum hi + lo, exactly.
func twoProd(x, y float64) (hi, lo float64) {
	hi = float64(x * y)
	return hi, math.FMA(x, y, -hi)
}

// dot2 returns Σ a[i]·b[i] as if computed in twice float64's precision
// (Ogita, Rump and Oishi's Dot2), so that the errors measured for float64
// results are not inflated by the rounding of their own evaluation.
func dot2(a, b []float64) float64 {
	var s, c float64
	for i := range a {
		p, pe := twoProd(a[i], b[i])
		t := s + p
		z := t - s
		c += pe + ((s - (t - z)) + (p - z))
		s = t
	}
	return s + c
}

// residual returns the Frobenius norm of the n×n matrix whose (i, j) entry
// is dot2 of the vectors f(i, j) returns.
func residual(n int, f func(i, j int) (a, b []float64)) float64 {
	r := 0.0
	for i := range n {
		for j := range n {
			d := dot2(f(i, j))
			r += d * d
		}
	}
	return math.Sqrt(r)
}

// usvResidual is |u·diag(s)·vᵀ - m|_F for n×n matrices given by entry
// functions, accurately.
func usvResidual(n int, u, v, m func(i, j int) float64, s func(k int) float64) float64 {
	return residual(n, func(i, j int) ([]float64, []float64) {
		var a, b []float64
		for k := range n {
			hi, lo := twoProd(u(i, k), s(k))
			a = append(a, hi, lo)
			b = append(b, v(j, k), v(j, k))
		}
		return append(a, m(i, j)), append(b, -1)
	})
}

// mulResidual is |a·b - c|_F for n×n matrices, accurately.
func mulResidual(n int, a, b, c func(i, j int) float64) float64 {
	return residual(n, func(i, j int) ([]float64, []float64) {
		var x, y []float64
		for k := range n {
			x = append(x, a(i, k))
			y = append(y, b(k, j))
		}
		return append(x, c(i, j)), append(y, -1)
	})
}

// orthDev is max |qᵀq - I| over the entries, accurately; it fails the test
// when q is not a rotation (det ≤ 0).
func orthDev(t *testing.T, n int, q func(i, j int) float64) float64 {
	t.Helper()
	d := 0.0
	for i := range n {
		for j := range n {
			var a, b []float64
			for k := range n {
				a = append(a, q(k, i))
				b = append(b, q(k, j))
			}
			d = max(d, math.Abs(dot2(append(a, id(i, j)), append(b, -1))))
		}
	}
	det := 0.0
	if n == 2 {
		det = q(0, 0)*q(1, 1) - q(0, 1)*q(1, 0)
	} else {
		det = Mat3[float64]{{q(0, 0), q(0, 1), q(0, 2)}, {q(1, 0), q(1, 1), q(1, 2)}, {q(2, 0), q(2, 1), q(2, 2)}}.Det()
	}
	if !(det > 0.5) {
		t.Fatalf("det = %g: not a rotation", det)
	}
	return d
}

// e3 and e2 turn matrices into entry functions.
func e3(m Mat3[float64]) func(i, j int) float64 { return func(i, j int) float64 { return m[i][j] } }
func e2(m Mat2[float64]) func(i, j int) float64 { return func(i, j int) float64 { return m[i][j] } }

func rot3(g *rand.Rand) Mat3[float64] { return randQuat[float64](g).Mat3() }

func rot2(g *rand.Rand) Mat2[float64] {
	a := 2 * math.Pi * g.Float64()
	c, s := math.Cos(a), math.Sin(a)
	return Mat2[float64]{{c, -s}, {s, c}}
}

func conv3[T Float](m Mat3[float64]) Mat3[T] {
	var r Mat3[T]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = T(m[i][j])
		}
	}
	return r
}

func to64(m Mat3[float32]) Mat3[float64] {
	var r Mat3[float64]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = float64(m[i][j])
		}
	}
	return r
}

// f64 converts a Mat3[T] to float64.
func f64[T Float](m Mat3[T]) Mat3[float64] {
	var r Mat3[float64]
	for i := range 3 {
		for j := range 3 {
			r[i][j] = float64(m[i][j])
		}
	}
	return r
}

func f64v[T Float](v Vec3[T]) Vec3[float64] {
	return Vec3[float64]{float64(v[0]), float64(v[1]), float64(v[2])}
}

func frob3(m Mat3[float64]) float64 {
	s := 0.0
	for i := range 3 {
		for j := range 3 {
			s += m[i][j] * m[i][j]
		}
	}
	return math.Sqrt(s)
}

// kind3 is a family of test matrices: gen returns the matrix in float64 and,
// when known by construction, its singular values (descending, signed) or
// eigenvalues (ascending). Constructed matrices are built by b: build64 is
// fast, buildBig exact (see there).
type kind3 struct {
	name string
	gen  func(g *rand.Rand, b builder) (Mat3[float64], []float64)
}

// A builder returns u·diag(d)·vᵀ with random rotations u and v, or
// q·diag(d)·qᵀ with one random rotation q when sym is set.
type builder func(g *rand.Rand, d Vec3[float64], sym bool) Mat3[float64]

// build64 builds in float64: the rotations are orthogonal only to a few
// ulp, so the matrix's singular values or eigenvalues differ from d by a
// few ulp of the largest. Good for reconstruction errors, not for values.
func build64(g *rand.Rand, d Vec3[float64], sym bool) Mat3[float64] {
	u := rot3(g)
	v := u
	if !sym {
		v = rot3(g)
	}
	m := u.Mul(Diag3(d)).Mul(v.T())
	if sym {
		m = m.Add(m.T()).Scale(0.5) // exactly symmetric
	}
	return m
}

// fromSVD builds u·diag(s)·vᵀ with random rotations u and v.
func fromSVD(g *rand.Rand, b builder, s0, s1, s2 float64) (Mat3[float64], []float64) {
	return b(g, Vec3[float64]{s0, s1, s2}, false), []float64{s0, s1, s2}
}

var kinds3 = []kind3{
	{"uniform [-1,1]", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return randMat3[float64](g), nil }},
	{"near identity (MPM F)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		return Ident3[float64]().Add(randMat3[float64](g).Scale(0.1)), nil
	}},
	{"rotation", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromSVD(g, b, 1, 1, 1) }},
	{"negative det", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		return fromSVD(g, b, 1+g.Float64(), 0.5+0.5*g.Float64(), -0.1-0.4*g.Float64())
	}},
	{"reflection", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromSVD(g, b, 1, 1, -1) }},
	{"nearly singular", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		return fromSVD(g, b, 1, 0.1+0.9*g.Float64(), math.Pow(10, -4-8*g.Float64()))
	}},
	{"rank 2", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		return fromSVD(g, b, 1, 0.1+0.9*g.Float64(), 0)
	}},
	{"rank 1", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromSVD(g, b, 1+g.Float64(), 0, 0) }},
	{"repeated (s, s, t)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		s := 1 + g.Float64()
		return fromSVD(g, b, s, s, 0.5*g.Float64())
	}},
	{"repeated (s, t, t)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		t := 0.5 * g.Float64()
		return fromSVD(g, b, 1, t, t)
	}},
	{"clustered (1, 1+d, 1+2d)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		d := math.Pow(10, -3-10*g.Float64())
		return fromSVD(g, b, 1+2*d, 1+d, 1)
	}},
	{"graded (1e3, 1, 1e-3)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromSVD(g, b, 1e3, 1, 1e-3) }},
	{"zero", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return Mat3[float64]{}, []float64{0, 0, 0} }},
}

// worst keeps the worst value of a metric and the kind of matrix it came from.
type worst struct {
	v    float64
	kind string
}

func (w *worst) see(v float64, kind string) {
	if v > w.v || math.IsNaN(v) {
		w.v, w.kind = v, kind
	}
}

func (w worst) String() string { return fmt.Sprintf("%.2f (%s)", w.v, w.kind) }

// buildBig builds exactly: the rotations come from random quaternions by
// the rational formula R(q) = (...)/|q|², which is orthogonal for any q,
// evaluated with math/big at 200 bits together with the product, and only
// the result is rounded to float64. The singular values (eigenvalues) of
// the rounded matrix m are then within |m - exact|₂ ≤ eps64·|m|_F of d, by
// Weyl's inequality; after a further rounding to float32, within
// (eps32 + eps64)·|m|_F. That is at most √3 eps of the largest value, the
// uncertainty of the value errors the tests report.
func buildBig(g *rand.Rand, d Vec3[float64], sym bool) Mat3[float64] {
	u := bigRot3(g)
	v := u
	if !sym {
		v = bigRot3(g)
	}
	var m Mat3[float64]
	for i := range 3 {
		for j := range 3 {
			acc := bf(0)
			for k := range 3 {
				// (u_ik·v_jk)·d_k: the same operands in the same order for
				// (i, j) and (j, i), so a symmetric build is exactly
				// symmetric.
				acc.Add(acc, bmul(bmul(u[i][k], v[j][k]), bf(d[k])))
			}
			m[i][j], _ = acc.Float64()
		}
	}
	return m
}

const bigPrec = 200

func bf(x float64) *big.Float         { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }
func bmul(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(bigPrec).Mul(a, b) }
func badd(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(bigPrec).Add(a, b) }
func bsub(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(bigPrec).Sub(a, b) }
func bquo(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(bigPrec).Quo(a, b) }

// bigRot3 returns the rotation of a random quaternion, orthogonal to 2^-190.
func bigRot3(g *rand.Rand) [3][3]*big.Float {
	x, y, z, w := bf(g.NormFloat64()), bf(g.NormFloat64()), bf(g.NormFloat64()), bf(g.NormFloat64())
	xx, yy, zz, ww := bmul(x, x), bmul(y, y), bmul(z, z), bmul(w, w)
	xy, xz, yz := bmul(x, y), bmul(x, z), bmul(y, z)
	wx, wy, wz := bmul(w, x), bmul(w, y), bmul(w, z)
	n := badd(badd(xx, yy), badd(zz, ww))
	two := bf(2)
	e := [3][3]*big.Float{
		{bsub(badd(ww, xx), badd(yy, zz)), bmul(two, bsub(xy, wz)), bmul(two, badd(xz, wy))},
		{bmul(two, badd(xy, wz)), bsub(badd(ww, yy), badd(xx, zz)), bmul(two, bsub(yz, wx))},
		{bmul(two, bsub(xz, wy)), bmul(two, badd(yz, wx)), bsub(badd(ww, zz), badd(xx, yy))},
	}
	for i := range 3 {
		for j := range 3 {
			e[i][j] = bquo(e[i][j], n)
		}
	}
	return e
}

// buildBig2 is the exact 2-D analogue of buildBig, with rotations: ((a²-b²), 2ab)/(a²+b²).
func buildBig2(g *rand.Rand, d Vec2[float64]) Mat2[float64] {
	rot := func() [2][2]*big.Float {
		a, b := bf(g.NormFloat64()), bf(g.NormFloat64())
		n := badd(bmul(a, a), bmul(b, b))
		c := bquo(bsub(bmul(a, a), bmul(b, b)), n)
		s := bquo(bmul(bf(2), bmul(a, b)), n)
		return [2][2]*big.Float{{c, new(big.Float).Neg(s)}, {s, c}}
	}
	u, v := rot(), rot()
	var m Mat2[float64]
	for i := range 2 {
		for j := range 2 {
			acc := bf(0)
			for k := range 2 {
				acc.Add(acc, bmul(bmul(u[i][k], v[j][k]), bf(d[k])))
			}
			m[i][j], _ = acc.Float64()
		}
	}
	return m
}

// checkBound asserts a worst case, in eps of the type. The bounds are a
// little above the worst cases measured (docs/accuracy.md records those).
func checkBound(t *testing.T, what string, w worst, bound float64) {
	t.Helper()
	if !(w.v <= bound) {
		t.Errorf("%s: worst %s eps, want ≤ %g", what, w, bound)
	}
}

func TestSVD3(t *testing.T) {
	t.Run("float32", testSVD3[float32])
	t.Run("float64", testSVD3[float64])
}

// testSVD3 measures the reconstruction and the orthogonality over
// decompCount() matrices and the accuracy of the singular values over
// exactly built ones, and checks the order and the sign convention.
func testSVD3[T Float](t *testing.T) {
	g := newRng(4)
	eps := epsOf[T]()
	var rec, orth, val worst
	n := decompCount()
	for i := range n {
		k := kinds3[i%len(kinds3)]
		exact := exactBuild(i, len(kinds3))
		b := build64
		if exact {
			b = buildBig
		}
		m64, sv := k.gen(g, b)
		m := conv3[T](m64)
		mf := f64(m) // the matrix actually decomposed
		u, s, v := SVD3(m)
		uf, sf, vf := f64(u), f64v(s), f64(v)
		scale := frob3(mf)
		if scale == 0 {
			scale = 1 // the zero matrix: absolute error
		}
		rec.see(usvResidual(3, e3(uf), e3(vf), e3(mf), func(k int) float64 { return sf[k] })/scale/eps, k.name)
		orth.see(max(orthDev(t, 3, e3(uf)), orthDev(t, 3, e3(vf)))/eps, k.name)
		// Order and sign: s0 ≥ s1 ≥ |s2|, s1 ≥ 0, sign(s2) = sign(det).
		if !(sf[0] >= sf[1] && sf[1] >= math.Abs(sf[2]) && sf[1] >= 0) {
			t.Fatalf("%s: singular values %v not ordered", k.name, sf)
		}
		if d := mf.Det(); math.Abs(d) > 1e-3*math.Pow(frob3(mf), 3) && (d < 0) != (sf[2] < 0) {
			t.Fatalf("%s: det %g but s = %v", k.name, d, sf)
		}
		if sv != nil && exact {
			for j := range 3 {
				val.see(math.Abs(sf[j]-sv[j])/max(math.Abs(sv[0]), math.SmallestNonzeroFloat64)/eps, k.name)
			}
		}
	}
	t.Logf("%s SVD3, %d matrices, worst in eps: |m-u·s·vᵀ|_F/|m|_F %v; |uᵀu-I|max over u, v %v; |s-σ|/σ0 (exactly built 1/%d) %v",
		typeName[T](), n, rec, orth, exactEvery, val)
	checkBound(t, "SVD3 reconstruction", rec, 20)
	checkBound(t, "SVD3 orthogonality", orth, 24)
	checkBound(t, "SVD3 singular values", val, 10)

	u, s, v := SVD3(Mat3[T]{})
	if u != Ident3[T]() || v != Ident3[T]() || s != (Vec3[T]{}) {
		t.Errorf("SVD3(0) = %v %v %v, want I, 0, I", u, s, v)
	}
}

func TestPolarDecompose3(t *testing.T) {
	t.Run("float32", testPolar3[float32])
	t.Run("float64", testPolar3[float64])
}

func testPolar3[T Float](t *testing.T) {
	g := newRng(5)
	eps := epsOf[T]()
	var rec, orth, psd worst
	n := decompCount()
	for i := range n {
		k := kinds3[i%len(kinds3)]
		m64, _ := k.gen(g, build64)
		m := conv3[T](m64)
		mf := f64(m)
		r, s := PolarDecompose3(m)
		if s != s.T() {
			t.Fatalf("%s: s not symmetric: %v", k.name, s)
		}
		rf, sf := f64(r), f64(s)
		scale := frob3(mf)
		if scale == 0 {
			scale = 1
		}
		rec.see(mulResidual(3, e3(rf), e3(sf), e3(mf))/scale/eps, k.name)
		orth.see(orthDev(t, 3, e3(rf))/eps, k.name)
		// s is positive semi-definite when det m > 0: its smallest
		// eigenvalue is ≥ -rounding.
		if mf.Det() > 0 {
			ev, _ := SymEig3(sf)
			psd.see(max(0, -ev[0])/scale/eps, k.name)
		}
	}
	t.Logf("%s PolarDecompose3, %d matrices, worst in eps: |m-r·s|_F/|m|_F %v; |rᵀr-I|max %v; -λmin(s)/|m|_F when det m > 0: %v",
		typeName[T](), n, rec, orth, psd)
	checkBound(t, "polar3 reconstruction", rec, 40)
	checkBound(t, "polar3 orthogonality", orth, 24)
	checkBound(t, "polar3 definiteness", psd, 4)
}

// kindsSym are symmetric test matrices with known eigenvalues (ascending).
var kindsSym = []kind3{
	{"uniform symmetric", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		m := randMat3[float64](g)
		return m.Add(m.T()).Scale(0.5), nil
	}},
	{"distinct", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		return fromEig(g, b, -1+g.Float64(), g.Float64(), 1+g.Float64())
	}},
	{"double (a, a, b)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		a := sym(g)
		return fromEig(g, b, a, a, a+1+g.Float64())
	}},
	{"double (a, b, b)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		c := sym(g)
		return fromEig(g, b, c-1-g.Float64(), c, c)
	}},
	{"triple", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		a := sym(g)
		return fromEig(g, b, a, a, a)
	}},
	{"clustered", func(g *rand.Rand, b builder) (Mat3[float64], []float64) {
		d := math.Pow(10, -3-10*g.Float64())
		return fromEig(g, b, 1, 1+d, 1+2*d)
	}},
	{"graded (1e-6, 1, 1e6)", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromEig(g, b, 1e-6, 1, 1e6) }},
	{"singular", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return fromEig(g, b, -1, 0, 1) }},
	{"zero", func(g *rand.Rand, b builder) (Mat3[float64], []float64) { return Mat3[float64]{}, []float64{0, 0, 0} }},
}

// fromEig builds q·diag(λ)·qᵀ with a random rotation q; λ ascending.
func fromEig(g *rand.Rand, b builder, l0, l1, l2 float64) (Mat3[float64], []float64) {
	l := []float64{l0, l1, l2}
	sort.Float64s(l)
	return b(g, Vec3[float64]{l0, l1, l2}, true), l
}

func TestSymEig3(t *testing.T) {
	t.Run("float32", testSymEig3[float32])
	t.Run("float64", testSymEig3[float64])
}

func testSymEig3[T Float](t *testing.T) {
	g := newRng(6)
	eps := epsOf[T]()
	var res, orth, val worst
	n := decompCount()
	for i := range n {
		k := kindsSym[i%len(kindsSym)]
		exact := exactBuild(i, len(kindsSym))
		b := build64
		if exact {
			b = buildBig
		}
		m64, ev := k.gen(g, b)
		m := conv3[T](m64)
		mf := f64(m)
		l, q := SymEig3(m)
		lf, qf := f64v(l), f64(q)
		if !(lf[0] <= lf[1] && lf[1] <= lf[2]) {
			t.Fatalf("%s: eigenvalues %v not ascending", k.name, lf)
		}
		scale := frob3(mf)
		if scale == 0 {
			scale = 1
		}
		// m·q - q·Λ, column j: Σ_k m_ik·q_kj - q_ij·λ_j
		res.see(residual(3, func(i, j int) ([]float64, []float64) {
			return []float64{mf[i][0], mf[i][1], mf[i][2], qf[i][j]}, []float64{qf[0][j], qf[1][j], qf[2][j], -lf[j]}
		})/scale/eps, k.name)
		orth.see(orthDev(t, 3, e3(qf))/eps, k.name)
		if ev != nil && exact {
			for j := range 3 {
				val.see(math.Abs(lf[j]-ev[j])/max(math.Abs(ev[0]), math.Abs(ev[2]), math.SmallestNonzeroFloat64)/eps, k.name)
			}
		}
	}
	t.Logf("%s SymEig3, %d matrices, worst in eps: |m·q-q·Λ|_F/|m|_F %v; |qᵀq-I|max %v; |λ-λexact|/max|λ| (exactly built 1/%d) %v",
		typeName[T](), n, res, orth, exactEvery, val)
	checkBound(t, "SymEig3 residual", res, 10)
	checkBound(t, "SymEig3 orthogonality", orth, 24)
	checkBound(t, "SymEig3 eigenvalues", val, 8)
	l, q := SymEig3(Mat3[T]{})
	if q != Ident3[T]() || l != (Vec3[T]{}) {
		t.Errorf("SymEig3(0) = %v %v, want 0, I", l, q)
	}
}

func TestSVD2AndPolar2(t *testing.T) {
	t.Run("float32", testSVD2[float32])
	t.Run("float64", testSVD2[float64])
}

type kind2 struct {
	name string
	gen  func(g *rand.Rand, exact bool) (Mat2[float64], []float64)
}

// fromSVD2 builds u·diag(s)·vᵀ with random rotations u and v, in float64
// or, when exact is set, exactly (see buildBig).
func fromSVD2(g *rand.Rand, exact bool, s0, s1 float64) (Mat2[float64], []float64) {
	if exact {
		return buildBig2(g, Vec2[float64]{s0, s1}), []float64{s0, s1}
	}
	u, v := rot2(g), rot2(g)
	return u.Mul(Diag2(Vec2[float64]{s0, s1})).Mul(v.T()), []float64{s0, s1}
}

var kinds2 = []kind2{
	{"uniform [-1,1]", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) { return randMat2[float64](g), nil }},
	{"rotation", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) { return fromSVD2(g, exact, 1, 1) }},
	{"reflection", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) { return fromSVD2(g, exact, 1, -1) }},
	{"negative det", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) {
		return fromSVD2(g, exact, 1+g.Float64(), -g.Float64())
	}},
	{"nearly singular", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) {
		return fromSVD2(g, exact, 1, math.Pow(10, -4-8*g.Float64()))
	}},
	{"rank 1", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) { return fromSVD2(g, exact, 1+g.Float64(), 0) }},
	{"repeated", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) {
		s := 0.5 + g.Float64()
		return fromSVD2(g, exact, s, s)
	}},
	{"scaled antisymmetric", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) {
		s := sym(g)
		return Mat2[float64]{{0, -s}, {s, 0}}, []float64{math.Abs(s), math.Abs(s)}
	}},
	{"diag(1,-1)", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) {
		return Mat2[float64]{{1, 0}, {0, -1}}, []float64{1, -1}
	}},
	{"zero", func(g *rand.Rand, exact bool) (Mat2[float64], []float64) { return Mat2[float64]{}, []float64{0, 0} }},
}

func testSVD2[T Float](t *testing.T) {
	g := newRng(7)
	eps := epsOf[T]()
	var rec, orth, val, prec, porth worst
	n := decompCount()
	f2 := func(m Mat2[T]) Mat2[float64] {
		return Mat2[float64]{{float64(m[0][0]), float64(m[0][1])}, {float64(m[1][0]), float64(m[1][1])}}
	}
	frob2 := func(m Mat2[float64]) float64 {
		return math.Sqrt(m[0][0]*m[0][0] + m[0][1]*m[0][1] + m[1][0]*m[1][0] + m[1][1]*m[1][1])
	}
	for i := range n {
		k := kinds2[i%len(kinds2)]
		exact := exactBuild(i, len(kinds2))
		m64, sv := k.gen(g, exact)
		m := Mat2[T]{{T(m64[0][0]), T(m64[0][1])}, {T(m64[1][0]), T(m64[1][1])}}
		mf := f2(m)
		scale := frob2(mf)
		if scale == 0 {
			scale = 1
		}
		u, s, v := SVD2(m)
		uf, vf := f2(u), f2(v)
		sf := Vec2[float64]{float64(s[0]), float64(s[1])}
		rec.see(usvResidual(2, e2(uf), e2(vf), e2(mf), func(k int) float64 { return sf[k] })/scale/eps, k.name)
		orth.see(max(orthDev(t, 2, e2(uf)), orthDev(t, 2, e2(vf)))/eps, k.name)
		if !(sf[0] >= math.Abs(sf[1])) {
			t.Fatalf("%s: singular values %v not ordered", k.name, sf)
		}
		if d := mf.Det(); math.Abs(d) > 1e-3*scale*scale && (d < 0) != (sf[1] < 0) {
			t.Fatalf("%s: det %g but s = %v", k.name, d, sf)
		}
		if sv != nil && exact {
			for j := range 2 {
				val.see(math.Abs(sf[j]-sv[j])/max(math.Abs(sv[0]), math.SmallestNonzeroFloat64)/eps, k.name)
			}
		}
		r, p := PolarDecompose2(m)
		if p[0][1] != p[1][0] {
			t.Fatalf("%s: polar s not symmetric: %v", k.name, p)
		}
		rf, pf := f2(r), f2(p)
		prec.see(mulResidual(2, e2(rf), e2(pf), e2(mf))/scale/eps, k.name)
		porth.see(orthDev(t, 2, e2(rf))/eps, k.name)
		// The polar rotation is SVD2's u·vᵀ.
		uv := uf.Mul(vf.T())
		if mf.Det() > 1e-3*scale*scale && maxDev(2, func(i, j int) float64 { return uv[i][j] }, func(i, j int) float64 { return rf[i][j] }) > 64*eps {
			t.Fatalf("%s: polar r %v ≠ u·vᵀ %v", k.name, rf, uv)
		}
	}
	t.Logf("%s SVD2, %d matrices, worst in eps: |m-u·s·vᵀ|_F/|m|_F %v; |uᵀu-I|max over u, v %v; |s-σ|/σ0 (exactly built 1/%d) %v",
		typeName[T](), n, rec, orth, exactEvery, val)
	t.Logf("%s PolarDecompose2: |m-r·s|_F/|m|_F %v; |rᵀr-I|max %v", typeName[T](), prec, porth)
	checkBound(t, "SVD2 reconstruction", rec, 12)
	checkBound(t, "SVD2 orthogonality", orth, 12)
	checkBound(t, "SVD2 values", val, 8)
	checkBound(t, "polar2 reconstruction", prec, 8)
	checkBound(t, "polar2 orthogonality", porth, 8)
	u, s, v := SVD2(Mat2[T]{})
	if u != Ident2[T]() || v != Ident2[T]() || s != (Vec2[T]{}) {
		t.Errorf("SVD2(0) = %v %v %v, want I, 0, I", u, s, v)
	}
}

// TestSVD3Special: exact answers for matrices whose SVD is known.
func TestSVD3Special(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Mat3[float64]
		s    Vec3[float64]
	}{
		{"identity", Ident3[float64](), Vec3[float64]{1, 1, 1}},
		{"diag(3, -2, 1)", Diag3(Vec3[float64]{3, -2, 1}), Vec3[float64]{3, 2, -1}},
		{"diag(1, 2, 3)", Diag3(Vec3[float64]{1, 2, 3}), Vec3[float64]{3, 2, 1}},
		{"swap x,y (det -1)", Mat3[float64]{{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}, Vec3[float64]{1, 1, -1}},
		{"-I", Ident3[float64]().Scale(-1), Vec3[float64]{1, 1, -1}},
		{"e0·e0ᵀ", Mat3[float64]{{1, 0, 0}, {0, 0, 0}, {0, 0, 0}}, Vec3[float64]{1, 0, 0}},
	} {
		u, s, v := SVD3(tc.m)
		for j := range 3 {
			if !near(s[j], tc.s[j], 4e-16, 1) {
				t.Errorf("%s: s = %v, want %v", tc.name, s, tc.s)
				break
			}
		}
		r := u.Mul(Diag3(s)).Mul(v.T()).Sub(tc.m)
		if frob3(r) > 1e-15 {
			t.Errorf("%s: reconstruction error %g", tc.name, frob3(r))
		}
	}
}

// TestDecompScaled: the decompositions keep their relative accuracy for
// matrices scaled towards the ends of the documented range (|entries|
// within 1e±150 for float64, 1e±18 for float32).
func TestDecompScaled(t *testing.T) {
	t.Run("float32", testDecompScaled[float32])
	t.Run("float64", testDecompScaled[float64])
}

func testDecompScaled[T Float](t *testing.T) {
	g := newRng(8)
	eps := epsOf[T]()
	scales := []float64{1e-140, 1e-100, 1e100, 1e150}
	if eps > 1e-10 {
		scales = []float64{1e-12, 1e-6, 1e10, 1e18}
	}
	for _, sc := range scales {
		for i := range 200 {
			k := kinds3[i%len(kinds3)]
			m64, _ := k.gen(g, build64)
			big := 0.0 // the largest |entry| becomes sc
			for _, row := range m64 {
				big = max(big, math.Abs(row[0]), math.Abs(row[1]), math.Abs(row[2]))
			}
			if big > 0 {
				m64 = m64.Scale(sc / big)
			}
			m := conv3[T](m64)
			mf := f64(m)
			scale := frob3(mf)
			if scale == 0 {
				scale = 1
			}
			u, s, v := SVD3(m)
			sf := f64v(s)
			if r := usvResidual(3, e3(f64(u)), e3(f64(v)), e3(mf), func(k int) float64 { return sf[k] }) / scale / eps; !(r <= 20) {
				t.Errorf("scale %g, %s: SVD3 reconstruction %.1f eps", sc, k.name, r)
			}
			l, q := SymEig3(m.Add(m.T()).Scale(0.5))
			lf, qf, ms := f64v(l), f64(q), f64(m.Add(m.T()).Scale(0.5))
			if r := residual(3, func(i, j int) ([]float64, []float64) {
				return []float64{ms[i][0], ms[i][1], ms[i][2], qf[i][j]}, []float64{qf[0][j], qf[1][j], qf[2][j], -lf[j]}
			}) / max(frob3(ms), math.SmallestNonzeroFloat64) / eps; !(r <= 16) && frob3(ms) > 0 {
				t.Errorf("scale %g, %s: SymEig3 residual %.1f eps", sc, k.name, r)
			}
		}
	}
	// NaN in, NaN out: no panic, no hang.
	nan := T(math.NaN())
	_, s, _ := SVD3(Mat3[T]{{nan, 0, 0}, {0, 1, 0}, {0, 0, 1}})
	l, _ := SymEig3(Mat3[T]{{nan, 0, 0}, {0, 1, 0}, {0, 0, 1}})
	if !math.IsNaN(float64(s[0])+float64(s[1])+float64(s[2])) || !math.IsNaN(float64(l[0])+float64(l[1])+float64(l[2])) {
		t.Errorf("NaN input: s = %v, λ = %v, want a NaN", s, l)
	}
}

// benchMats is a fixed set of matrices for the benchmarks, of every kind.
func benchMats[T Float]() []Mat3[T] {
	g := newRng(9)
	ms := make([]Mat3[T], 64)
	for i := range ms {
		m, _ := kinds3[i%len(kinds3)].gen(g, build64)
		ms[i] = conv3[T](m)
	}
	return ms
}

func BenchmarkSVD3(b *testing.B) {
	b.Run("float32", benchDecomp(func(m Mat3[float32]) float32 { _, s, _ := SVD3(m); return s[0] }))
	b.Run("float64", benchDecomp(func(m Mat3[float64]) float64 { _, s, _ := SVD3(m); return s[0] }))
}

func BenchmarkPolarDecompose3(b *testing.B) {
	b.Run("float32", benchDecomp(func(m Mat3[float32]) float32 { r, _ := PolarDecompose3(m); return r[0][0] }))
	b.Run("float64", benchDecomp(func(m Mat3[float64]) float64 { r, _ := PolarDecompose3(m); return r[0][0] }))
}

func BenchmarkSymEig3(b *testing.B) {
	sym := func(m Mat3[float32]) Mat3[float32] { return m.Add(m.T()) }
	b.Run("float32", benchDecomp(func(m Mat3[float32]) float32 { l, _ := SymEig3(sym(m)); return l[0] }))
	b.Run("float64", benchDecomp(func(m Mat3[float64]) float64 { l, _ := SymEig3(m.Add(m.T())); return l[0] }))
}

func BenchmarkSVD2(b *testing.B) {
	run := func(b *testing.B) {
		g := newRng(10)
		ms := make([]Mat2[float32], 64)
		for i := range ms {
			ms[i] = randMat2[float32](g)
		}
		var acc float32
		i := 0
		for b.Loop() {
			_, s, _ := SVD2(ms[i%len(ms)])
			acc += s[0]
			i++
		}
		_ = acc
	}
	b.Run("float32", run)
}

func benchDecomp[T Float](f func(Mat3[T]) T) func(*testing.B) {
	return func(b *testing.B) {
		ms := benchMats[T]()
		var acc T
		i := 0
		for b.Loop() {
			acc += f(ms[i%len(ms)])
			i++
		}
		_ = acc
	}
}
