package ir

import "math"

// Expr is an expression. Every expression has a scalar type.
type Expr interface {
	Type() Type
	exprNode()
}

// Const is a constant of a scalar type. Bits holds the value: integers
// (the 8- and 16-bit ones too) as two's complement sign- or zero-extended
// to 64 bits, bools as 0 or 1, F32 as
// math.Float32bits in the low 32 bits, F64 as math.Float64bits.
type Const struct {
	T    Type
	Bits uint64
}

// Int returns c as a signed integer (for integer and bool constants).
func (c *Const) Int() int64 { return int64(c.Bits) }

// Float returns c as a float64 (for F32 and F64 constants).
func (c *Const) Float() float64 {
	if c.T == F32 {
		return float64(math.Float32frombits(uint32(c.Bits)))
	}
	return math.Float64frombits(c.Bits)
}

// ParamRef reads a scalar parameter.
type ParamRef struct{ Param *Param }

// VarRef reads a local variable.
type VarRef struct{ Var *Var }

// Len is the extent of dimension Dim (0-based) of an array parameter, of
// type I64 like Go's len.
type Len struct {
	Array *Param
	Dim   int
}

// UnOp is a unary operator.
type UnOp uint8

// Unary operators.
const (
	Neg    UnOp = iota + 1 // -x, numeric
	Not                    // !x, bool
	BitNot                 // ^x, integer
)

// Unary applies Op to X; the result has X's type.
type Unary struct {
	Op UnOp
	X  Expr
}

// BinOp is a binary operator.
type BinOp uint8

// Binary operators. Arithmetic and bit operators take two operands of one
// type and give that type, except Shl and Shr whose Y may be any integer
// type (Go semantics: a count of at least the width gives 0, or -1 for Shr of
// a negative signed value). Comparisons give Bool. LAnd and LOr take Bools and
// evaluate Y only when needed (Go's && and ||). Min and Max are Go's builtins
// (for floats: NaN if either is NaN; Min(-0, +0) is -0). Package
// codegen/gosem tabulates these rules, and what each backend does where Go
// panics (a zero divisor, a negative shift count).
const (
	Add BinOp = iota + 1
	Sub
	Mul
	Div // integer division truncates; division by zero is a kernel error on the CPU
	Rem // integers only
	And
	Or
	Xor
	AndNot
	Shl
	Shr
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	LAnd
	LOr
	Min
	Max
)

// IsComparison reports whether op compares and yields Bool.
func (op BinOp) IsComparison() bool { return op >= Eq && op <= Ge }

// IsLogical reports whether op is && or ||.
func (op BinOp) IsLogical() bool { return op == LAnd || op == LOr }

// IsShift reports whether op is << or >>.
func (op BinOp) IsShift() bool { return op == Shl || op == Shr }

// Binary applies Op to X and Y.
type Binary struct {
	Op   BinOp
	X, Y Expr
	// T is the result type, set by NewBinary (and Op). When it is Invalid
	// Type works it out from X, which for a long chain x+1+1+... walks the
	// whole left spine on every call: code that builds chains uses
	// NewBinary so that walking them stays linear.
	T Type
}

// NewBinary applies op to x and y, working out the result type once.
func NewBinary(op BinOp, x, y Expr) *Binary {
	e := &Binary{Op: op, X: x, Y: y}
	e.T = e.resultType()
	return e
}

// Convert converts X to type To with Go's conversion rules (float to integer
// truncates toward zero; out-of-range results are implementation-defined as
// in Go: the GPUs saturate and give 0 for NaN, gosem.FloatToInt).
// Converting to or from Bool is not allowed.
type Convert struct {
	To Type
	X  Expr
}

// Select is Cond ? X : Y; both X and Y are evaluated.
type Select struct {
	Cond, X, Y Expr
}

// Intrinsic is a math function.
type Intrinsic uint8

// Math intrinsics, over F32 or F64 (all arguments and the result share one
// type), with the meaning of the function of the same name in Go's math
// package. Abs, Min and Max on integers are expressed with other nodes.
const (
	Sqrt Intrinsic = iota + 1
	Exp
	Exp2
	Log
	Log2
	Log10
	Sin
	Cos
	Tan
	Asin
	Acos
	Atan
	Atan2 // 2 args
	Sinh
	Cosh
	Tanh
	Pow // 2 args
	Abs
	Floor
	Ceil
	Trunc
	Round // half away from zero, as math.Round
	Mod   // 2 args, as math.Mod
	Hypot // 2 args
	numIntrinsics
)

