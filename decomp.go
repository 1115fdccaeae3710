package qd

// Per-thread matrix decompositions, what MPM and FEM kernels call on every
// particle or element: SVD2, SVD3, PolarDecompose2, PolarDecompose3 and
// SymEig3. All are straight-line code plus a fixed number of Jacobi sweeps:
// no data-dependent loop, a few branches (a rotation skipped when already
// diagonal, three compare-and-swaps to sort, a fallback basis vector for
// rank-deficient input), so GPU threads stay in step.
//
// Conventions (those of McAdams et al.'s 3x3 SVD, "Computing the singular
// value decomposition of 3x3 matrices with minimal branching and elementary
// floating point operations", 2011, which many MPM codes use): U and V are
// rotations, det +1, never reflections; singular values are sorted by
// decreasing magnitude; the first ones are ≥ 0 and the last one carries the
// sign of det(m), so that m = U·diag(s)·Vᵀ holds with rotations even when m
// inverts (det < 0), as an inverted element does in FEM, and U·Vᵀ is the
// rotation of the polar decomposition.
//
// The measured accuracies (worst cases over 10^5 random matrices of several
// kinds, float32 and float64) are in docs/accuracy.md; the tests assert
// them. Every product that feeds an addition is written T(x*y) so that the
// native run rounds as the GPU does. The largest |entry| should lie within
// about [1e-140, 1e150] for float64 and [1e-12, 1e18] for float32
// (TestDecompScaled): the algorithms square entries and do not rescale, so
// beyond that squared norms overflow or lose bits in the subnormal range.

// jacobiSweeps is the number of cyclic Jacobi sweeps of [SVD3] and [SymEig3],
// the same for float32 and float64. Jacobi converges quadratically, and
// with the threshold of jacobiTan a converged sweep changes nothing: on the
// 10^5 test matrices of every kind (docs/accuracy.md) three sweeps are not
// enough, four give results identical to six, and the fifth is a margin.
const jacobiSweeps = 5

// unitDir returns (x, y)/|(x, y)| as a cosine-sine pair, or (1, 0) when x
// and y are both zero. Scaling by the larger magnitude first keeps the
// squares from overflowing or underflowing.
func unitDir[T Float](x, y T) (c, s T) {
	m := max(Abs(x), Abs(y))
	if m == 0 {
		return 1, 0
	}
	xs, ys := x/m, y/m
	n := Sqrt(T(xs*xs) + T(ys*ys))
	return xs / n, ys / n
}

// jacobiTan returns the tangent t of the Jacobi rotation angle that zeroes
// the off-diagonal entry apq of the symmetric 2x2 block [app apq; apq aqq]
// (equivalently, that makes two columns with squared norms app, aqq and dot
// product apq orthogonal): the root of t² + 2τt - 1 = 0, τ = (aqq-app)/(2apq),
// of smaller magnitude, so |t| ≤ 1. For a tiny apq, τ² overflows to +Inf and
// t correctly comes out as ±0.
//
// It returns 0, no rotation, when apq is negligible: apq² ≤ eps²·|app·aqq|
// (eps the unit roundoff of T), the classical threshold of Jacobi methods
// (Demmel and Veselić, 1992). Rotating there would only turn rounding
// noise into large rotations, and each rotation costs an ulp or two of
// orthogonality: for a rotation matrix or a multiple of I, where every
// off-diagonal entry is noise, the threshold keeps u, v or the eigenvectors
// exact. The test is written (apq/app)·(apq/aqq) ≤ eps², in ratios, so
// that it neither overflows nor underflows where squared entries would.
func jacobiTan[T Float](app, aqq, apq T) T {
	// The precision test T(1+1e-10) == 1 holds for float32 only.
	e2 := T(0x1p-106)
	if T(1+1e-10) == 1 {
		e2 = 0x1p-48
	}
	if apq == 0 || T(Abs(apq/app)*Abs(apq/aqq)) <= e2 {
		return 0
	}
	tau := (aqq - app) / (2 * apq)
	t := 1 / (Abs(tau) + Sqrt(1+T(tau*tau)))
	if tau < 0 {
		t = -t
	}
	return t
}

// rotCols rotates the column pair (p, q) by the Jacobi rotation of tangent
// t: p' = c·p - s·q, q' = s·p + c·q with c = 1/√(1+t²), s = t·c.
func rotCols[T Float](p, q Vec3[T], c, s T) (Vec3[T], Vec3[T]) {
	return Vec3[T]{T(c*p[0]) - T(s*q[0]), T(c*p[1]) - T(s*q[1]), T(c*p[2]) - T(s*q[2])},
		Vec3[T]{T(s*p[0]) + T(c*q[0]), T(s*p[1]) + T(c*q[1]), T(s*p[2]) + T(c*q[2])}
}

