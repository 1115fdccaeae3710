package devmath

import (
	"math"
	"math/big"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Edge cases: every function on every value (and pair of values) below must
// give Go's special results exactly (NaN, ±Inf, ±0 with their signs), and
// finite results within the accuracy bound of the exact value. Where Go's
// math is itself wrong (amd64 Exp overflowing above ~709.09, Sinh/Cosh
// overflowing before 710.48, Atan2 of a negative y over a huge negative x
// returning +π), the exact value decides; those cases are logged.

func edgeValues(f32 bool) []float64 {
	maxf, minNorm, minSub := math.MaxFloat64, 0x1p-1022, 0x1p-1074
	if f32 {
		maxf, minNorm, minSub = math.MaxFloat32, 0x1p-126, 0x1p-149
	}
	pos := []float64{0, minSub, 3 * minSub, minNorm - minSub, minNorm, 1e-300, 0x1p-28, 0x1p-27, 1e-8,
		0.25, 0.5, math.Sqrt2 / 2, 0.9999999999999999, 1, 1.0000000000000002, 1.5, math.Pi / 4, math.Pi / 2, 2, math.E,
		3, math.Pi, 10, 22, 44, 100, 709.78, 709.8, 710, 710.5, 745.1, 746, 1024, 1075, 0x1p27, 0x1p27 + 1,
		1e22, 1e300, 6381956970095103 * 0x1p797, 0x1p1023, maxf, math.Inf(1), 88.7, 89.5, 103.9, 104, 127, 128, 149, 150}
	var out []float64
	for _, x := range pos {
		if f32 {
			x = float64(float32(x))
		}
		out = append(out, x, -x)
	}
	return append(out, math.NaN())
}

func isSpecial(x float64) bool { return x == 0 || math.IsInf(x, 0) || math.IsNaN(x) }

func TestEdgeCases(t *testing.T) {
	for _, sp := range specs {
		for _, ty := range []ir.Type{ir.F64, ir.F32} {
			f32 := ty == ir.F32
			p, err := build(sp.fn, ty)
			if err != nil {
				t.Fatal(err)
			}
			cp := compile(p)
			var m machine
			vals := edgeValues(f32)
			ys := []float64{0}
			if sp.fn.Arity() == 2 {
				ys = vals
			}
			bad := 0
			for _, x := range vals {
				for _, y := range ys {
					var got, want float64
					if f32 {
						got = float64(math.Float32frombits(uint32(cp.run(&m, uint64(math.Float32bits(float32(x))), uint64(math.Float32bits(float32(y)))))))
						want = float64(float32(sp.goRef(x, y)))
					} else {
						got = f(cp.run(&m, fb(x), fb(y)))
						want = sp.goRef(x, y)
					}
					finiteIn := !isSpecial(x) || x == 0
					finiteIn = finiteIn && (!isSpecial(y) || y == 0)
					var ex *big.Float
					hasRef := false
					if finiteIn && !math.IsNaN(want) {
						ex, hasRef = refValue(sp.fn, x, y)
					}
					ok := false
					switch {
					case ulpErr(got, want, f32) == 0:
						ok = true
					case hasRef:
						e := exactErr(got, ex, f32)
						ok = e <= limits[ty]
						if ok && isSpecial(want) {
							t.Logf("%v %v(%v, %v): Go gives %v, exact value is %v (we give %v)", sp.fn, ty, x, y, want, ex, got)
						}
					case !isSpecial(want):
						ok = ulpErr(got, want, f32) <= 1
					}
					if !ok {
						if bad++; bad <= 5 {
							t.Errorf("%v %v(%v, %v) = %v, Go gives %v", sp.fn, ty, x, y, got, want)
						}
					}
				}
			}
		}
	}
}

// The library has a routine for exactly the intrinsics that are not
// ir.Intrinsic.Exact: the generators write those inline.
func TestNoInline(t *testing.T) {
	for _, fn := range ir.Intrinsics() {
		if _, _, err := Func(fn, ir.F64); (err == nil) == fn.Exact() {
			t.Errorf("Func(%v): err %v, but Exact is %v", fn, err, fn.Exact())
		}
	}
	if _, _, err := Func(ir.Sin, ir.I32); err == nil {
		t.Error("Func(sin, i32) should fail")
	}
}
