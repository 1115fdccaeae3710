package mathref

import (
	"math"
	"math/big"
	"testing"
)

// TestConstants checks the series constants against Go's.
func TestConstants(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{{"π", f64(Pi()), math.Pi}, {"ln 2", f64(Ln2()), math.Ln2}, {"ln 10", f64(Ln10()), math.Ln10}} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestFuncs checks each reference against Go's math at arguments where Go
// is correctly rounded or nearly (≤ 1 ulp), and that the references decline
// where Go's special-case table applies. TestAccuracyReference
// (internal/codegencheck) checks them at random inputs over every range.
func TestFuncs(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y float64
		want float64
	}{
		{"exp", 1, 0, math.E}, {"exp2", 10, 0, 1024}, {"log", math.E, 0, 1},
		{"log2", 8, 0, 3}, {"log10", 1e-5, 0, -5}, {"sin", math.Pi / 6, 0, 0.5},
		{"cos", 1e22, 0, math.Cos(1e22)}, {"tan", 0.5, 0, math.Tan(0.5)},
		{"asin", 1, 0, math.Pi / 2}, {"acos", -1, 0, math.Pi}, {"atan", 1, 0, math.Pi / 4},
		{"atan2", 1, -1, 3 * math.Pi / 4}, {"sinh", 1e-300, 0, 1e-300}, {"cosh", 1, 0, math.Cosh(1)},
		{"tanh", -800, 0, -1}, {"pow", -2, 3, -8}, {"hypot", 3, 4, 5}, {"mod", 7, 3, 1},
	} {
		ex, ok := Of(c.name)(c.x, c.y)
		if !ok {
			t.Errorf("%s(%v, %v): no reference", c.name, c.x, c.y)
			continue
		}
		got := f64(ex)
		if d := math.Abs(got-c.want) / Ulp(c.want, false); d > 1 {
			t.Errorf("%s(%v, %v) = %v, want %v (%.3g ulp)", c.name, c.x, c.y, got, c.want, d)
		}
	}
	for _, c := range []struct {
		name string
		x, y float64
	}{{"exp", 1e4, 0}, {"log", 0, 0}, {"asin", 2, 0}, {"atan2", 0, -1}, {"pow", 0, 2}, {"pow", -2, 0.5}} {
		if _, ok := Of(c.name)(c.x, c.y); ok {
			t.Errorf("%s(%v, %v): a reference where Go's special case applies", c.name, c.x, c.y)
		}
	}
	if Of("sqrt") != nil {
		t.Error("sqrt has a reference; it is correctly rounded, Go's result is the reference")
	}
}

func f64(x *big.Float) float64 { v, _ := x.Float64(); return v }
