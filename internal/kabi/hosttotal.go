package kabi

import (
	"math"
	"slices"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
)

// HostTotal returns Task.HostTotal for a parallel loop with the given
// extents, or nil when an extent reads something the host does not have (a
// local, an array element, an atomic, a transcendental function).
//
// The host evaluates the extents with the semantics every GPU code
// generator implements, the rules of package codegen/gosem (its tests run
// the rules' table here too), so the count it gives is the count the
// kernel loops over: Go's wrapping integer arithmetic, IEEE float
// arithmetic, and float-to-integer conversions that truncate and saturate
// (NaN gives 0). Where the device's result is unspecified (integer
// division by zero, gosem.DivZero) or a parameter is missing, it returns
// math.MaxInt64: the grid is then as large as the launcher allows and the
// kernel bounds itself. Totals beyond 2^63-1 saturate there too.
func HostTotal(extents []ir.Expr) TotalFunc {
	for _, e := range extents {
		if !hostEvaluable(e) {
			return nil
		}
	}
	if f := leafTotal(extents); f != nil {
		return f
	}
	ext := slices.Clone(extents)
	return func(scalars []uint64, shapes [][4]int) int64 {
		h := hostEval{scalars: scalars, shapes: shapes}
		total := int64(1)
		for _, e := range ext {
			bits := h.eval(e)
			if h.unknown {
				return math.MaxInt64
			}
			n := int64(bits) // as the kernel's extent: uint64 ≥ 2^63 is negative
			if n <= 0 {
				return 0
			}
			if total > math.MaxInt64/n {
				total = math.MaxInt64
			} else {
				total *= n
			}
		}
		return total
	}
}

// leaf is an extent that is a constant, a scalar parameter or an array's
// extent: the common forms, which leafTotal evaluates without walking an
// expression tree on every launch.
type leaf struct {
	kind  byte // 'c' constant, 'p' parameter, 'l' array extent
	t     ir.Type
	index int    // parameter index ('p', 'l')
	dim   int    // 'l'
	bits  uint64 // 'c'
}

// leafTotal is the TotalFunc of extents that are all leaves, or nil. It
// gives what the general evaluation gives (TestLeafTotalMatches).
func leafTotal(extents []ir.Expr) TotalFunc {
	leaves := make([]leaf, 0, len(extents))
	for _, e := range extents {
		switch e := e.(type) {
		case *ir.Const:
			leaves = append(leaves, leaf{kind: 'c', t: e.T, bits: e.Bits})
		case *ir.ParamRef:
			leaves = append(leaves, leaf{kind: 'p', t: e.Param.Elem, index: e.Param.Index})
		case *ir.Len:
			if e.Dim < 0 || e.Dim >= ir.MaxDims {
				return nil
			}
			leaves = append(leaves, leaf{kind: 'l', index: e.Array.Index, dim: e.Dim})
		default:
			return nil
		}
	}
	return func(scalars []uint64, shapes [][4]int) int64 {
		total := int64(1)
		for i := range leaves {
			lf := &leaves[i]
			var bits uint64
			switch lf.kind {
			case 'c':
				bits = norm(lf.t, lf.bits)
			case 'p':
				if lf.index >= len(scalars) {
					return math.MaxInt64
				}
				bits = norm(lf.t, scalars[lf.index])
			default:
				if lf.index >= len(shapes) {
					return math.MaxInt64
				}
				bits = uint64(int64(shapes[lf.index][lf.dim]))
			}
			n := int64(bits)
			if n <= 0 {
				return 0
			}
			if total > math.MaxInt64/n {
				total = math.MaxInt64
			} else {
				total *= n
			}
		}
		return total
	}
}

