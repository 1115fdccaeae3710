package cpu

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// specials are the values whose arithmetic differs most between ways of
// computing it: zeros of both signs, infinities, NaN, subnormals, the
// extremes, and ordinary numbers.
func specials[T float]() []T {
	var z T
	v := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, -3.75, 1e30, -1e-30, math.Inf(1), math.Inf(-1), math.NaN(), 2.5e-8, 7}
	if _, ok := any(z).(float32); ok {
		v = append(v, float64(math.SmallestNonzeroFloat32), float64(math.MaxFloat32), 1e-40)
	} else {
		v = append(v, math.SmallestNonzeroFloat64, math.MaxFloat64, 1e-310)
	}
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// operands makes n values cycling through the specials, shifted by seed.
func operands[T float](n, seed int) []T {
	s := specials[T]()
	out := make([]T, n)
	for i := range out {
		out[i] = s[(i*7+seed)%len(s)]
	}
	return out
}

// TestSIMDLoops compares every SIMD loop with its Go loop, bit for bit, on
// every length up to three unrolled iterations and a tail, and in place.
func TestSIMDLoops(t *testing.T) {
	testSIMD[float32](t)
	testSIMD[float64](t)
}

func testSIMD[T float](t *testing.T) {
	if loopsFor[T]() == nil {
		t.Skipf("no SIMD loops for %T on this platform", T(0))
	}
	for _, op := range []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div} {
		want, _ := numKern[T](op)
		if op == ir.Div {
			want = floatDiv[T]()
		}
		got, ok := simdKern(op, want.ss)
		if !ok {
			t.Fatalf("%T op %d: no SIMD loop", T(0), op)
		}
		sameLoops(t, op, got, want, 0)
		// In place, the destination being the first operand.
		for n := range 30 {
			a, b := operands[T](n, 1), operands[T](n, 6)
			g, w := slices.Clone(a), make([]T, n)
			got.vv(g, g, b)
			want.vv(w, a, b)
			for i := range w {
				if !same(g[i], w[i]) {
					t.Fatalf("%T op %d in place n=%d: [%d] = %v, want %v", T(0), op, n, i, g[i], w[i])
				}
			}
		}
	}
	for _, op := range []ir.BinOp{ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge} {
		want, ok := ordKern[T](op)
		if !ok {
			want, _ = eqKern[T](op)
		}
		got, ok := simdCmp(op, want.ss)
		if !ok {
			t.Fatalf("%T op %d: no SIMD comparison", T(0), op)
		}
		sameLoops(t, op, got, want, 1)
	}
	mulAdd := simdMulAdd[T]()
	for n := range 30 {
		for seed := range 4 {
			a, b := operands[T](n, seed), operands[T](n, seed+3)
			s := specials[T]()[seed*2+1]
			g, w := make([]T, n), make([]T, n)
			mulAdd(g, a, s, b)
			for i := range w {
				w[i] = T(a[i]*s) + b[i]
			}
			for i := range w {
				if !same(g[i], w[i]) {
					t.Fatalf("%T mulAdd n=%d: [%d] = %v, want %v", T(0), n, i, g[i], w[i])
				}
			}
		}
	}
	mulAddVV := simdMulAddVVOf[T]()
	for n := range 30 {
		for seed := range 4 {
			a, b, c := operands[T](n, seed), operands[T](n, seed+3), operands[T](n, seed+5)
			g, w := make([]T, n), make([]T, n)
			mulAddVV(g, a, b, c)
			for i := range w {
				w[i] = T(a[i]*b[i]) + c[i]
			}
			for i := range w {
				if !same(g[i], w[i]) {
					t.Fatalf("%T mulAddVV n=%d: [%d] = %v, want %v", T(0), n, i, g[i], w[i])
				}
			}
			// In place, the destination being the addend (acc += x*y).
			mulAddVV(c, a, b, c)
			for i := range w {
				if !same(c[i], w[i]) {
					t.Fatalf("%T mulAddVV in place n=%d: [%d] = %v, want %v", T(0), n, i, c[i], w[i])
				}
			}
		}
	}
}

