package frontend

import "github.com/quadrants-go/qd/internal/ir"

// 8- and 16-bit integers (int8, int16, uint8, uint16) hold values in the IR
// but have no arithmetic there: the IR computes in 32 or 64 bits, as every
// generator's registers do. The front end gives them Go's semantics by
// widening each operand to the 32-bit integer of the same signedness
// (sign- or zero-extending it), computing there, and converting the result
// back, which truncates. Truncation keeps exactly the low bits Go's
// wrap-around at the small width keeps: +, -, *, <<, &, |, ^, &^, unary -
// and ^ only ever depend on the low bits of their operands, and /, %, >>,
// min and max of in-range widened values are the exact results, so their
// truncations are Go's (int8(-128)/-1 is 128 in 32 bits and -128 again
// once truncated, as in Go). Comparisons of the widened values are the
// comparisons of the small ones, and need no conversion back.

// wide is the 32-bit type a small integer type is computed in.
func wide(t ir.Type) ir.Type {
	if t.IsSigned() {
		return ir.I32
	}
	return ir.U32
}

// widen returns e as its 32-bit type when it is a small integer, else e.
func widen(e ir.Expr) ir.Expr {
	t := e.Type()
	if !t.IsSmall() {
		return e
	}
	if c, ok := e.(*ir.Const); ok {
		// Small constants are canonical (sign- or zero-extended), so the
		// bits are already those of the wide value.
		return &ir.Const{T: wide(t), Bits: c.Bits}
	}
	return &ir.Convert{To: wide(t), X: e}
}

// narrow converts e, computed in t's 32-bit type, back to the small type t.
func narrow(t ir.Type, e ir.Expr) ir.Expr {
	if c, ok := e.(*ir.Const); ok {
		return &ir.Const{T: t, Bits: truncBits(t, c.Bits)}
	}
	return &ir.Convert{To: t, X: e}
}

// truncBits is v truncated to the integer type t and re-extended to the
// canonical constant bits of t (signed sign-extended, unsigned
// zero-extended).
func truncBits(t ir.Type, v uint64) uint64 {
	switch t {
	case ir.I8:
		return uint64(int64(int8(v)))
	case ir.I16:
		return uint64(int64(int16(v)))
	case ir.U8:
		return uint64(uint8(v))
	case ir.U16:
		return uint64(uint16(v))
	}
	return wrap(t, v)
}

// arith builds the binary operation op on x and y (of one type, except for
// shifts) with Go's semantics, folding constants; small integers are
// computed in 32 bits and truncated back.
func arith(op ir.BinOp, x, y ir.Expr) ir.Expr {
	xt := x.Type()
	if !xt.IsSmall() && !y.Type().IsSmall() {
		return foldBinary(ir.NewBinary(op, x, y))
	}
	r := foldBinary(ir.NewBinary(op, widen(x), widen(y)))
	if op.IsComparison() || !xt.IsSmall() {
		// A comparison yields a bool; a shift of a wide value by a small
		// count has the wide type already.
		return r
	}
	return narrow(xt, r)
}

// arithUnary builds the unary operation op on x with Go's semantics,
// computing small integers in 32 bits as arith does.
func arithUnary(op ir.UnOp, x ir.Expr) ir.Expr {
	t := x.Type()
	if !t.IsSmall() {
		return foldUnary(&ir.Unary{Op: op, X: x})
	}
	return narrow(t, foldUnary(&ir.Unary{Op: op, X: widen(x)}))
}
