package difftest

// The kernels of the differential tests (diff_test.go). This file is
// ordinary Go of the package, so every kernel is also a Go function that
// the tests call directly as the serial reference; Source embeds this very
// file and the tests compile it with qd.Compile. Keep it to the kernel
// subset: everything here is compiled. The arith* and atomics* kernels,
// one pattern per type, are generated into kernels_gen.go by
// internal/diffgen and compiled with this file as one source: they use its
// constants.

import (
	"math"

	"github.com/quadrants-go/qd"
)

// Package-level constants: typed and untyped, folded by the front end
// exactly as the Go compiler folds them.
const (
	ctint     int     = -1234567
	ctint32   int32   = 1 << 30
	ctint64   int64   = math.MinInt64 + 3
	ctuint    uint    = math.MaxUint64 - 9
	ctuint32  uint32  = 0xdeadbeef
	ctuint64  uint64  = 1<<63 + 12345
	ctfloat32 float32 = 1.0 / 3
	ctfloat64 float64 = 1e-300 * 1e200

	halfPi = math.Pi / 2 // untyped: rounded once, to the type of its use
	third  = 1.0 / 3.0
	big    = 1 << 100 >> 98 // untyped integer arithmetic past 64 bits: 4
)

// Enumerated constants with iota.
const (
	modeAdd = iota
	modeMul
	modeMax
	modeLast = modeMax
)

// logic: the boolean operators, with && and || short-circuiting around a
// helper that counts its calls in calls[i] (the count is exact only if the
// right operand runs just when Go would run it).
//
//qd:kernel
func logic(a, b []bool, flag bool, out [][]bool, calls []int32) {
	for i := range len(a) {
		x, y := a[i], b[i]
		out[i][0] = x && y
		out[i][1] = x || y
		out[i][2] = !x
		out[i][3] = x == y
		out[i][4] = x != y
		out[i][5] = x && touch(calls, i) || y && !touch(calls, i)
		out[i][6] = flag != (x || !y && flag)
		v := x
		v = v && flag
		out[i][7] = v
		out[i][8] = x == (i%2 == 0)
	}
}

// touch records a call and returns true.
func touch(calls []int32, i int) bool {
	calls[i]++
	return true
}

// conversions between every pair of numeric types: integers wrap, truncate
// and sign-extend as Go says; floats convert to integers toward zero (the
// generator keeps them in range: out-of-range conversions are
// implementation-defined in Go and saturate on the GPU).
//
//qd:kernel
func conversions(i64 []int64, u64 []uint64, f64 []float64, ints [][]int64, uints [][]uint64, floats [][]float64) {
	for i := range len(i64) {
		x, u, f := i64[i], u64[i], f64[i]
		ints[i][0] = int64(int32(x))
		ints[i][1] = int64(uint32(x))
		ints[i][2] = int64(int(u))
		ints[i][3] = int64(int32(u))
		ints[i][4] = int64(f)
		ints[i][5] = int64(int32(f / 4096))
		ints[i][6] = int64(int(float32(f)))
		ints[i][7] = int64(uint32(math.Abs(f) / 2048))
		uints[i][0] = uint64(x)
		uints[i][1] = uint64(uint32(u))
		uints[i][2] = uint64(uint(x))
		uints[i][3] = uint64(math.Abs(f)) * 3
		uints[i][4] = uint64(float64(u>>1) * 1.5) // ≥ 2^63 but < 2^64
		uints[i][5] = uint64(float32(u >> 11))
		floats[i][0] = float64(x)
		floats[i][1] = float64(u)
		floats[i][2] = float64(float32(x))
		floats[i][3] = float64(float32(f))
		floats[i][4] = float64(int32(x))
		floats[i][5] = float64(uint32(u))
		floats[i][6] = float64(float32(u))
	}
}

