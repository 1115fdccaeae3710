package frontend

import (
	"fmt"
	"go/ast"
	"strings"
)

// serialCtx says why statements outside a parallel loop are not at the top
// level of the kernel (or of a qd.StreamParallel block), and so why a range
// loop among them would run serially: the statement at the top level that
// contains them, or a qd.Serial block.
type serialCtx uint8

const (
	atTop         serialCtx = iota // at the top level: nothing made the code serial
	inIf                           // a branch of an if statement
	inLoop                         // the body of a serial loop: a three-clause for, or a range over a local array
	inSwitch                       // a case of a switch statement
	inEarlyReturn                  // a helper's statements after an early return, or its body wrapped for one
	inOperand                      // the right operand of && or ||, evaluated only when the left one lets it
	inSerial                       // a qd.Serial block: serial on purpose
)

// serialWhy says, for each reason, where a range loop that runs on one
// thread stands, what follows from it, and how to make it parallel: its
// error is worded as lower's errors for a parallel loop placed there.
var serialWhy = [...]struct{ where, why, fix string }{
	atTop: {"outside the top level of the kernel (or of a qd.StreamParallel block)", "",
		"move the loop to the top level"},
	inIf: {"inside an if statement", "",
		"move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the condition inside the loop body"},
	inLoop: {"inside a serial loop", "",
		"move the loop to the top level of the kernel (or of a qd.StreamParallel block), making the outer loop one more " +
			"dimension of a qd.NDRange loop, or launch the kernel once per outer iteration"},
	inSwitch: {"inside a switch statement", "",
		"move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the switch inside the loop body"},
	inEarlyReturn: {"after an early return", " (it runs only when the return does not)",
		"move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the return's condition inside the loop body"},
	inOperand: {"in the right operand of && or ||", " (it runs only when the left operand lets it)",
		"call the helper in a statement of its own at the top level of the kernel, before the && or ||"},
}

// serialFix ends every such error: the way to keep one thread on purpose.
const serialFix = "; for one thread on purpose, wrap the code in qd.Serial(func() { ... })"

// refuseSerialRange reports whether the range loop s, which is not at the
// top level, runs serially by mistake, and if so reports it. A loop inside
// a parallel loop runs once per iteration, as meant, and one in a block
// loop (qd.Blocks) per block or per thread; a loop over a local
// array is serial by nature; the value library's loops are over a few
// components; a qd.Serial block says that one thread is meant. Any other
// range loop would run its whole range on the one thread of a serial task
// (a 4M-element loop placed under an if took 99 ms instead of 0.72), and
// a loop that the front end unrolls over a constant count is no exception:
// where it may stand does not depend on its count.
func (b *builder) refuseSerialRange(s *ast.RangeStmt, local bool) bool {
	if local || b.inPar || b.blk != nil || b.fr.lib || b.serialIn == inSerial {
		return false
	}
	w := serialWhy[b.serialIn]
	in := ""
	if !b.fr.isKernel {
		kind := "helper"
		if strings.Contains(b.fr.name, ".") {
			kind = "method"
		}
		in = fmt.Sprintf(" in %s %s (called at %s)", kind, b.fr.name, b.fc.pos(b.fr.callPos))
	}
	b.errorf(s.Pos(), "range loop %s%s runs serially, on one thread%s; qd rejects it: %s%s", w.where, in, w.why, w.fix, serialFix)
	return true
}

// serialBlock translates qd.Serial(func() { ... }): the literal's
// statements, in place, as statements that are not at the top level, so
// that its range loops are serial loops of the task that holds them. In a
// parallel loop it changes nothing (a loop there is already serial, per
// iteration); it may also stand at the top level, in an if or a loop, or
// in a helper, and may be nested. A return may end the literal, as in Go.
func (b *builder) serialBlock(call *ast.CallExpr) {
	if len(call.Args) != 1 {
		return // a type error already
	}
	lit, ok := ast.Unparen(call.Args[0]).(*ast.FuncLit)
	if !ok {
		b.errorf(call.Args[0].Pos(), "the argument of qd.Serial must be a function literal: qd.Serial(func() { ... })")
		return
	}
	savedTop, savedIn := b.top, b.serialIn
	b.top, b.serialIn = false, inSerial
	b.fr.inLit++
	b.stmtList(lit.Body.List, true)
	b.fr.inLit--
	b.top, b.serialIn = savedTop, savedIn
}
