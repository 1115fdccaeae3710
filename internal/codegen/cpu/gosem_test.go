package cpu

import (
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
)

// The closure compiler runs the whole table of Go-semantics rules
// (package codegen/gosem), in every kernel form: scalar parameters and
// constants in a serial task (the uniform closures, and the constant
// folds), and operand arrays in a parallel loop (the lane loops), whole and
// in chunks. Where Go panics the CPU raises the run-time error, and a
// float-to-integer conversion gives what Go gives on this machine.
func TestGoSemantics(t *testing.T) {
	for _, form := range []gosem.Form{gosem.Params, gosem.Consts, gosem.Lanes} {
		for i, err := range gosem.Verify(gosem.CPU, func(c gosem.Case) gosem.Result { return runCase(t, c, form) }) {
			if i == 10 {
				t.Errorf("%v: ...", form)
				break
			}
			t.Errorf("%v: %v", form, err)
		}
	}
}

// lanes is the length of the operand arrays of Form Lanes: more than a
// batch, and not a multiple of one.
const lanes = Batch + 5

// runCase compiles c's kernel of form f and runs it.
func runCase(t *testing.T, c gosem.Case, f gosem.Form) gosem.Result {
	k := c.Kernel(fmt.Sprintf("case_%v", f), f)
	p := compileKernel(t, k)
	n := 1
	if f == gosem.Lanes {
		n = lanes
	}
	out, read := bitsArray(c.Result(), 0, n)
	args := &Args{Scalars: make([]uint64, len(k.Params)), Arrays: make([]Array, len(k.Params))}
	switch f {
	case gosem.Params:
		args.Scalars[0] = c.A
		if !c.IsConversion() {
			args.Scalars[1] = c.B
		}
	case gosem.Lanes:
		args.Arrays[0], _ = bitsArray(c.X, c.A, n)
		if !c.IsConversion() {
			args.Arrays[1], _ = bitsArray(c.Y, c.B, n)
		}
	}
	args.Arrays[len(k.Params)-1] = out
	chunks := chunkings[:1]
	if f == gosem.Lanes {
		chunks = chunkings[:3]
	}
	var first uint64
	for ci, ch := range chunks {
		if err := launch(p, args, ch.chunk, ch.workers); err != nil {
			return gosem.Result{Err: err}
		}
		for i := range n {
			if v := read(i); ci == 0 && i == 0 {
				first = v
			} else if !gosem.Same(c.Result(), v, first) {
				return gosem.Result{Err: fmt.Errorf("lane %d (chunks of %d) gives %s, lane 0 %s", i, ch.chunk, gosem.Show(c.Result(), v), gosem.Show(c.Result(), first))}
			}
		}
	}
	return gosem.Result{Bits: first}
}

// bitsArray is an array of n elements of type t, each the value bits
// (ir.Const's pattern), and a reader of its elements' bits.
func bitsArray(t ir.Type, bits uint64, n int) (Array, func(int) uint64) {
	switch t {
	case ir.I32:
		return typedArray[int32](bits, n)
	case ir.I64:
		return typedArray[int64](bits, n)
	case ir.U32:
		return typedArray[uint32](bits, n)
	case ir.U64:
		return typedArray[uint64](bits, n)
	case ir.F32:
		return typedArray[float32](bits, n)
	case ir.F64:
		return typedArray[float64](bits, n)
	case ir.I8:
		return typedArray[int8](bits, n)
	case ir.I16:
		return typedArray[int16](bits, n)
	case ir.U8:
		return typedArray[uint8](bits, n)
	case ir.U16:
		return typedArray[uint16](bits, n)
	}
	panic(fmt.Sprintf("no array of %v", t))
}

func typedArray[T scalar](bits uint64, n int) (Array, func(int) uint64) {
	s := make([]T, n)
	fill(s, fromBits[T](bits))
	return arr(s), func(i int) uint64 { return toBits(s[i]) }
}
