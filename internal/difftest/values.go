package difftest

// The value kernels of the differential tests: locals of struct and array
// types, methods with value and pointer receivers, generic helpers, and
// qd's vectors, matrices, quaternions, decompositions and random numbers,
// each thread building its values from array parameters. Like kernels.go
// this is ordinary Go of the package, run natively as the reference, and
// compiled by Source with the other two files.

import (
	"math"

	"github.com/quadrants-go/qd"
)

// Meters is a defined scalar type with methods.
type Meters float32

const gravity Meters = 9.75 // a typed constant of a defined type

// Feet converts m; a value receiver.
func (m Meters) Feet() float32 { return float32(m) * 3.28084 }

// Double doubles m in place; a pointer receiver on a scalar.
func (m *Meters) Double() { *m *= 2 }

// body is a particle: nested values.
type body struct {
	X, V qd.Vec3[float32]
	M    Meters
	Tag  [2]int32
}

// Step advances the position; a pointer receiver.
func (p *body) Step(dt float32) {
	p.X = p.X.Add(p.V.Scale(dt))
	p.Tag[1]++
}

// Energy is the kinetic energy; a value receiver.
func (p body) Energy() float32 { return 0.5 * float32(p.M) * p.V.Norm2() }

// pair is a generic struct.
type pair[T qd.Float] struct{ A, B T }

// Sum adds the two halves; a method of a generic type.
func (p pair[T]) Sum() T { return p.A + p.B }

// Swap exchanges the halves through a pointer receiver.
func (p *pair[T]) Swap() { p.A, p.B = p.B, p.A }

// lerp is a generic helper with a constant converted to its type
// parameter.
func lerp[T qd.Float](a, b, t T) T { return a + T(t*(b-a)) + T(0.5)*0 }

// vec3 reads a Vec3 from row i of a.
func vec3[T qd.Float](a [][]T, i, off int) qd.Vec3[T] {
	return qd.Vec3[T]{a[i][off], a[i][off+1], a[i][off+2]}
}

// put writes the leaves of v to out[i][off:].
func put3[T qd.Float](out [][]T, i, off int, v qd.Vec3[T]) {
	for k := range 3 {
		out[i][off+k] = v[k]
	}
}

// vecOps applies every vector operation to rows of a and b.
//
//qd:kernel
func vecOps(a, b, out [][]float32) {
	for i := range len(a) {
		u, v := vec3(a, i, 0), vec3(b, i, 0)
		put3(out, i, 0, u.Add(v))
		put3(out, i, 3, u.Sub(v).Scale(2))
		put3(out, i, 6, u.Mul(v).Neg())
		put3(out, i, 9, u.Cross(v))
		put3(out, i, 12, u.Normalized())
		put3(out, i, 15, u.Min(v).Add(u.Max(v).Abs()))
		out[i][18] = u.Dot(v)
		out[i][19] = u.Norm() + v.Sum()
		w := qd.Vec2[float32]{a[i][3], b[i][3]}
		out[i][20] = w.Cross(w.Add(qd.Vec2[float32]{1, 2})) + w.Normalized()[1]
		q := qd.Vec4[float32]{a[i][0], a[i][1], b[i][2], b[i][3]}
		out[i][21] = q.Dot(q.Div(qd.Vec4[float32]{2, 4, 8, 16})) + q.Norm()
		o := u.Outer(v)
		out[i][22] = o[1][2] + o.Trace()
		if u == v || u.Add(v) != v.Add(u) {
			out[i][23] = 1
		}
	}
}

// mat3Of reads a Mat3 from the first nine entries of row i of a.
func mat3Of(a [][]float64, i int) qd.Mat3[float64] {
	var m qd.Mat3[float64]
	for r := range 3 {
		for c := range 3 {
			m[r][c] = a[i][3*r+c]
		}
	}
	return m
}

// putMat3 writes m to out[i][off:off+9].
func putMat3(out [][]float64, i, off int, m qd.Mat3[float64]) {
	for r := range 3 {
		for c := range 3 {
			out[i][off+3*r+c] = m[r][c]
		}
	}
}