var intrinsicNames = [...]string{
	Sqrt: "sqrt", Exp: "exp", Exp2: "exp2", Log: "log", Log2: "log2", Log10: "log10",
	Sin: "sin", Cos: "cos", Tan: "tan", Asin: "asin", Acos: "acos", Atan: "atan", Atan2: "atan2",
	Sinh: "sinh", Cosh: "cosh", Tanh: "tanh", Pow: "pow", Abs: "abs", Floor: "floor", Ceil: "ceil",
	Trunc: "trunc", Round: "round", Mod: "mod", Hypot: "hypot",
}

func (f Intrinsic) String() string {
	if f > 0 && f < numIntrinsics {
		return intrinsicNames[f]
	}
	return "intrinsic?"
}

// Arity is the number of arguments f takes (0 for an unknown intrinsic).
func (f Intrinsic) Arity() int {
	switch f {
	case Atan2, Pow, Mod, Hypot:
		return 2
	}
	if f > 0 && f < numIntrinsics {
		return 1
	}
	return 0
}

// Exact reports whether f is computed exactly, one correctly rounded
// operation (Sqrt) or none at all (Abs, Floor, Ceil, Trunc, Round): what
// every code generator writes inline and the host can evaluate as the
// device does. The others are transcendental: the generators call
// package codegen/devmath's routines for them, whose last bit may differ
// from Go's.
func (f Intrinsic) Exact() bool {
	switch f {
	case Sqrt, Abs, Floor, Ceil, Trunc, Round:
		return true
	}
	return false
}

// Intrinsics lists every intrinsic, in declaration order.
func Intrinsics() []Intrinsic {
	out := make([]Intrinsic, 0, numIntrinsics-1)
	for f := Sqrt; f < numIntrinsics; f++ {
		out = append(out, f)
	}
	return out
}

// Call applies a math intrinsic.
type Call struct {
	Fn   Intrinsic
	Args []Expr
}

// Load reads Array[Index[0]]...[Index[Dims-1]], or leaf Leaf of that
// element when Array holds records. Indices have integer types.
type Load struct {
	Array *Param
	Index []Expr
	Leaf  int
}

// Bitcast reinterprets the bits of X as type To, of the same size (a
// float32 as a uint32: math.Float32bits, and back).
type Bitcast struct {
	X  Expr
	To Type
}

// AtomicOp is an atomic read-modify-write operation.
type AtomicOp uint8

// Atomic operations. Each returns the old value. CAS stores Value when the
// old value equals Compare.
const (
	AtomicAdd AtomicOp = iota + 1
	AtomicSub
	AtomicMin
	AtomicMax
	AtomicAnd // integers only
	AtomicOr  // integers only
	AtomicXor // integers only
	AtomicExchange
	AtomicCAS
)

var atomicNames = [...]string{AtomicAdd: "add", AtomicSub: "sub", AtomicMin: "min", AtomicMax: "max",
	AtomicAnd: "and", AtomicOr: "or", AtomicXor: "xor", AtomicExchange: "exchange", AtomicCAS: "cas"}

func (op AtomicOp) String() string {
	if op > 0 && int(op) < len(atomicNames) {
		return atomicNames[op]
	}
	return "atomic?"
}

// Atomic atomically applies Op with Value to the array element at Index and
// yields the element's old value.
type Atomic struct {
	Op      AtomicOp
	Array   *Param
	Index   []Expr
	Leaf    int // the element's leaf, when Array holds records
	Value   Expr
	Compare Expr // AtomicCAS only
}

func (e *Const) Type() Type    { return e.T }
func (e *ParamRef) Type() Type { return e.Param.Elem }
func (e *VarRef) Type() Type   { return e.Var.Type }
func (e *Len) Type() Type      { return I64 }
func (e *Unary) Type() Type    { return e.X.Type() }
func (e *Binary) Type() Type {
	if e.T != Invalid {
		return e.T
	}
	return e.resultType()
}

func (e *Binary) resultType() Type {
	if e.Op.IsComparison() || e.Op.IsLogical() {
		return Bool
	}
	if e.X == nil {
		return Invalid
	}
	return e.X.Type()
}
func (e *Convert) Type() Type { return e.To }
func (e *Select) Type() Type  { return e.X.Type() }
func (e *Call) Type() Type {
	if len(e.Args) == 0 {
		return Invalid
	}
	return e.Args[0].Type()
}
func (e *Load) Type() Type    { return e.Array.LeafType(e.Leaf) }
func (e *Atomic) Type() Type  { return e.Array.LeafType(e.Leaf) }
func (e *Bitcast) Type() Type { return e.To }

func (*Bitcast) exprNode()  {}
func (*Const) exprNode()    {}
func (*ParamRef) exprNode() {}
func (*VarRef) exprNode()   {}
func (*Len) exprNode()      {}
func (*Unary) exprNode()    {}
func (*Binary) exprNode()   {}
func (*Convert) exprNode()  {}
func (*Select) exprNode()   {}
func (*Call) exprNode()     {}
func (*Load) exprNode()     {}
func (*Atomic) exprNode()   {}