// constants of every kind: typed and untyped, package-level and local,
// iota, math's constants, and untyped arithmetic beyond 64 bits.
//
//qd:kernel
func constants(k int, ints [][]int64, uints [][]uint64, floats [][]float64, f32s [][]float32) {
	for i := range len(ints) {
		const local = 7
		const localTyped int32 = -local * 3
		ints[i][0] = int64(ctint) + int64(i)
		ints[i][1] = int64(ctint32) * 2
		ints[i][2] = ctint64 - int64(i)
		ints[i][3] = big + local + int64(localTyped)
		ints[i][4] = math.MaxInt64 - int64(i)
		ints[i][5] = math.MinInt32
		ints[i][6] = modeAdd + modeMul*10 + modeLast*100 + int64(k)
		ints[i][7] = 1<<62 + 'a'
		uints[i][0] = uint64(ctuint)
		uints[i][1] = uint64(ctuint32) ^ uint64(i)
		uints[i][2] = ctuint64 + uint64(i)
		uints[i][3] = math.MaxUint32 << 1
		uints[i][4] = math.MaxUint64
		floats[i][0] = ctfloat64
		floats[i][1] = halfPi * float64(i)
		floats[i][2] = third
		floats[i][3] = float64(ctfloat32)
		floats[i][4] = math.E + math.Sqrt2 + math.Ln2 + math.MaxFloat64/1e308
		floats[i][5] = math.SmallestNonzeroFloat64
		floats[i][6] = 1e300 * 1e10 / 1e20 // exact untyped arithmetic: no overflow
		f32s[i][0] = halfPi
		f32s[i][1] = third * float32(i)
		f32s[i][2] = math.MaxFloat32
		f32s[i][3] = math.SmallestNonzeroFloat32
		f32s[i][4] = 0.1 + 0.2 - 0.3 // folded exactly to 0, unlike float arithmetic
	}
}

// mathGo64 calls every math function kernels support on float64, column k
// of the inputs for function k (the generator picks a range per function).
//
//qd:kernel
func mathGo64(x, y, out [][]float64) {
	for i := range len(x) {
		out[i][0] = math.Sqrt(x[i][0])
		out[i][1] = math.Exp(x[i][1])
		out[i][2] = math.Exp2(x[i][2])
		out[i][3] = math.Log(x[i][3])
		out[i][4] = math.Log2(x[i][4])
		out[i][5] = math.Log10(x[i][5])
		out[i][6] = math.Sin(x[i][6])
		out[i][7] = math.Cos(x[i][7])
		out[i][8] = math.Tan(x[i][8])
		out[i][9] = math.Asin(x[i][9])
		out[i][10] = math.Acos(x[i][10])
		out[i][11] = math.Atan(x[i][11])
		out[i][12] = math.Atan2(x[i][12], y[i][12])
		out[i][13] = math.Sinh(x[i][13])
		out[i][14] = math.Cosh(x[i][14])
		out[i][15] = math.Tanh(x[i][15])
		out[i][16] = math.Pow(x[i][16], y[i][16])
		out[i][17] = math.Abs(x[i][17])
		out[i][18] = math.Floor(x[i][18])
		out[i][19] = math.Ceil(x[i][19])
		out[i][20] = math.Trunc(x[i][20])
		out[i][21] = math.Round(x[i][21])
		out[i][22] = math.Mod(x[i][22], y[i][22])
		out[i][23] = math.Hypot(x[i][23], y[i][23])
		out[i][24] = math.Min(x[i][24], y[i][24])
		out[i][25] = math.Max(x[i][25], y[i][25])
		v := x[i][26]
		switch {
		case math.IsNaN(v):
			out[i][26] = 1
		case math.IsInf(v, 1):
			out[i][26] = math.Inf(1)
		case math.IsInf(v, -1):
			out[i][26] = math.Inf(-1)
		case math.IsInf(v, 0):
			out[i][26] = 2 // unreachable: ±Inf are taken above
		case v > 1:
			out[i][26] = math.NaN()
		default:
			out[i][26] = v
		}
	}
}

