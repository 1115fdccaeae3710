package frontend

import (
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// Folding of IR constants. go/types folds Go's constant expressions; the
// front end makes more constants of its own: the variable of an unrolled
// loop, a helper's parameter bound to a constant argument, a conversion of
// a constant to a type parameter (T(1+1e-10) is no Go constant inside a
// generic function, but is one once T is float32). Folding their integer
// arithmetic keeps a[i+1] a constant index after unrolling, and folding
// comparisons lets "if T(1+1e-10) == 1" choose its branch at compile time.
// Every fold computes what the operation computes at run time, in the
// operands' IR type (integers wrap, shifts follow Go; floats round once, to
// nearest, as the separately rounded IEEE operations of every backend do);
// integer division by zero is left to run time, where the CPU reports it.

// foldBinary returns e folded when both operands are constants, else e;
// && and || also fold with one constant operand, as far as Go's evaluation
// allows (x && false drops x only when x has no effect).
func foldBinary(e *ir.Binary) ir.Expr {
	x, ok1 := e.X.(*ir.Const)
	y, ok2 := e.Y.(*ir.Const)
	if e.Op.IsLogical() && ok1 != ok2 {
		return foldLogical(e, x, y)
	}
	if !ok1 || !ok2 || !x.T.Valid() || !y.T.Valid() {
		return e
	}
	switch {
	case e.Op.IsLogical():
		if x.T != ir.Bool || y.T != ir.Bool {
			return e
		}
		if e.Op == ir.LAnd {
			return ir.BoolC(x.Bits != 0 && y.Bits != 0)
		}
		return ir.BoolC(x.Bits != 0 || y.Bits != 0)
	case e.Op.IsComparison():
		if x.T != y.T {
			return e
		}
		if c, ok := compareConst(e.Op, x, y); ok {
			return ir.BoolC(c)
		}
		return e
	case x.T.IsInteger() && (e.Op.IsShift() && y.T.IsInteger() || x.T == y.T):
		if v, ok := foldInt(e.Op, x, y); ok {
			return &ir.Const{T: x.T, Bits: v}
		}
	case x.T.IsFloat() && x.T == y.T:
		if v, ok := foldFloat(e.Op, x, y); ok {
			return v
		}
	}
	return e
}

// foldFloat folds + - * / of two float constants, rounding the result to
// their type as the operation does.
func foldFloat(op ir.BinOp, x, y *ir.Const) (ir.Expr, bool) {
	if x.T == ir.F32 {
		a, b := float32(x.Float()), float32(y.Float())
		switch op {
		case ir.Add:
			return ir.F32c(a + b), true
		case ir.Sub:
			return ir.F32c(a - b), true
		case ir.Mul:
			return ir.F32c(a * b), true
		case ir.Div:
			return ir.F32c(a / b), true
		}
		return nil, false
	}
	a, b := x.Float(), y.Float()
	switch op {
	case ir.Add:
		return ir.F64c(a + b), true
	case ir.Sub:
		return ir.F64c(a - b), true
	case ir.Mul:
		return ir.F64c(a * b), true
	case ir.Div:
		return ir.F64c(a / b), true
	}
	return nil, false
}

// compareConst compares two constants of one type.
func compareConst(op ir.BinOp, x, y *ir.Const) (bool, bool) {
	var c int // -1, 0, 1; unordered for a NaN
	switch {
	case x.T == ir.Bool:
		if op != ir.Eq && op != ir.Ne {
			return false, false
		}
		return (x.Bits == y.Bits) == (op == ir.Eq), true
	case x.T.IsFloat():
		a, b := x.Float(), y.Float()
		if math.IsNaN(a) || math.IsNaN(b) {
			return op == ir.Ne, true
		}
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	case x.T.IsSigned():
		a, b := signed(x), signed(y)
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	default:
		a, b := x.Bits, y.Bits
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	}
	switch op {
	case ir.Eq:
		return c == 0, true
	case ir.Ne:
		return c != 0, true
	case ir.Lt:
		return c < 0, true
	case ir.Le:
		return c <= 0, true
	case ir.Gt:
		return c > 0, true
	case ir.Ge:
		return c >= 0, true
	}
	return false, false
}

// signed is the value of a signed integer constant.
func signed(c *ir.Const) int64 {
	if c.T == ir.I32 {
		return int64(int32(c.Bits))
	}
	return int64(c.Bits)
}

// wrap truncates v to t's width, sign- or zero-extended as Const stores it.
func wrap(t ir.Type, v uint64) uint64 {
	switch t {
	case ir.I32:
		return uint64(int64(int32(v)))
	case ir.U32:
		return uint64(uint32(v))
	}
	return v
}

// foldInt folds an integer operation with Go's semantics.
func foldInt(op ir.BinOp, x, y *ir.Const) (uint64, bool) {
	t := x.T
	a, b := x.Bits, y.Bits
	switch op {
	case ir.Add:
		return wrap(t, a+b), true
	case ir.Sub:
		return wrap(t, a-b), true
	case ir.Mul:
		return wrap(t, a*b), true
	case ir.And:
		return a & b, true
	case ir.Or:
		return a | b, true
	case ir.Xor:
		return a ^ b, true
	case ir.AndNot:
		return a &^ b, true
	case ir.Min, ir.Max:
		less, _ := compareConst(ir.Lt, x, y)
		if less == (op == ir.Min) {
			return a, true
		}
		return b, true
	case ir.Div, ir.Rem:
		if b == 0 {
			return 0, false // a run-time error on the CPU: leave it there
		}
		if t.IsSigned() {
			p, q := signed(x), signed(y)
			if q == -1 {
				// MinInt / -1 wraps to MinInt with remainder 0, as in Go.
				if op == ir.Div {
					return wrap(t, uint64(-p)), true
				}
				return 0, true
			}
			if op == ir.Div {
				return wrap(t, uint64(p/q)), true
			}
			return wrap(t, uint64(p%q)), true
		}
		if op == ir.Div {
			return a / b, true
		}
		return a % b, true
	case ir.Shl, ir.Shr:
		if y.T.IsSigned() && signed(y) < 0 {
			return 0, false // a negative count panics in Go: leave it to run time
		}
		n := y.Bits
		w := uint64(t.Bits())
		if op == ir.Shl {
			if n >= w {
				return 0, true
			}
			return wrap(t, a<<n), true
		}
		if t.IsSigned() {
			if n >= w {
				n = w - 1
			}
			return wrap(t, uint64(signed(x)>>n)), true
		}
		if n >= w {
			return 0, true
		}
		return a >> n, true
	}
	return 0, false
}

// foldUnary returns e folded when its operand is a constant.
func foldUnary(e *ir.Unary) ir.Expr {
	x, ok := e.X.(*ir.Const)
	if !ok || !x.T.Valid() {
		return e
	}
	switch {
	case e.Op == ir.Not && x.T == ir.Bool:
		return ir.BoolC(x.Bits == 0)
	case e.Op == ir.Neg && x.T.IsInteger():
		return &ir.Const{T: x.T, Bits: wrap(x.T, -x.Bits)}
	case e.Op == ir.BitNot && x.T.IsInteger():
		return &ir.Const{T: x.T, Bits: wrap(x.T, ^x.Bits)}
	case e.Op == ir.Neg && x.T == ir.F32:
		return ir.F32c(-float32(x.Float()))
	case e.Op == ir.Neg && x.T == ir.F64:
		return ir.F64c(-x.Float())
	}
	return e
}

// foldLogical folds && and || with one constant operand (x or y).
func foldLogical(e *ir.Binary, x, y *ir.Const) ir.Expr {
	and := e.Op == ir.LAnd
	if x != nil && x.T == ir.Bool {
		if (x.Bits != 0) == and {
			return e.Y // true && y, false || y
		}
		return x // false && y, true || y: y is not evaluated
	}
	if y != nil && y.T == ir.Bool {
		if (y.Bits != 0) == and {
			return e.X // x && true, x || false
		}
		if !hasAtomic(e.X) {
			return y // x && false, x || true
		}
	}
	return e
}