// matOps applies the matrix operations of Mat2, Mat3 and Mat4.
//
//qd:kernel
func matOps(a, out [][]float64) {
	for i := range len(a) {
		m := mat3Of(a, i)
		n := m.T().Add(qd.Ident3[float64]())
		putMat3(out, i, 0, m.Inv())
		putMat3(out, i, 9, m.Mul(n).Sub(n.Scale(0.5)))
		v := m.MulVec(qd.Vec3[float64]{1, -2, 3})
		out[i][18] = m.Det() + v[0] + v[1]*v[2] + m.Trace()
		m2 := qd.Mat2[float64]{{a[i][0], a[i][1]}, {a[i][2], a[i][3]}}
		inv2 := m2.Inv().Mul(m2.T())
		out[i][19] = inv2[0][0] + inv2[1][1]*m2.Det() + m2.MulVec(qd.Vec2[float64]{1, 2})[1]
		var m4 qd.Mat4[float64]
		for r := range 4 {
			for c := range 4 {
				m4[r][c] = a[i][(4*r+c)%9] + float64(r-c)
			}
		}
		p := m4.Inv().Mul(m4).Add(qd.Diag4(qd.Vec4[float64]{1, 2, 3, 4}))
		out[i][20] = m4.Det() + p[3][0] + p.T()[0][3] + p.MulVec(qd.Vec4[float64]{1, 0, 0, 1})[2]
	}
}

// decomps calls every per-thread decomposition on float64 and float32
// matrices built from a.
//
//qd:kernel
func decomps(a, out [][]float64, out32 [][]float32) {
	for i := range len(a) {
		m := mat3Of(a, i)
		u, s, v := qd.SVD3(m)
		putMat3(out, i, 0, u)
		putMat3(out, i, 9, v)
		out[i][18], out[i][19], out[i][20] = s[0], s[1], s[2]
		r, sym := qd.PolarDecompose3(m)
		putMat3(out, i, 21, r.Mul(sym))
		vals, vecs := qd.SymEig3(m)
		putMat3(out, i, 30, vecs)
		out[i][39], out[i][40], out[i][41] = vals[0], vals[1], vals[2]
		m2 := qd.Mat2[float64]{{a[i][0], a[i][1]}, {a[i][3], a[i][4]}}
		u2, s2, v2 := qd.SVD2(m2)
		r2, p2 := qd.PolarDecompose2(m2)
		out[i][42] = u2[0][1] + s2[0] + s2[1] + v2[1][0] + r2[1][0] + p2[0][1]

		var f qd.Mat3[float32]
		for k := range 9 {
			f[k/3][k%3] = float32(a[i][k])
		}
		fu, fs, fv := qd.SVD3(f)
		back := fu.Mul(qd.Diag3(fs)).Mul(fv.T())
		for k := range 9 {
			out32[i][k] = back[k/3][k%3]
		}
		fr, _ := qd.PolarDecompose3(f)
		out32[i][9] = fr.Det()
	}
}

// quats multiplies, conjugates, normalizes and rotates quaternions.
//
//qd:kernel
func quats(a, out [][]float32) {
	for i := range len(a) {
		q := qd.Quat[float32]{a[i][0], a[i][1], a[i][2], a[i][3]}.Normalized()
		p := qd.Quat[float32]{a[i][4], a[i][5], a[i][6], a[i][7]}
		pq := q.Mul(p).Conj()
		rot := q.Rotate(qd.Vec3[float32]{1, 2, 3})
		m := q.Mat3()
		out[i][0] = pq[0] + pq[1] + pq[2] + pq[3] + q.Norm()
		out[i][1], out[i][2], out[i][3] = rot[0], rot[1], rot[2]
		out[i][4] = m[0][1] + m[2][2] + qd.QuatIdent[float32]()[3]
	}
}