// qdMath64 is mathGo64 through the generic qd functions on float64.
//
//qd:kernel
func qdMath64(x, y, out [][]float64) {
	for i := range len(x) {
		out[i][0] = qd.Sqrt(x[i][0])
		out[i][1] = qd.Exp(x[i][1])
		out[i][2] = qd.Exp2(x[i][2])
		out[i][3] = qd.Log(x[i][3])
		out[i][4] = qd.Log2(x[i][4])
		out[i][5] = qd.Log10(x[i][5])
		out[i][6] = qd.Sin(x[i][6])
		out[i][7] = qd.Cos(x[i][7])
		out[i][8] = qd.Tan(x[i][8])
		out[i][9] = qd.Asin(x[i][9])
		out[i][10] = qd.Acos(x[i][10])
		out[i][11] = qd.Atan(x[i][11])
		out[i][12] = qd.Atan2(x[i][12], y[i][12])
		out[i][13] = qd.Sinh(x[i][13])
		out[i][14] = qd.Cosh(x[i][14])
		out[i][15] = qd.Tanh(x[i][15])
		out[i][16] = qd.Pow(x[i][16], y[i][16])
		out[i][17] = qd.Abs(x[i][17])
		out[i][18] = qd.Floor(x[i][18])
		out[i][19] = qd.Ceil(x[i][19])
		out[i][20] = qd.Trunc(x[i][20])
		out[i][21] = qd.Round(x[i][21])
		out[i][22] = qd.Mod(x[i][22], y[i][22])
		out[i][23] = qd.Hypot(x[i][23], y[i][23])
		out[i][24] = min(x[i][24], y[i][24])
		out[i][25] = max(x[i][25], y[i][25])
		out[i][26] = x[i][26]
	}
}

// qdMath32 is the same on float32: qd computes in float64 and rounds once.
//
//qd:kernel
func qdMath32(x, y, out [][]float32) {
	for i := range len(x) {
		out[i][0] = qd.Sqrt(x[i][0])
		out[i][1] = qd.Exp(x[i][1])
		out[i][2] = qd.Exp2(x[i][2])
		out[i][3] = qd.Log(x[i][3])
		out[i][4] = qd.Log2(x[i][4])
		out[i][5] = qd.Log10(x[i][5])
		out[i][6] = qd.Sin(x[i][6])
		out[i][7] = qd.Cos(x[i][7])
		out[i][8] = qd.Tan(x[i][8])
		out[i][9] = qd.Asin(x[i][9])
		out[i][10] = qd.Acos(x[i][10])
		out[i][11] = qd.Atan(x[i][11])
		out[i][12] = qd.Atan2(x[i][12], y[i][12])
		out[i][13] = qd.Sinh(x[i][13])
		out[i][14] = qd.Cosh(x[i][14])
		out[i][15] = qd.Tanh(x[i][15])
		out[i][16] = qd.Pow(x[i][16], y[i][16])
		out[i][17] = qd.Abs(x[i][17])
		out[i][18] = qd.Floor(x[i][18])
		out[i][19] = qd.Ceil(x[i][19])
		out[i][20] = qd.Trunc(x[i][20])
		out[i][21] = qd.Round(x[i][21])
		out[i][22] = qd.Mod(x[i][22], y[i][22])
		out[i][23] = qd.Hypot(x[i][23], y[i][23])
		out[i][24] = min(x[i][24], y[i][24])
		out[i][25] = max(x[i][25], y[i][25])
		out[i][26] = float32(math.Sqrt(float64(x[i][26])))
	}
}

// branches: if/else chains, switch with a tag (several values per case,
// fallthrough, break, default in the middle, fallen into and falling
// through), switch without a tag, switch with an init statement, a helper
// whose switch returns from its clauses.
//
//qd:kernel
func branches(x []int32, f []float64, out [][]int32) {
	for i := range len(x) {
		v := x[i]
		r := int32(0)
		if v < -100 {
			r = 1
		} else if v < 0 {
			r = 2
		} else if v == 0 {
			r = 3
		} else {
			r = 4
		}
		out[i][0] = r
		switch v % 5 {
		case 0, 1:
			r = 10
			fallthrough
		case 2:
			r += 20
		default:
			r = -1
		case -1, -2:
			if v < -1000 {
				break
			}
			r = 30
		}
		out[i][1] = r
		switch {
		case f[i] > 0.5:
			r = 1
		case f[i] > 0 && v > 0:
			r = 2
		case math.IsNaN(f[i]):
			r = 3
		}
		out[i][2] = r
		switch w := v & 3; w {
		case 1:
			out[i][3] = w * 100
		case 2:
			out[i][3] = -w
			fallthrough
		case 3:
			out[i][3] += 7
		}
		switch {
		}
		if c := v > 50; c {
			out[i][4] = 1
		}
		r = 0
		switch v % 7 {
		case 1:
			r += 1
			fallthrough
		default: // fallen into, and falling through, in the middle
			r += 10
			fallthrough
		case 2, 3:
			r += 100
		case 4:
			r += 1000
			fallthrough
		case 5:
			r += 10000
		}
		out[i][5] = r
		out[i][6] = classify(v)
	}
}

