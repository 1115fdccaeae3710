package gosem

import (
	"fmt"
	"math"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// Result is what a backend gave for a case: the result's bits as ir.Const
// holds them, or the error the kernel (or evaluator) stopped with.
type Result struct {
	Bits uint64
	Err  error
}

// Verify runs every case of the table through run, b's way of computing
// it, and returns a description of each result that is not what the
// case's rule says b does. A backend's test calls it once per kernel form
// it runs, so every case reaches every backend.
func Verify(b Backend, run func(Case) Result) []error {
	var errs []error
	for _, c := range Cases {
		if err := Check(b, c, run(c)); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Check compares one result of backend b with what c's rule says b does.
func Check(b Backend, c Case, got Result) error {
	info := Rules[c.Rule]
	switch out := info.Does[b]; out {
	case Want, HostGo:
		want := c.Want
		if out == HostGo {
			bits, panics := Reference(c)
			if panics {
				return fmt.Errorf("%v: Go panics, so %v cannot give Go's value", c, b)
			}
			want = bits
		}
		if got.Err != nil {
			return fmt.Errorf("%v on %v: error %v, want %s", c, b, got.Err, Show(c.Result(), want))
		}
		if !Same(c.Result(), got.Bits, want) {
			return fmt.Errorf("%v on %v = %s, want %s", c, b, Show(c.Result(), got.Bits), Show(c.Result(), want))
		}
	case RuntimeError:
		if got.Err == nil || !strings.Contains(got.Err.Error(), info.Error) {
			return fmt.Errorf("%v on %v: error %v (value %s), want the run-time error %q", c, b, got.Err, Show(c.Result(), got.Bits), info.Error)
		}
	case Declines:
		if got.Err == nil {
			return fmt.Errorf("%v on %v = %s, want no value", c, b, Show(c.Result(), got.Bits))
		}
	case Unspecified:
	default:
		return fmt.Errorf("%v: rule %v says nothing of %v", c, c.Rule, b)
	}
	return nil
}

// Same reports whether bits x and y of type t are the same value: bit for
// bit, except that any two NaNs are (Go does not define NaN payloads).
func Same(t ir.Type, x, y uint64) bool {
	switch t {
	case ir.F32:
		a, b := math.Float32frombits(uint32(x)), math.Float32frombits(uint32(y))
		return uint32(x) == uint32(y) || a != a && b != b
	case ir.F64:
		a, b := math.Float64frombits(x), math.Float64frombits(y)
		return x == y || a != a && b != b
	}
	return x == y
}

// Expr is c's operation applied to the operand expressions a and b (b is
// unused by a conversion).
func (c Case) Expr(a, b ir.Expr) ir.Expr {
	if c.Bitcast {
		return &ir.Bitcast{X: a, To: c.To}
	}
	if c.IsConversion() {
		return &ir.Convert{To: c.To, X: a}
	}
	return ir.NewBinary(c.Op, a, b)
}

// Form is how a case's kernel receives its operands.
type Form uint8

const (
	// Params: a serial task computes out[0] from scalar parameters a and b
	// (a alone for a conversion): func(a X, b Y, out []R).
	Params Form = iota + 1
	// Consts: a serial task computes out[0] from constant operands:
	// func(out []R).
	Consts
	// Lanes: a parallel loop computes out[i] from x[i] and y[i], arrays
	// that the caller fills with the case's operands (all alike), which a
	// vectorizing backend runs in its vector code: func(x []X, y []Y,
	// out []R).
	Lanes
)

var formNames = [...]string{Params: "params", Consts: "consts", Lanes: "lanes"}

func (f Form) String() string {
	if int(f) < len(formNames) && formNames[f] != "" {
		return formNames[f]
	}
	return "form?"
}

// Kernel is the kernel that computes c in form f, named name. Its last
// parameter is the result array out; its first ones are the operands
// (Form's order).
func (c Case) Kernel(name string, f Form) *ir.Kernel {
	b := ir.NewBuilder(name)
	switch f {
	case Params:
		a := b.Scalar("a", c.X)
		var y ir.Expr
		if !c.IsConversion() {
			y = ir.P(b.Scalar("b", c.Y))
		}
		out := b.Array("out", c.Result(), 1)
		b.Store(out, c.Expr(ir.P(a), y), ir.I64c(0))
	case Consts:
		out := b.Array("out", c.Result(), 1)
		b.Store(out, c.Expr(&ir.Const{T: c.X, Bits: c.A}, &ir.Const{T: c.Y, Bits: c.B}), ir.I64c(0))
	case Lanes:
		x := b.Array("x", c.X, 1)
		var y *ir.Param
		if !c.IsConversion() {
			y = b.Array("y", c.Y, 1)
		}
		out := b.Array("out", c.Result(), 1)
		b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
			var yi ir.Expr
			if y != nil {
				yi = ir.Ld(y, ir.Ref(i))
			}
			b.Store(out, c.Expr(ir.Ld(x, ir.Ref(i)), yi), ir.Ref(i))
		})
	default:
		panic("gosem: unknown form")
	}
	return b.Kernel()
}