// structs uses struct and array locals, methods, generic types and
// helpers, composite literals, copies, comparisons and dynamic indices.
//
//qd:kernel
func structs(x []float32, k []int32, out [][]float32) {
	for i := range len(x) {
		p := body{X: qd.Vec3[float32]{x[i], 1, 2}, V: qd.Vec3[float32]{0.5, -x[i], 3}, M: gravity}
		q := p // a copy
		q.Step(0.25)
		q.Step(0.25)
		p.V[0] += 1
		out[i][0] = q.X[0] + q.X[1] + float32(q.Tag[1]) + p.V[0]
		out[i][1] = p.Energy() + q.M.Feet()
		m := p.M
		m.Double()
		p.M.Double()
		out[i][2] = float32(m + p.M)

		// Dynamic indices: k[i] is in [0, 3), as Go needs.
		j := k[i]
		var arr [3]qd.Vec2[float32]
		arr[j] = qd.Vec2[float32]{x[i], 2 * x[i]}
		arr[(j+1)%3][1] = 7
		arr[j][0] *= 3
		out[i][3] = arr[0][0] + arr[1][1]*2 + arr[2][0]*3 + arr[j][1]
		grid := [2][3]float32{{1, 2, 3}, {4, 5, 6}}
		grid[j%2][j] -= x[i]
		out[i][4] = grid[1-j%2][2-j] + grid[0][0] + grid[1][2]

		// Swaps of values.
		a, b := qd.Vec3[float32]{1, 2, 3}, qd.Vec3[float32]{x[i], 0, -1}
		a, b = b, a.Neg()
		out[i][5] = a[0] + b[0] + b[2]

		pr := pair[float32]{A: x[i]}
		pr.Swap()
		out[i][6] = pr.Sum() + pr.B + lerp(pr.A, pr.B, 0.25) + float32(lerp[float64](1, 2, 0.5))
		if pr == (pair[float32]{0, x[i]}) && arr != [3]qd.Vec2[float32]{} {
			out[i][7] = 1
		}
		var zero body
		if zero.X == (qd.Vec3[float32]{}) && zero.Tag[0] == 0 {
			out[i][7] += 2
		}
		switch pr {
		case pair[float32]{0, x[i]}:
			out[i][7] += 4
		case pair[float32]{}:
			out[i][7] += 8
		}

		// Range over a local array; a loop with constant bounds.
		sum := float32(0)
		for n, v := range arr {
			sum += v[0]*float32(n) + v[1]
		}
		for n := 2; n >= 0; n-- {
			sum += grid[0][n] * float32(n)
		}
		out[i][8] = sum
	}
}

// rands draws from a qd.Rand per element: a pointer receiver on a local.
//
//qd:kernel
func rands(seed uint64, u32 []uint32, u64 []uint64, f32 []float32, f64 []float64) {
	for i := range len(u32) {
		r := qd.NewRand(seed, uint64(i))
		u32[i] = r.Uint32()
		u64[i] = r.Uint64()
		f32[i] = r.Float32()
		f64[i] = r.Float64() + float64(r.Uint32()>>30)
	}
}

// generics instantiates helpers for both float types and uses the
// precision branch of the library (T(1+1e-10) == 1).
//
//qd:kernel
func generics(x []float64, out [][]float64) {
	for i := range len(x) {
		out[i][0] = eps[float64]() + float64(eps[float32]())
		out[i][1] = lerp(x[i], 1, 0.125)
		f := pair[float64]{x[i], 2}
		out[i][2] = f.Sum() + math.Pi
	}
}

// eps is the precision test of decomp.go's jacobiTan.
func eps[T qd.Float]() T {
	e := T(0x1p-106)
	if T(1+1e-10) == 1 {
		e = 0x1p-48
	}
	return e
}

// gridCell is an element of the records kernel's grids.
type gridCell struct {
	V   qd.Vec2[float32]
	M   float32
	Hit int32
}

// records works on arrays of structs in device memory: whole elements
// loaded and stored, fields and components read and written in place, op=
// and ++ on leaves, pointer-receiver methods on an element and on a field
// of one, an element copied to another, dynamic indices into arrays inside
// elements, and atomics on leaves of shared cells (k[i] is in [0,
// len(hits)), as Go needs).
//
//qd:kernel
func records(ps []body, cells [][]gridCell, k []int32, hits []gridCell) {
	for i := range len(ps) {
		q := ps[i]
		q.Step(0.5)
		ps[i].V[1] += q.X[0]
		ps[i].Tag[0] = int32(i)
		ps[i].M.Double()
		ps[i].Step(0.25)
		for j := range 3 {
			cells[i][j] = gridCell{V: qd.Vec2[float32]{q.V[j], q.X[j]}.Scale(float32(j)), M: float32(q.M)}
			cells[i][j].V[0] -= ps[i].X[j]
			cells[i][j].Hit++
		}
		cells[i][1] = cells[i][2]
		// Dynamic indices inside elements: k[i] is in [0, 3).
		j := k[i]
		ps[i].X[j] += ps[i].V[2-j]
		cells[i][0].V[j%2] = ps[i].X[j]
		cells[i][2].V[1-j%2]++
		if ps[i].Energy() > 1 {
			ps[i] = q
		}
		qd.AtomicAdd(&hits[k[i]].Hit, 1)
		qd.AtomicAdd(&hits[k[i]].V[1], 0.5)
	}
}