// classify is a helper that ends in a switch whose clauses return or fall
// through.
func classify(v int32) int32 {
	switch {
	case v < -1000:
		return -2
	case v < 0:
		v = -v
		fallthrough
	case v < 10:
		return v * 3
	default:
		return v / 2
	}
}

// loops: every serial loop form inside a parallel loop, labelled break and
// continue across nesting, and continue in the parallel loop itself.
//
//qd:kernel
func loops(x []int32, m int32, out [][]int64) {
	for i, v := range x {
		if v%7 == 0 {
			continue // leaves this iteration of the parallel loop
		}
		n := int(v&15) + 1
		// 3-clause
		s := int64(0)
		for j := 0; j < n; j++ {
			s += int64(j * j)
		}
		out[i][0] = s
		// condition only
		k := int64(v)
		c := int64(0)
		for k > 1 {
			if k%2 == 0 {
				k /= 2
			} else {
				k = 3*k + 1
			}
			c++
		}
		out[i][1] = c
		// infinite with break
		t := int64(0)
		for {
			t += 3
			if t > int64(n) {
				break
			}
		}
		out[i][2] = t
		// range over an int, an int32, a len, with no variable, and an NDRange
		a := int64(0)
		for j := range n {
			a += int64(j)
		}
		for j := range m {
			a += int64(j) * 2
		}
		for range 3 {
			a++
		}
		for j := range len(x) % 5 {
			a -= int64(j)
		}
		for p, q := range qd.NDRange(2, n%4) {
			a += int64(p*10 + q)
		}
		for p := range qd.NDRange3(2, 2, n%3) {
			a += int64(p.I + p.J*3 + p.K*9)
		}
		out[i][3] = a
		// labelled break and continue
		found := int64(-1)
	search:
		for j := 0; j < 8; j++ {
			for l := 0; l < 8; l++ {
				if j*l == n {
					found = int64(j*8 + l)
					break search
				}
				if l > j {
					continue search
				}
			}
		}
		out[i][4] = found
		u := int64(0)
	rows:
		for j := range 6 {
			for l := range 6 {
				if l == j {
					continue rows
				}
				if j+l > n {
					break rows
				}
				u += int64(l)
			}
		}
		out[i][5] = u
		// loop with a multi-variable init and post
		w := int64(0)
		for p, q := 0, n; p < q; p, q = p+1, q-1 {
			w += int64(q - p)
		}
		out[i][6] = w
		// the loop variable is a fresh copy per iteration: assigning it
		// does not change the iteration count
		z := int64(0)
		for j := range 4 {
			j *= 2
			z += int64(j)
		}
		out[i][7] = z
	}
}

// clamp returns x limited to [lo, hi]: early returns.
func clamp(x, lo, hi float64) float64 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// divmod has two results.
func divmod(a, b int) (int, int) { return a / b, a % b }

// firstNeg has a named result and a return from inside a loop.
func firstNeg(a []float64) (idx int) {
	idx = -1
	for i := range len(a) {
		if a[i] < 0 {
			idx = i
			return
		}
	}
	return
}

// poly calls another helper.
func poly(x float64) float64 { return sq(x)*3 + sq(x+1) }

func sq(x float64) float64 { return x * x }

// scaleRow writes through an array argument.
func scaleRow(a [][]float64, i int, s float64) {
	for j := range len(a[0]) {
		a[i][j] *= s
	}
}