// TestSIMDShortInput: an input shorter than the destination panics, as the
// Go loops do, instead of being read past its end.
func TestSIMDShortInput(t *testing.T) {
	k, ok := simdKern[float32](ir.Add, nil)
	if !ok {
		t.Skip("no SIMD loops on this platform")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	k.vv(make([]float32, 9), make([]float32, 9), make([]float32, 3))
}

// TestSIMDSelect compares the select loops of converted ifs with Go.
func TestSIMDSelect(t *testing.T) {
	if simdSel32 == nil {
		t.Skip("no SIMD loops on this platform")
	}
	for n := range 40 {
		c := make([]bool, n)
		t32, e32, d32 := make([]uint32, n), make([]uint32, n), make([]uint32, n)
		t64, e64, d64 := make([]uint64, n), make([]uint64, n), make([]uint64, n)
		for i := range c {
			c[i] = (i*7+n)%3 == 0
			t32[i], e32[i] = uint32(i)|0x80000000, ^uint32(i)
			t64[i], e64[i] = uint64(i)<<40|1, ^uint64(i)
		}
		simdSel32(d32, c, t32, e32)
		simdSel64(d64, c, t64, e64)
		for i := range c {
			w32, w64 := e32[i], e64[i]
			if c[i] {
				w32, w64 = t32[i], t64[i]
			}
			if d32[i] != w32 || d64[i] != w64 {
				t.Fatalf("n=%d [%d]: %x %x, want %x %x", n, i, d32[i], d64[i], w32, w64)
			}
		}
	}
}

// sameLoops compares the loops of got with those of want, every operand
// shape, on every length up to three unrolled iterations and a tail; the
// scalar is one of the specials, chosen by seed and pick.
func sameLoops[T float, R scalar](t *testing.T, op ir.BinOp, got, want kern[T, R], pick int) {
	t.Helper()
	for n := range 30 {
		for seed := range 4 {
			a, b, s := operands[T](n, seed), operands[T](n, seed+5), specials[T]()[seed*3+pick]
			g, w := make([]R, n), make([]R, n)
			for _, shape := range []string{"vv", "vs", "sv"} {
				switch shape {
				case "vv":
					got.vv(g, a, b)
					want.vv(w, a, b)
				case "vs":
					got.vs(g, a, s)
					want.vs(w, a, s)
				default:
					got.sv(g, s, b)
					want.sv(w, s, b)
				}
				for i := range w {
					if !same(g[i], w[i]) || !validBool(g[i]) {
						t.Fatalf("%T op %d %s n=%d: [%d] = %v, want %v (a %v, b %v, s %v)", T(0), op, shape, n, i, g[i], w[i], a[i], b[i], s)
					}
				}
			}
		}
	}
}

// validBool reports whether v, if a bool, is stored as 0 or 1, as Go
// requires.
func validBool[R scalar](v R) bool {
	b, ok := any(v).(bool)
	return !ok || *(*uint8)(unsafe.Pointer(&b)) <= 1
}

// TestSIMDFill: the SSE2 fills (fill, lanes.go) write v to every lane and
// nothing past the slice, for every length around their 8- and 4-lane
// steps.
func TestSIMDFill(t *testing.T) {
	if simdFill32 == nil || simdFill64 == nil {
		t.Skip("no SIMD loops on this platform")
	}
	for n := range 40 {
		d32, d64 := make([]uint32, n+1), make([]uint64, n+1)
		simdFill32(d32[:n], 0xdeadbeef)
		simdFill64(d64[:n], 0x0123456789abcdef)
		for i := range n {
			if d32[i] != 0xdeadbeef || d64[i] != 0x0123456789abcdef {
				t.Fatalf("n=%d: lane %d = %#x, %#x", n, i, d32[i], d64[i])
			}
		}
		if d32[n] != 0 || d64[n] != 0 {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
}

// TestSIMDFillRuns: each run of n lanes gets the element at its row of
// the source, and nothing past the slice is written.
func TestSIMDFillRuns(t *testing.T) {
	if simdFillRuns32 == nil {
		t.Skip("no SIMD loops on this platform")
	}
	src32, src64 := make([]uint32, 64), make([]uint64, 64)
	for i := range src32 {
		src32[i], src64[i] = uint32(i*7+1), uint64(i*9+2)<<33
	}
	for _, n := range []int{4, 8, 16, 32} {
		for runs := range 5 {
			d32, d64 := make([]uint32, n*runs+1), make([]uint64, n*runs+1)
			simdFillRuns32(d32[:n*runs], unsafe.Pointer(&src32[1]), 12, n) // every third element from src32[1]
			simdFillRuns64(d64[:n*runs], unsafe.Pointer(&src64[1]), 24, n)
			for k := range n * runs {
				if r := k / n; d32[k] != src32[1+3*r] || d64[k] != src64[1+3*r] {
					t.Fatalf("n=%d runs=%d: lane %d = %d, %d; want %d, %d", n, runs, k, d32[k], d64[k], src32[1+3*r], src64[1+3*r])
				}
			}
			if d32[n*runs] != 0 || d64[n*runs] != 0 {
				t.Fatalf("n=%d runs=%d: wrote past the end", n, runs)
			}
		}
	}
}