func hostEvaluable(e ir.Expr) bool {
	ok := true
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Const, *ir.Unary, *ir.Binary, *ir.Convert, *ir.Select, *ir.Bitcast:
		case *ir.Len:
			ok = ok && !n.Array.IsShared()
		case *ir.ParamRef:
			ok = ok && !n.Param.IsArray()
		case *ir.Call:
			if !n.Fn.Exact() {
				ok = false // transcendental: the device's result may differ in the last bit
			}
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// hostEval evaluates expressions on the host. Values are ir.Const bit
// patterns: integers sign- or zero-extended to 64 bits, F32 in the low 32.
type hostEval struct {
	scalars []uint64
	shapes  [][4]int
	unknown bool
}

// norm is v, a value of type t in some extension, in ir.Const's form: the
// low bits of t's width, sign-extended for the signed types.
func norm(t ir.Type, v uint64) uint64 {
	switch t {
	case ir.I32:
		return uint64(int64(int32(v)))
	case ir.U32, ir.F32:
		return uint64(uint32(v))
	case ir.I8:
		return uint64(int64(int8(v)))
	case ir.I16:
		return uint64(int64(int16(v)))
	case ir.U8:
		return uint64(uint8(v))
	case ir.U16:
		return uint64(uint16(v))
	case ir.Bool:
		return v & 1
	}
	return v
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (h *hostEval) eval(e ir.Expr) uint64 {
	switch e := e.(type) {
	case *ir.Const:
		return norm(e.T, e.Bits)
	case *ir.ParamRef:
		if e.Param.Index >= len(h.scalars) {
			h.unknown = true
			return 0
		}
		return norm(e.Param.Elem, h.scalars[e.Param.Index])
	case *ir.Len:
		if e.Array.Index >= len(h.shapes) || e.Dim < 0 || e.Dim >= ir.MaxDims {
			h.unknown = true
			return 0
		}
		return uint64(int64(h.shapes[e.Array.Index][e.Dim]))
	case *ir.Unary:
		return h.unary(e)
	case *ir.Binary:
		if e.Op == ir.LAnd {
			return b2u(h.eval(e.X) != 0 && h.eval(e.Y) != 0)
		}
		if e.Op == ir.LOr {
			return b2u(h.eval(e.X) != 0 || h.eval(e.Y) != 0)
		}
		return h.binary(e.Op, e.X.Type(), h.eval(e.X), e.Y.Type(), h.eval(e.Y))
	case *ir.Convert:
		return hostConvert(e.To, e.X.Type(), h.eval(e.X))
	case *ir.Bitcast:
		// Same width: the bits stay (gosem.Bitcast), in To's form.
		return norm(e.To, h.eval(e.X))
	case *ir.Select:
		c, x, y := h.eval(e.Cond), h.eval(e.X), h.eval(e.Y)
		if c != 0 {
			return x
		}
		return y
	case *ir.Call:
		return h.call(e)
	}
	h.unknown = true
	return 0
}

func (h *hostEval) unary(e *ir.Unary) uint64 {
	t, x := e.X.Type(), h.eval(e.X)
	switch {
	case e.Op == ir.Not:
		return x ^ 1
	case e.Op == ir.BitNot:
		return norm(t, ^x)
	case t == ir.F32:
		return uint64(math.Float32bits(-math.Float32frombits(uint32(x))))
	case t == ir.F64:
		return math.Float64bits(-math.Float64frombits(x))
	}
	return norm(t, -x)
}

func (h *hostEval) binary(op ir.BinOp, t ir.Type, x uint64, yt ir.Type, y uint64) uint64 {
	switch {
	case t == ir.F32:
		return floatBinary(op, float64(math.Float32frombits(uint32(x))), float64(math.Float32frombits(uint32(y))), true)
	case t == ir.F64:
		return floatBinary(op, math.Float64frombits(x), math.Float64frombits(y), false)
	case t == ir.Bool:
		switch op {
		case ir.Eq:
			return b2u(x == y)
		case ir.Ne, ir.Xor:
			return b2u(x != y)
		case ir.And:
			return x & y
		case ir.Or:
			return x | y
		}
		h.unknown = true
		return 0
	}
	signed := t.IsSigned()
	sx, sy := int64(x), int64(y)
	less := func() bool {
		if signed {
			return sx < sy
		}
		return x < y
	}
	switch op {
	case ir.Add:
		return norm(t, x+y)
	case ir.Sub:
		return norm(t, x-y)
	case ir.Mul:
		return norm(t, x*y)
	case ir.Div, ir.Rem:
		if y == 0 {
			h.unknown = true // gosem.DivZero: unspecified on the device
			return 0
		}
		if signed {
			if sy == -1 { // gosem.Division: MinInt / -1 == MinInt, remainder 0
				if op == ir.Div {
					return norm(t, -x)
				}
				return 0
			}
			if op == ir.Div {
				return norm(t, uint64(sx/sy))
			}
			return norm(t, uint64(sx%sy))
		}
		if op == ir.Div {
			return x / y
		}
		return x % y
	case ir.And:
		return x & y
	case ir.Or:
		return x | y
	case ir.Xor:
		return x ^ y
	case ir.AndNot:
		return x &^ y
	case ir.Shl, ir.Shr:
		// gosem.ShiftWide and ShiftNegative: the count, unsigned (a
		// negative signed count is huge), at or past the width gives 0 or
		// the sign.
		n := y
		if yt.IsSigned() && int64(y) < 0 {
			n = math.MaxUint64
		}
		if op == ir.Shl {
			if n >= 64 {
				return 0
			}
			return norm(t, x<<n)
		}
		if signed {
			return norm(t, uint64(sx>>min(n, 63)))
		}
		if n >= 64 {
			return 0
		}
		return x >> n
	case ir.Eq:
		return b2u(x == y)
	case ir.Ne:
		return b2u(x != y)
	case ir.Lt:
		return b2u(less())
	case ir.Ge:
		return b2u(!less())
	case ir.Gt:
		x, y, sx, sy = y, x, sy, sx
		return b2u(less())
	case ir.Le:
		x, y, sx, sy = y, x, sy, sx
		return b2u(!less())
	case ir.Min, ir.Max:
		if less() == (op == ir.Min) {
			return x
		}
		return y
	}
	h.unknown = true
	return 0
}

// floatBinary applies op to two floats (float32 values when f32, which are
// exact in float64; each result is rounded to float32 once, as the device
// rounds it).
func floatBinary(op ir.BinOp, x, y float64, f32 bool) uint64 {
	var r float64
	switch op {
	case ir.Add:
		r = x + y
	case ir.Sub:
		r = x - y
	case ir.Mul:
		r = x * y
	case ir.Div:
		r = x / y
	case ir.Min:
		r = min(x, y)
	case ir.Max:
		r = max(x, y)
	case ir.Eq:
		return b2u(x == y)
	case ir.Ne:
		return b2u(x != y)
	case ir.Lt:
		return b2u(x < y)
	case ir.Le:
		return b2u(x <= y)
	case ir.Gt:
		return b2u(x > y)
	case ir.Ge:
		return b2u(x >= y)
	default:
		return 0
	}
	if f32 {
		// A float64 sum, difference or product of two float32 values is
		// exact, and a quotient rounds once more without double-rounding
		// error (53 ≥ 2·24+2), so this matches float32 arithmetic.
		return uint64(math.Float32bits(float32(r)))
	}
	return math.Float64bits(r)
}

// hostConvert converts like the device: integers extend or truncate,
// float to integer truncates and saturates (NaN → 0: gosem.FloatToInt's
// GPU result, gosem.Saturate; to an 8- or 16-bit type through int32, as
// Go converts: gosem.Saturate does it), to float rounds to nearest.
func hostConvert(to, from ir.Type, x uint64) uint64 {
	var f float64
	switch {
	case from.IsInteger() && to.IsInteger():
		return norm(to, x)
	case from.IsInteger():
		if to == ir.F32 {
			if from.IsSigned() {
				return uint64(math.Float32bits(float32(int64(x))))
			}
			return uint64(math.Float32bits(float32(x)))
		}
		if from.IsSigned() {
			return math.Float64bits(float64(int64(x)))
		}
		return math.Float64bits(float64(x))
	case from == ir.F32:
		f = float64(math.Float32frombits(uint32(x)))
	default:
		f = math.Float64frombits(x)
	}
	switch to {
	case ir.F32:
		return uint64(math.Float32bits(float32(f)))
	case ir.F64:
		return math.Float64bits(f)
	}
	bits, _ := gosem.Saturate(to, f)
	return bits
}

func (h *hostEval) call(e *ir.Call) uint64 {
	t := e.Args[0].Type()
	x := h.eval(e.Args[0])
	v := math.Float64frombits(x)
	if t == ir.F32 {
		v = float64(math.Float32frombits(uint32(x)))
	}
	switch e.Fn {
	case ir.Sqrt:
		v = math.Sqrt(v) // rounding the f64 root to f32 is correctly rounded
	case ir.Abs:
		v = math.Abs(v)
	case ir.Floor:
		v = math.Floor(v)
	case ir.Ceil:
		v = math.Ceil(v)
	case ir.Trunc:
		v = math.Trunc(v)
	case ir.Round:
		v = math.Round(v)
	default:
		h.unknown = true
	}
	if t == ir.F32 {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}