// cosSin returns the cosine and sine of the Jacobi rotation of tangent t.
func cosSin[T Float](t T) (c, s T) {
	c = 1 / Sqrt(1+T(t*t))
	return c, T(t * c)
}

// orthoCols is one step of one-sided Jacobi: it rotates the columns bp, bq
// of B = m·V until they are orthogonal, and the columns vp, vq of V alike,
// so that B = m·V still holds.
func orthoCols[T Float](bp, bq, vp, vq Vec3[T]) (Vec3[T], Vec3[T], Vec3[T], Vec3[T]) {
	t := jacobiTan(bp.Norm2(), bq.Norm2(), bp.Dot(bq))
	c, s := cosSin(t)
	bp2, bq2 := rotCols(bp, bq, c, s)
	vp2, vq2 := rotCols(vp, vq, c, s)
	return bp2, bq2, vp2, vq2
}

// cols3 returns the matrix whose columns are c0, c1 and c2.
func cols3[T Float](c0, c1, c2 Vec3[T]) Mat3[T] {
	return Mat3[T]{{c0[0], c1[0], c2[0]}, {c0[1], c1[1], c2[1]}, {c0[2], c1[2], c2[2]}}
}

// perpUnit returns a unit vector orthogonal to the unit vector u: the axis
// along which u is smallest, minus its component along u, normalized (for
// u = x it is y, so that the zero matrix gets U = I).
func perpUnit[T Float](u Vec3[T]) Vec3[T] {
	e := Vec3[T]{0, 0, 1}
	ax, ay, az := Abs(u[0]), Abs(u[1]), Abs(u[2])
	if ax <= ay && ax <= az {
		e = Vec3[T]{1, 0, 0}
	} else if ay <= az {
		e = Vec3[T]{0, 1, 0}
	}
	return e.Sub(u.Scale(u.Dot(e))).Normalized()
}

// SVD3 returns the singular value decomposition m = u·diag(s)·vᵀ of a 3x3
// matrix: u and v rotations (orthonormal, det +1), |s[0]| ≥ |s[1]| ≥ |s[2]|,
// s[0], s[1] ≥ 0 and s[2] of the sign of det(m) (see the conventions at the
// top of decomp.go). The zero matrix gives u = v = I, s = 0.
//
// Algorithm: one-sided Jacobi (Hestenes): jacobiSweeps cyclic sweeps of
// plane rotations on the right orthogonalize the columns of B = m·v; their
// norms are the singular values, sorted; u's first two columns are B's
// normalized (Gram–Schmidt, twice), the third their cross product, so u is a
// rotation by construction, and s[2] takes the sign of B₂ along it. One-sided
// Jacobi never forms mᵀm, whose rounding would cost a small singular value
// σₖ an error of order eps·σ₀²/σₖ; here it stays of order eps·σ₀.
// Accuracy: docs/accuracy.md.
func SVD3[T Float](m Mat3[T]) (u Mat3[T], s Vec3[T], v Mat3[T]) {
	b0 := Vec3[T]{m[0][0], m[1][0], m[2][0]}
	b1 := Vec3[T]{m[0][1], m[1][1], m[2][1]}
	b2 := Vec3[T]{m[0][2], m[1][2], m[2][2]}
	v0, v1, v2 := Vec3[T]{1, 0, 0}, Vec3[T]{0, 1, 0}, Vec3[T]{0, 0, 1}
	for range jacobiSweeps {
		b0, b1, v0, v1 = orthoCols(b0, b1, v0, v1)
		b0, b2, v0, v2 = orthoCols(b0, b2, v0, v2)
		b1, b2, v1, v2 = orthoCols(b1, b2, v1, v2)
	}
	// Sort by decreasing norm. Each swap negates one of the two columns
	// (of B and V alike) so that det v stays +1 and B = m·v still holds.
	n0, n1, n2 := b0.Norm2(), b1.Norm2(), b2.Norm2()
	if n0 < n1 {
		b0, b1, v0, v1, n0, n1 = b1, b0.Neg(), v1, v0.Neg(), n1, n0
	}
	if n0 < n2 {
		b0, b2, v0, v2, n0, n2 = b2, b0.Neg(), v2, v0.Neg(), n2, n0
	}
	if n1 < n2 {
		b1, b2, v1, v2, n1, n2 = b2, b1.Neg(), v2, v1.Neg(), n2, n1
	}
	// The singular values are the column norms, which keeps them sorted
	// exactly even when two agree to rounding.
	s0, s1, s2 := Sqrt(n0), Sqrt(n1), Sqrt(n2)
	u0 := Vec3[T]{1, 0, 0}
	if s0 > 0 {
		u0 = b0.Scale(1 / s0)
	}
	// Gram–Schmidt twice: after Jacobi b1 ⊥ b0 to rounding already, and
	// the second pass makes u1 ⊥ u0 to rounding whatever is left.
	w := b1.Sub(u0.Scale(u0.Dot(b1)))
	w = w.Sub(u0.Scale(u0.Dot(w)))
	nw := w.Norm()
	var u1 Vec3[T]
	if nw > T(s0*0x1p-60) {
		u1 = w.Scale(1 / nw)
	} else {
		// Rank ≤ 1 to far below rounding: w is noise, and any unit
		// vector ⊥ u0 will do; point it along b1 for what b1 is worth.
		u1 = perpUnit(u0)
		if u1.Dot(b1) < 0 {
			u1 = u1.Neg()
		}
	}
	// u2 completes a rotation; s2 takes the sign of b2 along it, which
	// is the sign of det(m) since det v = +1.
	u2 := u0.Cross(u1)
	if u2.Dot(b2) < 0 {
		s2 = -s2
	}
	return cols3(u0, u1, u2), Vec3[T]{s0, s1, s2}, cols3(v0, v1, v2)
}

