package devmath

import (
	"math"
	"math/big"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/mathref"
)

// The true error of the model is measured against the high-precision
// references of internal/mathref (math/big, independent of this package's
// constants), because Go's math is itself off by more than an ulp in places
// (Log2 near 1, Acos near 1, Pow with large |y|, and the amd64 assembly Exp
// overflows to +Inf above ~709.09 instead of 709.78).

// refValue is the exact value of fn at finite x, y; ok is false where
// mathref computes none (Go's special-case table applies there).
func refValue(fn ir.Intrinsic, x, y float64) (exact *big.Float, ok bool) {
	return mathref.Of(fn.String())(x, y)
}

// exactErr returns |got − exact| in ulps of the double nearest exact (ulps
// of float32 when f32). It returns 0 when both are the same non-finite value
// and +Inf for a non-finite mismatch.
func exactErr(got float64, exact *big.Float, f32 bool) float64 {
	want := mathref.RoundTo(exact, f32)
	if math.IsNaN(got) || math.IsInf(got, 0) || math.IsInf(want, 0) || want == 0 {
		if got == want {
			return 0
		}
		if want == 0 && !math.IsInf(got, 0) && !math.IsNaN(got) {
			return ulpErr(got, want, f32) // got subnormal vs 0
		}
		return math.Inf(1)
	}
	df, _ := mathref.New().Sub(mathref.Float(got), exact).Float64()
	return math.Abs(df) / mathref.Ulp(want, f32)
}

// ulpErr measures got against a double (or float32) reference value.
func ulpErr(got, want float64, f32 bool) float64 {
	if math.IsNaN(got) || math.IsNaN(want) {
		if math.IsNaN(got) && math.IsNaN(want) {
			return 0
		}
		return math.Inf(1)
	}
	if got == want {
		if got == 0 && math.Signbit(got) != math.Signbit(want) {
			return math.Inf(1)
		}
		return 0
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return math.Inf(1)
	}
	return math.Abs(got-want) / mathref.Ulp(want, f32)
}
