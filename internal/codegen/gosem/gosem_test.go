package gosem

import (
	"errors"
	"math"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// Every rule says what Go and every backend do, and has cases.
func TestRulesComplete(t *testing.T) {
	count := map[Rule]int{}
	for _, c := range Cases {
		count[c.Rule]++
	}
	for r := Rule(1); r < numRules; r++ {
		info := Rules[r]
		if info.Name == "" || info.Go == 0 || r.String() != info.Name {
			t.Errorf("rule %d: no name or no Go meaning", r)
		}
		for b := Backend(0); b < numBackends; b++ {
			if info.Does[b] == 0 {
				t.Errorf("%v: nothing said of %v", r, b)
			}
			if info.Does[b] == RuntimeError && info.Error == "" {
				t.Errorf("%v: %v raises an error without a text", r, b)
			}
		}
		if count[r] == 0 {
			t.Errorf("%v has no case", r)
		}
	}
}

// The cases are well typed for their rules.
func TestCasesTyped(t *testing.T) {
	for _, c := range Cases {
		var ok bool
		switch c.Rule {
		case DivZero, Division:
			ok = (c.Op == ir.Div || c.Op == ir.Rem) && c.X.IsInteger() && c.Y == c.X
		case ShiftWide, ShiftNegative:
			ok = c.Op.IsShift() && c.X.IsInteger() && c.Y.IsInteger()
			if c.Rule == ShiftNegative {
				ok = ok && c.Y.IsSigned() && int64(c.B) < 0
			}
		case FloatToInt:
			ok = c.IsConversion() && !c.Bitcast && c.X.IsFloat() && c.To.IsInteger()
		case MinMaxFloat:
			ok = (c.Op == ir.Min || c.Op == ir.Max) && c.X.IsFloat() && c.Y == c.X
		case SmallInts:
			ok = c.IsConversion() && !c.Bitcast && (c.X.IsSmall() || c.To.IsSmall()) && c.X.IsInteger() && c.To.IsNumeric()
		case Bitcast:
			ok = c.Bitcast && c.IsConversion() && c.X.Size() == c.To.Size() && c.X != c.To
		}
		if !ok {
			t.Errorf("%v: not a case of its rule", c)
		}
		for _, f := range []Form{Params, Consts, Lanes} {
			if err := ir.Verify(c.Kernel("k", f)); err != nil {
				t.Errorf("%v, %v: %v", c, f, err)
			}
		}
	}
}

// Where Go defines a result the table's is Go's, where Go panics Go
// panics, and a conversion's Want is the truncated value clamped to the
// target's range (NaN giving 0), which is Go's own where it is in range.
func TestCasesAgainstGo(t *testing.T) {
	for _, c := range Cases {
		bits, panics := Reference(c)
		switch Rules[c.Rule].Go {
		case Defined:
			if panics || !Same(c.Result(), bits, c.Want) {
				t.Errorf("%v: Go gives %s (panics %v), the table %s", c, Show(c.Result(), bits), panics, Show(c.Result(), c.Want))
			}
		case Panics:
			if !panics {
				t.Errorf("%v: Go gives %s, the table says it panics", c, Show(c.Result(), bits))
			}
		case ImplementationDefined:
			x := math.Float64frombits(c.A)
			if c.X == ir.F32 {
				x = float64(math.Float32frombits(uint32(c.A)))
			}
			want, inRange := Saturate(c.To, x)
			if c.Want != want {
				t.Errorf("%v: the table gives %s, saturation %s", c, Show(c.To, c.Want), Show(c.To, want))
			}
			if inRange && (panics || bits != want) {
				t.Errorf("%v: in range Go gives %s, the table %s", c, Show(c.To, bits), Show(c.To, c.Want))
			}
		}
	}
}

// Check tells each outcome's results apart.
func TestCheck(t *testing.T) {
	div := binary(DivZero, ir.Div, ir.I32, i32(7), 0, i32(-1))
	conv := conv(ir.F64, ir.I32, f64(nan64), 0)
	minNaN := binary(MinMaxFloat, ir.Min, ir.F64, f64(nan64), f64(1), f64(nan64))
	goNaN, _ := Reference(conv)
	runErr := errors.New("kernel k: integer divide by zero")
	cases := []struct {
		b    Backend
		c    Case
		got  Result
		fine bool
	}{
		{C, div, Result{Bits: i32(-1)}, true},
		{C, div, Result{Bits: i32(1)}, false},
		{C, div, Result{Err: runErr}, false},
		{CPU, div, Result{Err: runErr}, true},
		{CPU, div, Result{Err: errors.New("some other error")}, false},
		{CPU, div, Result{Bits: i32(-1)}, false},
		{PTX, div, Result{Bits: 12345}, true},
		{Host, div, Result{Err: errors.New("unknown")}, true},
		{Host, div, Result{Bits: i32(-1)}, false},
		{CPU, conv, Result{Bits: goNaN}, true},
		{PTX, conv, Result{Bits: 0}, true},
		{PTX, conv, Result{Bits: i32(math.MinInt32)}, false},
		{PTX, minNaN, Result{Bits: f64(math.NaN()) | 1}, true}, // another NaN
		{PTX, minNaN, Result{Bits: f64(1)}, false},
	}
	for _, tc := range cases {
		if err := Check(tc.b, tc.c, tc.got); (err == nil) != tc.fine {
			t.Errorf("Check(%v, %v, %+v) = %v, want fine %v", tc.b, tc.c, tc.got, err, tc.fine)
		}
	}
}

func TestSaturate(t *testing.T) {
	cases := []struct {
		t       ir.Type
		x       float64
		want    uint64
		inRange bool
	}{
		{ir.I32, 2147483647.9, math.MaxInt32, true},
		{ir.I32, 2147483648, math.MaxInt32, false},
		{ir.I32, -2147483648.9, i32(math.MinInt32), true},
		{ir.I32, -2147483649, i32(math.MinInt32), false},
		{ir.I64, 0x1p63, math.MaxInt64, false},
		{ir.I64, -0x1p63, i64(math.MinInt64), true},
		{ir.I64, -0.9, 0, true},
		{ir.U32, -0.9, 0, true},
		{ir.U32, -1, 0, false},
		{ir.U32, 4294967295.5, math.MaxUint32, true},
		{ir.U64, 0x1p64, math.MaxUint64, false},
		{ir.U64, 0x1p63, 1 << 63, true},
		{ir.U64, math.Inf(-1), 0, false},
		{ir.I32, math.NaN(), 0, false},
	}
	for _, c := range cases {
		if got, in := Saturate(c.t, c.x); got != c.want || in != c.inRange {
			t.Errorf("Saturate(%v, %v) = %#x, %v; want %#x, %v", c.t, c.x, got, in, c.want, c.inRange)
		}
	}
}