// vecCell is an element of the vecAtomics kernel's shared cells: 16 bytes,
// so on sm_90 its V is one vector reduction (red.global.add.v2.f32).
type vecCell struct {
	V qd.Vec2[float32]
	M float32
	N int32
}

// vecAtomics adds vectors atomically (qd.AtomicAddVec) into a few shared
// elements from every iteration: a Vec2 field of a struct, whole Vec4 and
// [3]int64 elements, and a reduction (sum's element never varies with i).
// The float components are small integers, so every order of the adds
// gives the same sums, bit for bit. k[i] is in [0, len(cells)).
//
//qd:kernel
func vecAtomics(k []int32, cells []vecCell, quads []qd.Vec4[float32], ints [][3]int64, sum []qd.Vec2[float64]) {
	for i := range len(k) {
		c := k[i]
		f := float32(i % 7)
		qd.AtomicAddVec(&cells[c].V, qd.Vec2[float32]{f, 1})
		qd.AtomicAdd(&cells[c].N, 1)
		qd.AtomicAddVec(&quads[c%2], qd.Vec4[float32]{1, f, -f, float32(c)})
		qd.AtomicAddVec(&ints[c], [3]int64{1, int64(i), -int64(c) << 40})
		qd.AtomicAddVec(&sum[0], qd.Vec2[float64]{float64(i), 1})
	}
}

// small is a defined 8-bit type: arithmetic on it wraps as on uint8.
type small uint8

// smallInts computes with 8- and 16-bit integers where they overflow:
// Go wraps at their width, and the compiled kernels (which compute in 32
// bits and truncate) must agree.
//
//qd:kernel
func smallInts(a []int8, b []uint8, c [][]int16, u []uint16, f []float32, out [][]int32) {
	for i := range len(a) {
		x, y := a[i], b[i]
		s := x + 127 // overflows for every x > 0
		p := y * 2   // overflows for y ≥ 128
		q := small(y) + small(200)
		d := x / -1 // -128 / -1 wraps to -128
		m := c[i][0] << (uint(y) % 20)
		r := c[i][1] >> (uint(x) % 20)
		w := u[i]*u[i] - 7
		n := -x
		bn := ^y
		v := int8(f[i]) // in range: f is in (-128, 128)
		g := uint8(f[i] + 128)
		var acc int16 = 30000
		for range 3 {
			acc += c[i][0]
		}
		lt := 0
		if x < int8(y) {
			lt = 1
		}
		out[i][0] = int32(s)
		out[i][1] = int32(p)
		out[i][2] = int32(q)
		out[i][3] = int32(d)
		out[i][4] = int32(m)
		out[i][5] = int32(r)
		out[i][6] = int32(w)
		out[i][7] = int32(n)
		out[i][8] = int32(bn)
		out[i][9] = int32(v)
		out[i][10] = int32(g)
		out[i][11] = int32(acc)
		out[i][12] = int32(lt)
		out[i][13] = int32(min(x, int8(y), -3))
		a[i] = x * x
		b[i] = y + 100
		c[i][0] = m % 7
		u[i] = w / 3
	}
}

// fourDims walks a 4-D array: NDRange3 over the leading dimensions, a
// loop over the last.
//
//qd:kernel
func fourDims(x [][][][]float32, out [][][]float32) {
	for p := range qd.NDRange3(len(x), len(x[0]), len(x[0][0])) {
		var acc float32
		for l := range len(x[0][0][0]) {
			acc += x[p.I][p.J][p.K][l]
			x[p.I][p.J][p.K][l] = acc * float32(l+1)
		}
		out[p.I][p.J][p.K] = acc
	}
}
