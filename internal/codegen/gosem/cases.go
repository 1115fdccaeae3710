package gosem

import (
	"fmt"
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Case is one row of the table: Op applied to operands A (of type X) and
// B (of type Y), or, when Op is 0, A of type X converted to type To (its
// bits reinterpreted when Bitcast is set). Bits are ir.Const's: signed
// integers sign-extended to 64 bits, F32 in the low 32.
type Case struct {
	Rule    Rule
	Op      ir.BinOp // 0: a conversion
	X       ir.Type
	Y       ir.Type // the second operand's: X's, or a shift count's own
	To      ir.Type // a conversion's target
	Bitcast bool    // the conversion is an ir.Bitcast
	A, B    uint64
	Want    uint64 // the result qd requires where a backend's outcome is Want
}

// IsConversion reports whether c converts (or bit-casts) one operand
// rather than applies an operator.
func (c Case) IsConversion() bool { return c.Op == 0 }

// Result is the type of c's result.
func (c Case) Result() ir.Type {
	if c.IsConversion() {
		return c.To
	}
	return c.X
}

var opNames = map[ir.BinOp]string{ir.Div: "/", ir.Rem: "%", ir.Shl: "<<", ir.Shr: ">>", ir.Min: "min", ir.Max: "max"}

func (c Case) String() string {
	if c.Bitcast {
		return fmt.Sprintf("%v: bits_%v(%s)", c.Rule, c.To, Show(c.X, c.A))
	}
	if c.IsConversion() {
		return fmt.Sprintf("%v: %v(%s)", c.Rule, c.To, Show(c.X, c.A))
	}
	if c.Op == ir.Min || c.Op == ir.Max {
		return fmt.Sprintf("%v: %s(%s, %s)", c.Rule, opNames[c.Op], Show(c.X, c.A), Show(c.Y, c.B))
	}
	return fmt.Sprintf("%v: %s %s %s", c.Rule, Show(c.X, c.A), opNames[c.Op], Show(c.Y, c.B))
}

// Show writes bits of type t as Go would print the value, with its type.
func Show(t ir.Type, bits uint64) string {
	switch t {
	case ir.I32, ir.I64, ir.I8, ir.I16:
		return fmt.Sprintf("%v(%d)", t, int64(bits))
	case ir.U32, ir.U64, ir.U8, ir.U16:
		return fmt.Sprintf("%v(%d)", t, bits)
	case ir.F32:
		return fmt.Sprintf("f32(%v)", math.Float32frombits(uint32(bits)))
	case ir.F64:
		return fmt.Sprintf("f64(%v)", math.Float64frombits(bits))
	}
	return fmt.Sprintf("%v(%#x)", t, bits)
}

// Bit patterns of the table's operands and results, as ir.Const holds
// them.
func i32(v int32) uint64   { return uint64(int64(v)) }
func i64(v int64) uint64   { return uint64(v) }
func f32(v float32) uint64 { return uint64(math.Float32bits(v)) }
func f64(v float64) uint64 { return math.Float64bits(v) }

var (
	nan32, inf32 = float32(math.NaN()), float32(math.Inf(1))
	nan64, inf64 = math.NaN(), math.Inf(1)
	negZero32    = float32(math.Copysign(0, -1))
	negZero64    = math.Copysign(0, -1)
)

// binary is a case of an operator whose operands have one type.
func binary(r Rule, op ir.BinOp, t ir.Type, a, b, want uint64) Case {
	return Case{Rule: r, Op: op, X: t, Y: t, A: a, B: b, Want: want}
}

// shift is a case of x << n or x >> n with a count of type ct.
func shift(r Rule, op ir.BinOp, t ir.Type, a uint64, ct ir.Type, n, want uint64) Case {
	return Case{Rule: r, Op: op, X: t, Y: ct, A: a, B: n, Want: want}
}

// conv is a case of converting a of type from to type to.
func conv(from, to ir.Type, a, want uint64) Case {
	return Case{Rule: FloatToInt, X: from, To: to, A: a, Want: want}
}

// small is a case of SmallInts: a of type from converted to type to.
func small(from, to ir.Type, a, want uint64) Case {
	return Case{Rule: SmallInts, X: from, To: to, A: a, Want: want}
}

// bitcast is a case of Bitcast: the bits a of type from read as type to.
func bitcast(from, to ir.Type, a, want uint64) Case {
	return Case{Rule: Bitcast, X: from, To: to, Bitcast: true, A: a, Want: want}
}

// Cases is the table.
var Cases = []Case{
	// DivZero: the quotient is all ones, the remainder the dividend.
	binary(DivZero, ir.Div, ir.I32, i32(7), 0, i32(-1)),
	binary(DivZero, ir.Div, ir.I32, i32(math.MinInt32), 0, i32(-1)),
	binary(DivZero, ir.Div, ir.I32, 0, 0, i32(-1)),
	binary(DivZero, ir.Rem, ir.I32, i32(7), 0, i32(7)),
	binary(DivZero, ir.Rem, ir.I32, i32(-7), 0, i32(-7)),
	binary(DivZero, ir.Div, ir.I64, i64(-7), 0, i64(-1)),
	binary(DivZero, ir.Div, ir.I64, 7, 0, i64(-1)),
	binary(DivZero, ir.Rem, ir.I64, 7, 0, 7),
	binary(DivZero, ir.Rem, ir.I64, i64(math.MinInt64), 0, i64(math.MinInt64)),
	binary(DivZero, ir.Div, ir.U32, 7, 0, math.MaxUint32),
	binary(DivZero, ir.Rem, ir.U32, math.MaxUint32, 0, math.MaxUint32),
	binary(DivZero, ir.Div, ir.U64, 7, 0, math.MaxUint64),
	binary(DivZero, ir.Rem, ir.U64, 1<<63, 0, 1<<63),

	// Division: truncation toward zero, in the operands' signedness, and
	// MinInt / -1.
	binary(Division, ir.Div, ir.I32, i32(-7), i32(2), i32(-3)),
	binary(Division, ir.Rem, ir.I32, i32(-7), i32(2), i32(-1)),
	binary(Division, ir.Rem, ir.I32, i32(7), i32(-2), i32(1)),
	binary(Division, ir.Div, ir.I32, i32(math.MinInt32), i32(-1), i32(math.MinInt32)),
	binary(Division, ir.Rem, ir.I32, i32(math.MinInt32), i32(-1), 0),
	binary(Division, ir.Div, ir.I32, i32(7), i32(-1), i32(-7)),
	binary(Division, ir.Div, ir.I32, i32(-7), i32(-1), i32(7)),
	binary(Division, ir.Rem, ir.I32, i32(7), i32(-1), 0),
	binary(Division, ir.Div, ir.I64, i64(math.MinInt64), i64(-1), i64(math.MinInt64)),
	binary(Division, ir.Rem, ir.I64, i64(math.MinInt64), i64(-1), 0),
	binary(Division, ir.Div, ir.I64, i64(math.MaxInt64), i64(-1), i64(-math.MaxInt64)),
	binary(Division, ir.Div, ir.I64, i64(-9), i64(4), i64(-2)),
	binary(Division, ir.Rem, ir.I64, i64(-9), i64(4), i64(-1)),
	binary(Division, ir.Div, ir.U32, 0xFFFF_FFFE, 2, 0x7FFF_FFFF),
	binary(Division, ir.Rem, ir.U32, 0xFFFF_FFFF, 0xFFFF_FFFE, 1),
	// Operands in [0, 2^31) take the GPU's 32-bit division, the rest its
	// 64-bit one: both sides of the edge.
	binary(Division, ir.Div, ir.I64, 7, 2, 3),
	binary(Division, ir.Rem, ir.I64, math.MaxInt32, 10, 7),
	binary(Division, ir.Div, ir.I64, 1<<31, 3, 715827882),
	binary(Division, ir.Div, ir.I64, 5, 1<<31, 0),
	binary(Division, ir.Div, ir.U64, math.MaxInt32, 7, 306783378),
	binary(Division, ir.Rem, ir.U64, 1<<32, 7, 4),
	binary(Division, ir.Div, ir.U64, math.MaxUint64, 1<<62, 3),
	binary(Division, ir.Rem, ir.U64, math.MaxUint64, 10, 5),

	// ShiftWide, left: the bits leave.
	shift(ShiftWide, ir.Shl, ir.I32, i32(1), ir.U32, 31, i32(math.MinInt32)),
	shift(ShiftWide, ir.Shl, ir.I32, i32(1), ir.U32, 32, 0),
	shift(ShiftWide, ir.Shl, ir.U32, 5, ir.U32, 0, 5),
	shift(ShiftWide, ir.Shl, ir.U32, 1, ir.I32, i32(33), 0),
	shift(ShiftWide, ir.Shl, ir.U32, 1, ir.U64, 1<<32, 0), // not 1 << 0
	shift(ShiftWide, ir.Shl, ir.U32, 3, ir.U64, math.MaxUint64, 0),
	shift(ShiftWide, ir.Shl, ir.I64, i64(1), ir.I64, 63, i64(math.MinInt64)),
	shift(ShiftWide, ir.Shl, ir.I64, i64(1), ir.U32, 64, 0),
	shift(ShiftWide, ir.Shl, ir.U64, 1, ir.U64, 65, 0),
	shift(ShiftWide, ir.Shl, ir.U64, 1, ir.U64, 1<<32, 0),
	// ShiftWide, right: zeros, or the sign of a negative signed value.
	shift(ShiftWide, ir.Shr, ir.I32, i32(-8), ir.U32, 31, i32(-1)),
	shift(ShiftWide, ir.Shr, ir.I32, i32(-8), ir.U32, 32, i32(-1)),
	shift(ShiftWide, ir.Shr, ir.I32, i32(-8), ir.I64, 100, i32(-1)),
	shift(ShiftWide, ir.Shr, ir.I32, i32(-8), ir.U64, 1<<32+1, i32(-1)),
	shift(ShiftWide, ir.Shr, ir.I32, i32(8), ir.U32, 32, 0),
	shift(ShiftWide, ir.Shr, ir.U32, 0x8000_0000, ir.U32, 31, 1),
	shift(ShiftWide, ir.Shr, ir.U32, 0x8000_0000, ir.U32, 32, 0),
	shift(ShiftWide, ir.Shr, ir.U32, 0xFFFF_FFFF, ir.U64, 1<<32, 0),
	shift(ShiftWide, ir.Shr, ir.I64, i64(-8), ir.U64, 64, i64(-1)),
	shift(ShiftWide, ir.Shr, ir.I64, i64(math.MaxInt64), ir.I32, i32(63), 0),
	shift(ShiftWide, ir.Shr, ir.U64, math.MaxUint64, ir.U32, 63, 1),
	shift(ShiftWide, ir.Shr, ir.U64, math.MaxUint64, ir.I32, i32(64), 0),

	// ShiftNegative: as a huge count.
	shift(ShiftNegative, ir.Shl, ir.I32, i32(1), ir.I32, i32(-1), 0),
	shift(ShiftNegative, ir.Shr, ir.I32, i32(-8), ir.I32, i32(-1), i32(-1)),
	shift(ShiftNegative, ir.Shr, ir.I32, i32(8), ir.I64, i64(-5), 0),
	shift(ShiftNegative, ir.Shr, ir.U32, 8, ir.I64, i64(math.MinInt64), 0),
	shift(ShiftNegative, ir.Shl, ir.I64, i64(1), ir.I64, i64(math.MinInt64), 0),
	shift(ShiftNegative, ir.Shr, ir.I64, i64(-8), ir.I32, i32(-64), i64(-1)),
	shift(ShiftNegative, ir.Shl, ir.U64, 1, ir.I32, i32(math.MinInt32), 0),

	// FloatToInt: truncation in range; saturation out of range; NaN is 0.
	conv(ir.F64, ir.I32, f64(-3.7), i32(-3)),
	conv(ir.F64, ir.I32, f64(2147483647.9), i32(math.MaxInt32)),
	conv(ir.F64, ir.I32, f64(2147483648), i32(math.MaxInt32)),
	conv(ir.F64, ir.I32, f64(-2147483648.9), i32(math.MinInt32)),
	conv(ir.F64, ir.I32, f64(-3e9), i32(math.MinInt32)),
	conv(ir.F64, ir.I32, f64(inf64), i32(math.MaxInt32)),
	conv(ir.F64, ir.I32, f64(nan64), 0),
	conv(ir.F32, ir.I32, f32(3.99), i32(3)),
	conv(ir.F32, ir.I32, f32(2147483648), i32(math.MaxInt32)),
	conv(ir.F32, ir.I32, f32(-2147483648), i32(math.MinInt32)),
	conv(ir.F32, ir.I32, f32(-inf32), i32(math.MinInt32)),
	conv(ir.F32, ir.I32, f32(nan32), 0),
	conv(ir.F64, ir.I64, f64(-1e18), i64(-1e18)),
	conv(ir.F64, ir.I64, f64(9.3e18), i64(math.MaxInt64)),
	conv(ir.F64, ir.I64, f64(0x1p63), i64(math.MaxInt64)),
	conv(ir.F64, ir.I64, f64(-0x1p63), i64(math.MinInt64)),
	conv(ir.F64, ir.I64, f64(-inf64), i64(math.MinInt64)),
	conv(ir.F64, ir.I64, f64(nan64), 0),
	conv(ir.F32, ir.I64, f32(1e19), i64(math.MaxInt64)),
	conv(ir.F32, ir.I64, f32(nan32), 0),
	conv(ir.F64, ir.U32, f64(4294967295.5), math.MaxUint32),
	conv(ir.F64, ir.U32, f64(5e9), math.MaxUint32),
	conv(ir.F64, ir.U32, f64(-0.9), 0),
	conv(ir.F64, ir.U32, f64(-1), 0),
	conv(ir.F64, ir.U32, f64(-inf64), 0),
	conv(ir.F64, ir.U32, f64(nan64), 0),
	conv(ir.F32, ir.U32, f32(3e9), 3e9),
	conv(ir.F32, ir.U32, f32(5e9), math.MaxUint32),
	conv(ir.F32, ir.U32, f32(-5), 0),
	conv(ir.F64, ir.U64, f64(1.8e19), 18_000_000_000_000_000_000),
	conv(ir.F64, ir.U64, f64(1.9e19), math.MaxUint64),
	conv(ir.F64, ir.U64, f64(0x1p64), math.MaxUint64),
	conv(ir.F64, ir.U64, f64(-1e10), 0),
	conv(ir.F64, ir.U64, f64(inf64), math.MaxUint64),
	conv(ir.F64, ir.U64, f64(nan64), 0),
	conv(ir.F32, ir.U64, f32(1e20), math.MaxUint64),
	conv(ir.F32, ir.U64, f32(-inf32), 0),
	// To the 8- and 16-bit types: through int32, then the low bits.
	conv(ir.F32, ir.I8, f32(3.9), 3),
	conv(ir.F32, ir.I8, f32(-3.9), i64(-3)),
	conv(ir.F32, ir.I8, f32(-128.9), i64(-128)),
	conv(ir.F32, ir.I8, f32(200.5), i64(-56)),
	conv(ir.F32, ir.I8, f32(1e10), i64(-1)), // MaxInt32's low byte
	conv(ir.F32, ir.I8, f32(-1e10), 0),      // MinInt32's
	conv(ir.F32, ir.I8, f32(nan32), 0),
	conv(ir.F64, ir.U8, f64(255.9), 255),
	conv(ir.F64, ir.U8, f64(-1.5), 255),
	conv(ir.F64, ir.U8, f64(300.7), 44),
	conv(ir.F64, ir.U8, f64(inf64), 255),
	conv(ir.F64, ir.U8, f64(nan64), 0),
	conv(ir.F64, ir.I16, f64(-32768.5), i64(-32768)),
	conv(ir.F64, ir.I16, f64(70000), 4464),
	conv(ir.F64, ir.I16, f64(-inf64), 0),
	conv(ir.F32, ir.U16, f32(65535.5), 65535),
	conv(ir.F32, ir.U16, f32(-1), 65535),
	conv(ir.F32, ir.U16, f32(3e9), 65535),

	// MinMaxFloat: NaN wins; -0 is below +0.
	binary(MinMaxFloat, ir.Min, ir.F32, f32(nan32), f32(1), f32(nan32)),
	binary(MinMaxFloat, ir.Min, ir.F32, f32(1), f32(nan32), f32(nan32)),
	binary(MinMaxFloat, ir.Min, ir.F32, f32(-inf32), f32(nan32), f32(nan32)),
	binary(MinMaxFloat, ir.Max, ir.F32, f32(nan32), f32(inf32), f32(nan32)),
	binary(MinMaxFloat, ir.Max, ir.F32, f32(-1), f32(nan32), f32(nan32)),
	binary(MinMaxFloat, ir.Min, ir.F32, f32(negZero32), f32(0), f32(negZero32)),
	binary(MinMaxFloat, ir.Min, ir.F32, f32(0), f32(negZero32), f32(negZero32)),
	binary(MinMaxFloat, ir.Max, ir.F32, f32(negZero32), f32(0), f32(0)),
	binary(MinMaxFloat, ir.Max, ir.F32, f32(0), f32(negZero32), f32(0)),
	binary(MinMaxFloat, ir.Min, ir.F32, f32(2), f32(-3), f32(-3)),
	binary(MinMaxFloat, ir.Max, ir.F32, f32(2), f32(-3), f32(2)),
	binary(MinMaxFloat, ir.Min, ir.F64, f64(nan64), f64(1), f64(nan64)),
	binary(MinMaxFloat, ir.Min, ir.F64, f64(1), f64(nan64), f64(nan64)),
	binary(MinMaxFloat, ir.Max, ir.F64, f64(nan64), f64(-inf64), f64(nan64)),
	binary(MinMaxFloat, ir.Max, ir.F64, f64(inf64), f64(nan64), f64(nan64)),
	binary(MinMaxFloat, ir.Min, ir.F64, f64(negZero64), f64(0), f64(negZero64)),
	binary(MinMaxFloat, ir.Min, ir.F64, f64(0), f64(negZero64), f64(negZero64)),
	binary(MinMaxFloat, ir.Max, ir.F64, f64(negZero64), f64(0), f64(0)),
	binary(MinMaxFloat, ir.Max, ir.F64, f64(0), f64(negZero64), f64(0)),
	binary(MinMaxFloat, ir.Min, ir.F64, f64(-inf64), f64(inf64), f64(-inf64)),
	binary(MinMaxFloat, ir.Max, ir.F64, f64(1e-310), f64(-1e-310), f64(1e-310)),

	// SmallInts: to a small type the low bits, from one an extension by
	// its signedness, to a float exactly.
	small(ir.I32, ir.I8, i32(200), i64(-56)),
	small(ir.I32, ir.I8, i32(-129), 127),
	small(ir.I32, ir.U8, i32(-1), 255),
	small(ir.U32, ir.U8, 0x1FF, 255),
	small(ir.I64, ir.I16, i64(70000), 4464),
	small(ir.I64, ir.I16, i64(-1), i64(-1)),
	small(ir.U64, ir.U16, 1<<40+5, 5),
	small(ir.U64, ir.I8, math.MaxUint64, i64(-1)),
	small(ir.I8, ir.I32, i64(-1), i32(-1)),
	small(ir.I8, ir.U32, i64(-1), math.MaxUint32),
	small(ir.I8, ir.U64, i64(-128), i64(-128)),
	small(ir.I8, ir.I64, i64(-128), i64(-128)),
	small(ir.U8, ir.I32, 255, 255),
	small(ir.U8, ir.I64, 200, 200),
	small(ir.I16, ir.I64, i64(-300), i64(-300)),
	small(ir.I16, ir.U32, i64(-2), 0xFFFF_FFFE),
	small(ir.U16, ir.U32, 65535, 65535),
	small(ir.U16, ir.U64, 65535, 65535),
	small(ir.U16, ir.I16, 65535, i64(-1)),
	small(ir.I8, ir.U8, i64(-1), 255),
	small(ir.U8, ir.I8, 200, i64(-56)),
	small(ir.I16, ir.U8, 0x1234, 0x34),
	small(ir.I16, ir.I8, i64(-32768), 0),
	small(ir.I8, ir.I16, i64(-5), i64(-5)),
	small(ir.U8, ir.U16, 255, 255),
	small(ir.I8, ir.U16, i64(-1), 65535),
	small(ir.I8, ir.F32, i64(-128), f32(-128)),
	small(ir.U8, ir.F64, 255, f64(255)),
	small(ir.I16, ir.F32, i64(-32768), f32(-32768)),
	small(ir.U16, ir.F64, 65535, f64(65535)),
	small(ir.U16, ir.F32, 40000, f32(40000)),

	// Bitcast: every bit kept.
	bitcast(ir.F32, ir.U32, f32(1), 0x3F80_0000),
	bitcast(ir.F32, ir.U32, f32(negZero32), 0x8000_0000),
	bitcast(ir.F32, ir.U32, 0x7FC0_0001, 0x7FC0_0001), // a NaN's payload
	bitcast(ir.F32, ir.U32, 0x0000_0001, 1),           // the least subnormal
	bitcast(ir.U32, ir.F32, 0x7F80_0000, f32(inf32)),
	bitcast(ir.U32, ir.F32, 1, 1),
	bitcast(ir.F32, ir.I32, f32(-2), i32(-0x4000_0000)),
	bitcast(ir.I32, ir.F32, i32(-1), 0xFFFF_FFFF),
	bitcast(ir.F64, ir.U64, f64(1), 0x3FF0_0000_0000_0000),
	bitcast(ir.U64, ir.F64, 1<<63, f64(negZero64)),
	bitcast(ir.F64, ir.I64, f64(negZero64), i64(math.MinInt64)),
	bitcast(ir.I64, ir.F64, 1, 1),
	bitcast(ir.I32, ir.U32, i32(-1), math.MaxUint32),
	bitcast(ir.U64, ir.I64, math.MaxUint64, i64(-1)),
}
