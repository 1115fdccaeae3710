package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
)

// The PTX of the whole table of Go-semantics rules (package codegen/gosem)
// is assembled by ptxas, and run by the model of the PTX ISA's semantics
// (model_test.go): every case's kernels with scalar parameters and with
// constants, for sm_80 and for sm_90 (whose entries first wait for their
// predecessors), with and without fast math. Integer division by zero is
// left to the hardware (the rule's PTX outcome is Unspecified), which the
// model makes a poison value.
func TestGoSemantics(t *testing.T) {
	configs := []struct {
		name string
		tg   Target
		opts Options
	}{
		{"sm_80", Target{SM: 80, Version: "7.0"}, Options{}},
		{"sm_90", Target{SM: 90, Version: "7.8"}, Options{}},
		{"sm_90 fast math", Target{SM: 90, Version: "7.8"}, Options{FastMath: true}},
	}
	var module strings.Builder // every entry, for ptxas
	for ci, cfg := range configs {
		for _, f := range []gosem.Form{gosem.Params, gosem.Consts} {
			n := 0
			for _, err := range gosem.Verify(gosem.PTX, func(c gosem.Case) gosem.Result {
				n++
				text, layout, err := Generate(mustLower(t, c.Kernel(fmt.Sprintf("case%d_%v", n, f), f)), cfg.tg, cfg.opts)
				if err != nil {
					return gosem.Result{Err: err}
				}
				if ci == 0 {
					module.WriteString(text[strings.Index(text, "// task "):])
				}
				return runCaseModel(c, text, layout)
			}) {
				t.Errorf("%s, %v: %v", cfg.name, f, err)
			}
		}
	}
	assemble(t, "gosem", configs[0].tg.header()+"\n"+module.String())
}

// outAddr is where the model places the result array.
const outAddr = 0x1000

// runCaseModel runs the entry of c's kernel on the model and returns what
// it stored in out[0].
func runCaseModel(c gosem.Case, text string, layout *kabi.Module) gosem.Result {
	var args []uint64
	for _, s := range layout.Tasks[0].Slots {
		switch {
		case s.Kind == kabi.ArraySlot:
			args = append(args, outAddr)
		case s.Kind == kabi.ScalarSlot && s.Param == 0:
			args = append(args, c.A)
		case s.Kind == kabi.ScalarSlot && s.Param == 1:
			args = append(args, c.B)
		default:
			return gosem.Result{Err: fmt.Errorf("slot %+v", s)}
		}
	}
	mem, err := runEntry(text, args)
	if err != nil {
		return gosem.Result{Err: fmt.Errorf("%v\n%s", err, numbered(text))}
	}
	v, ok := mem[outAddr]
	if !ok {
		return gosem.Result{Err: fmt.Errorf("nothing stored")}
	}
	switch c.Result() {
	case ir.I32:
		v = uint64(int64(int32(v)))
	case ir.U32, ir.F32:
		v = uint64(uint32(v))
	case ir.I8:
		v = uint64(int64(int8(v)))
	case ir.I16:
		v = uint64(int64(int16(v)))
	case ir.U8:
		v = uint64(uint8(v))
	case ir.U16:
		v = uint64(uint16(v))
	}
	return gosem.Result{Bits: v}
}