// SVD2 returns the singular value decomposition m = u·diag(s)·vᵀ of a 2x2
// matrix with the conventions of [SVD3]: u and v rotations, s[0] ≥ |s[1]|,
// s[0] ≥ 0, s[1] of the sign of det(m). The zero matrix gives u = v = I.
//
// Algorithm, closed form: the rotation r of [PolarDecompose2] makes rᵀm
// symmetric; one Jacobi rotation j diagonalizes that; u = r·j, v = j, then
// the order is fixed by a quarter-turn of both (which swaps the values and
// keeps the rotations). Accuracy: docs/accuracy.md.
func SVD2[T Float](m Mat2[T]) (u Mat2[T], s Vec2[T], v Mat2[T]) {
	rc, rs := unitDir(m[0][0]+m[1][1], m[1][0]-m[0][1])
	// p = rᵀ·m, symmetric up to rounding; average its off-diagonal.
	p00 := T(rc*m[0][0]) + T(rs*m[1][0])
	p01 := T(rc*m[0][1]) + T(rs*m[1][1])
	p10 := T(rc*m[1][0]) - T(rs*m[0][0])
	p11 := T(rc*m[1][1]) - T(rs*m[0][1])
	sym := (p01 + p10) * 0.5
	t := jacobiTan(p00, p11, sym)
	jc, js := cosSin(t)
	e0, e1 := p00-T(t*sym), p11+T(t*sym)
	// v = j = [jc js; -js jc]; u = r·j, r = [rc -rs; rs rc].
	v = Mat2[T]{{jc, js}, {-js, jc}}
	uc := T(rc*jc) + T(rs*js) // u is the rotation by angle(r) - angle(j)
	us := T(rs*jc) - T(rc*js)
	if Abs(e0) < Abs(e1) {
		// A quarter turn of u and v: (col0, col1) -> (col1, -col0).
		e0, e1 = e1, e0
		uc, us = -us, uc
		v = Mat2[T]{{v[0][1], -v[0][0]}, {v[1][1], -v[1][0]}}
	}
	if e0 < 0 {
		// -I is a rotation in 2-D: negate u and both values.
		e0, e1, uc, us = -e0, -e1, -uc, -us
	}
	return Mat2[T]{{uc, -us}, {us, uc}}, Vec2[T]{e0, e1}, v
}

// PolarDecompose2 returns the polar decomposition m = r·s of a 2x2 matrix:
// r the rotation (det +1) closest to m, s = rᵀ·m symmetric. s is positive
// semi-definite when det(m) ≥ 0; when det(m) < 0 it has one negative
// eigenvalue, so that r is still a rotation, as MPM and FEM codes need. The
// zero matrix gives r = I. Closed form: r's angle is atan2(m10-m01, m00+m11).
func PolarDecompose2[T Float](m Mat2[T]) (r, s Mat2[T]) {
	c, sn := unitDir(m[0][0]+m[1][1], m[1][0]-m[0][1])
	p01 := T(c*m[0][1]) + T(sn*m[1][1])
	p10 := T(c*m[1][0]) - T(sn*m[0][0])
	sym := (p01 + p10) * 0.5
	return Mat2[T]{{c, -sn}, {sn, c}},
		Mat2[T]{{T(c*m[0][0]) + T(sn*m[1][0]), sym}, {sym, T(c*m[1][1]) - T(sn*m[0][1])}}
}