// helpers inlines helpers with early returns, several results, named
// results, nested calls and array arguments, and uses :=, multi-assignment
// swaps and swaps of array elements.
//
//qd:kernel
func helpers(x []float64, m [][]float64, out [][]float64) {
	for i := range len(x) {
		out[i][0] = clamp(x[i], -0.5, 0.5)
		q, r := divmod(i+7, 3)
		out[i][1] = float64(q*10 + r)
		out[i][2] = float64(firstNeg(x))
		out[i][3] = poly(x[i])
		a, b, c := x[i], 2*x[i], 3.0
		a, b, c = c, a, b
		out[i][4] = a - b*c
		scaleRow(m, i, 2)
		m[i][0], m[i][len(m[0])-1] = m[i][len(m[0])-1], m[i][0]
	}
}

// arrays uses 1-D, 2-D and 3-D arrays and their lengths, and parallel
// NDRange and NDRange3 loops.
//
//qd:kernel
func arrays(a []int32, b [][]float32, c [][][]int64, lens []int) {
	lens[0] = len(a)
	lens[1] = len(b)
	lens[2] = len(b[0])
	lens[3] = len(c)
	lens[4] = len(c[0])
	lens[5] = len(c[0][0])
	for i, j := range qd.NDRange(len(b), len(b[0])) {
		b[i][j] = b[i][j]*2 + float32(i-j)
	}
	for p := range qd.NDRange3(len(c), len(c[0]), len(c[0][0])) {
		c[p.I][p.J][p.K] += int64(p.I*100 + p.J*10 + p.K)
	}
	for i := range len(a) {
		a[i] = a[i]*3 + int32(len(b[0]))
	}
	for i := range len(c) {
		for j := range len(c[0]) {
			c[i][j][0] -= 1
		}
	}
}

// atomicSlots: the old values of one shared counter are a permutation of
// 0..n-1, so every slot is taken exactly once; one CAS among all
// iterations wins. Both results are deterministic under any schedule.
//
//qd:kernel
func atomicSlots(n int, slots []int32, counter []int64, winners []int32) {
	for range n {
		slots[qd.AtomicAdd(&counter[0], 1)]++
		if qd.AtomicCAS(&counter[1], 0, 1) == 0 {
			qd.AtomicAdd(&winners[0], 1)
		}
	}
}

// streamGroups has three stream-parallel groups; the second runs two loops
// in order (the second reads what the first wrote).
//
//qd:kernel
func streamGroups(a []float32, b []int32, c [][]float64) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] = a[i]*2 + 1
		}
	})
	qd.StreamParallel(func() {
		for i := range len(b) {
			b[i] += int32(i)
		}
		qd.LoopConfig(qd.BlockDim(64))
		for i := range len(b) {
			b[i] = b[i]*2 - int32(i%7)
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(c), len(c[0])) {
			c[i][j] = qd.Sqrt(c[i][j] + float64(i+j))
		}
	})
}

// blockDims runs loops with several block sizes, including ones that do not
// divide the length.
//
//qd:kernel
func blockDims(x []int64) {
	qd.LoopConfig(qd.BlockDim(1))
	for i := range len(x) {
		x[i] += 1
	}
	qd.LoopConfig(qd.BlockDim(96))
	for i := range len(x) {
		x[i] *= 3
	}
	qd.LoopConfig(qd.BlockDim(1024))
	for i := range len(x) {
		x[i] -= int64(i)
	}
}

// serialFeed: top-level serial statements and a 3-clause loop compute
// temporaries that the parallel loops after them read.
//
//qd:kernel
func serialFeed(x, out []float64, n int32, hist []int64) {
	total := 0.0
	for i := 0; i < len(x); i++ {
		total += x[i]
	}
	scale := 2.0
	if total > 0 {
		scale = 3
	}
	count := int64(0)
	for j := int32(0); j < n; j++ {
		count += int64(j)
	}
	for i := range len(x) {
		out[i] = x[i]*scale + total
	}
	hist[0] = count
	hist[1] = int64(len(x))
	k := int64(5)
	k *= 2
	for i := range len(x) {
		qd.AtomicAdd(&hist[2], k)
		if out[i] > total {
			qd.AtomicAdd(&hist[3], 1)
		}
	}
	hist[4] = hist[2] + count
}
