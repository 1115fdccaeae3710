package ptx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// reduceKernel sums, takes the min or max of, x into r[0]: a whole-range
// reduction.
func reduceKernel(op ir.AtomicOp, t ir.Type, dims int) *ir.Kernel {
	b := ir.NewBuilder("reduce_" + op.String() + "_" + t.String())
	x, r := b.Array("x", t, dims), b.Array("r", t, 1)
	body := func(idx ...*ir.Var) {
		ix := make([]ir.Expr, len(idx))
		for d, v := range idx {
			ix[d] = ir.Ref(v)
		}
		b.Do(ir.AtomicE(op, r, ir.Ld(x, ix...), ir.I64c(0)))
	}
	switch dims {
	case 1:
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { body(i) })
	case 2:
		b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) { body(i, j) })
	}
	return b.Kernel()
}

var atomicRE = regexp.MustCompile(`(red|atom)\.global`)

// Every type and operation: per-thread values, warp shuffles, one shared
// slot per warp, a barrier, one atomic per block; assembled by ptxas.
func TestReductionCodegen(t *testing.T) {
	for _, op := range []ir.AtomicOp{ir.AtomicAdd, ir.AtomicMin, ir.AtomicMax} {
		for _, ty := range []ir.Type{ir.I32, ir.U32, ir.I64, ir.U64, ir.F32, ir.F64} {
			m := compileKernel(t, reduceKernel(op, ty, 1))
			asm(t, m.PTX, `shfl\.sync\.down\.b32`, `bar\.sync 0`, `\.shared \.align 8 \.b8 red0\[256\]`,
				`st\.shared`, `ld\.shared`)
			// One atomic, after the loop; float min and max are a CAS loop.
			atomics := count(m.PTX, `(red|atom)\.global`)
			if atomics != 1 {
				t.Errorf("%s: %d atomics, want 1:\n%s", m.Name, atomics, numbered(m.PTX))
			}
			if i, j := strings.Index(m.PTX, "bar.sync"), atomicRE.FindStringIndex(m.PTX); i < 0 || j == nil || j[0] < i {
				t.Errorf("%s: the atomic comes before the barrier", m.Name)
			}
		}
	}
}

// A reduction body is unrolled: the loads of two iterations come first.
func TestReductionUnrolled(t *testing.T) {
	opts := skipNoUnroll(t)
	m := compileKernelWith(t, reduceKernel(ir.AtomicAdd, ir.F32, 1), opts)
	if n := count(m.PTX, `ld\.global\.f32`); n != unroll+1 {
		t.Errorf("%d loads, want %d (unrolled main loop and the remainder):\n%s", n, unroll+1, numbered(m.PTX))
	}
}

// Several reductions share the barrier; a 2-D range keeps its counters.
func TestReductionsTwoAnd2D(t *testing.T) {
	b := ir.NewBuilder("two")
	x, r := b.Array("x", ir.F64, 2), b.Array("r", ir.F64, 1)
	b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i), ir.Ref(j)))
		b.Do(ir.AtomicE(ir.AtomicAdd, r, ir.Ref(v), ir.I64c(0)))
		b.If(ir.Op(ir.Gt, ir.Ref(v), ir.F64c(0)), func() {
			b.Do(ir.AtomicE(ir.AtomicMax, r, ir.Ref(v), ir.I64c(1)))
		}, nil)
	})
	m := compileKernel(t, b.Kernel())
	asm(t, m.PTX, `red0\[256\]`, `red1\[256\]`)
	if n := count(m.PTX, `bar\.sync`); n != 1 {
		t.Errorf("%d barriers, want 1", n)
	}
	if n := count(m.PTX, `div\.u32`); n != 4 {
		t.Errorf("%d 32-bit divisions in a 2-D loop, want 4 (start and stride, of the row-chunked loop and of the flat one)", n)
	}
}