// PolarDecompose3 returns the polar decomposition m = r·s of a 3x3 matrix,
// r = u·vᵀ a rotation (det +1) and s = v·diag(σ)·vᵀ symmetric (exactly: it
// is assembled symmetrically), from [SVD3] and with its sign convention: s is
// positive semi-definite when det(m) ≥ 0 and has one negative eigenvalue
// when det(m) < 0. The zero matrix gives r = I, s = 0.
func PolarDecompose3[T Float](m Mat3[T]) (r, s Mat3[T]) {
	u, sig, v := SVD3(m)
	r = u.Mul(v.T())
	for i := range 3 {
		for j := range 3 {
			s[i][j] = T(T(sig[0]*v[i][0])*v[j][0]) + T(T(sig[1]*v[i][1])*v[j][1]) + T(T(sig[2]*v[i][2])*v[j][2])
		}
	}
	// The sum above multiplies v[i][k]·v[j][k] in a different order for
	// (i, j) and (j, i); copy the upper triangle so s is exactly symmetric.
	s[1][0], s[2][0], s[2][1] = s[0][1], s[0][2], s[1][2]
	return r, s
}

// symRot applies the Jacobi rotation of tangent t that zeroes apq of a
// symmetric matrix to the entries it changes: the pivots app, aqq and the
// entries arp, arq of the remaining index r.
func symRot[T Float](app, aqq, apq, arp, arq, t, c, s T) (T, T, T, T) {
	return app - T(t*apq), aqq + T(t*apq), T(c*arp) - T(s*arq), T(s*arp) + T(c*arq)
}

// SymEig3 returns the eigenvalues, ascending, and the unit eigenvectors of
// the symmetric part (m + mᵀ)/2 of a 3x3 matrix: m·vectors[:, k] =
// values[k]·vectors[:, k], the eigenvectors being the COLUMNS of vectors,
// which is a rotation (orthonormal, det +1). For repeated eigenvalues any
// orthonormal basis of the eigenspace may come out.
//
// Algorithm: cyclic two-sided Jacobi, jacobiSweeps sweeps of the three
// plane rotations, then a sort whose swaps negate one column to keep det +1.
// Eigenvalues are accurate to a few ulp of the largest |eigenvalue| (not of
// each one); see docs/accuracy.md.
func SymEig3[T Float](m Mat3[T]) (values Vec3[T], vectors Mat3[T]) {
	a00, a11, a22 := m[0][0], m[1][1], m[2][2]
	a01 := (m[0][1] + m[1][0]) * 0.5
	a02 := (m[0][2] + m[2][0]) * 0.5
	a12 := (m[1][2] + m[2][1]) * 0.5
	v0, v1, v2 := Vec3[T]{1, 0, 0}, Vec3[T]{0, 1, 0}, Vec3[T]{0, 0, 1}
	for range jacobiSweeps {
		// (p, q) = (0, 1), r = 2
		t := jacobiTan(a00, a11, a01)
		c, s := cosSin(t)
		a00, a11, a02, a12 = symRot(a00, a11, a01, a02, a12, t, c, s)
		a01 = 0
		v0, v1 = rotCols(v0, v1, c, s)
		// (p, q) = (0, 2), r = 1
		t = jacobiTan(a00, a22, a02)
		c, s = cosSin(t)
		a00, a22, a01, a12 = symRot(a00, a22, a02, a01, a12, t, c, s)
		a02 = 0
		v0, v2 = rotCols(v0, v2, c, s)
		// (p, q) = (1, 2), r = 0
		t = jacobiTan(a11, a22, a12)
		c, s = cosSin(t)
		a11, a22, a01, a02 = symRot(a11, a22, a12, a01, a02, t, c, s)
		a12 = 0
		v1, v2 = rotCols(v1, v2, c, s)
	}
	if a00 > a11 {
		a00, a11, v0, v1 = a11, a00, v1, v0.Neg()
	}
	if a00 > a22 {
		a00, a22, v0, v2 = a22, a00, v2, v0.Neg()
	}
	if a11 > a22 {
		a11, a22, v1, v2 = a22, a11, v2, v1.Neg()
	}
	return Vec3[T]{a00, a11, a22}, cols3(v0, v1, v2)
}
