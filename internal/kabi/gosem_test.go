package kabi

import (
	"errors"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
)

// The host evaluator of extents (HostTotal) gives what the GPUs give:
// it runs the whole table of Go-semantics rules (package codegen/gosem)
// on scalar parameters and on constants, and declines, as the rules say,
// where the device's result is unspecified.
func TestGoSemantics(t *testing.T) {
	a := &ir.Param{Name: "a", Index: 0}
	b := &ir.Param{Name: "b", Index: 1}
	for _, form := range []gosem.Form{gosem.Params, gosem.Consts} {
		for _, err := range gosem.Verify(gosem.Host, func(c gosem.Case) gosem.Result {
			var e ir.Expr
			if form == gosem.Params {
				a.Elem, b.Elem = c.X, c.Y
				e = c.Expr(&ir.ParamRef{Param: a}, &ir.ParamRef{Param: b})
			} else {
				e = c.Expr(&ir.Const{T: c.X, Bits: c.A}, &ir.Const{T: c.Y, Bits: c.B})
			}
			if !hostEvaluable(e) {
				t.Errorf("%v: not evaluable on the host", c)
				return gosem.Result{Err: errors.New("not evaluable")}
			}
			h := hostEval{scalars: []uint64{c.A, c.B}}
			bits := h.eval(e)
			if h.unknown {
				return gosem.Result{Err: errors.New("declined")}
			}
			return gosem.Result{Bits: bits}
		}) {
			t.Errorf("%v: %v", form, err)
		}
	}
}
