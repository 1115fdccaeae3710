package ptx

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// hornerKernel: y[i] = sum over k < n of x[i]*c[k], as a counted serial
// loop whose shape vary changes.
func hornerKernel(vary string) *ir.Kernel {
	b := ir.NewBuilder("horner_" + strings.ReplaceAll(vary, " ", "_"))
	x, c, y := b.Array("x", ir.F32, 1), b.Array("c", ir.F32, 1), b.Array("y", ir.F32, 1)
	lim := b.Array("lim", ir.I64, 1)
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
		acc := b.Decl("acc", ir.F32c(0))
		n := ir.Expr(ir.LenOf(c, 0))
		if vary == "loaded bound" {
			n = ir.Ld(lim, ir.I64c(0))
		}
		b.ForRange("k", n, func(k *ir.Var) {
			b.Assign(acc, ir.Op(ir.Add, ir.Ref(acc), ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.Ld(c, ir.Ref(k)))))
			if vary == "break" {
				b.If(ir.Op(ir.Gt, ir.Ref(acc), ir.F32c(1e6)), func() { b.Break() }, nil)
			}
		})
		b.Store(y, ir.Ref(acc), ir.Ref(i))
	})
	return b.Kernel()
}

// A counted loop runs trips of serialUnroll bodies while that many
// iterations remain, then the ordinary loop; loops that break, or whose
// bound is a load, are left as they are.
func TestSerialUnroll(t *testing.T) {
	loads := func(ptx string) int { return count(ptx, `ld\.global\.f32`) }
	m := compileKernel(t, hornerKernel("plain"))
	// Two loads per body: serialUnroll bodies, then the remainder loop's.
	if n, want := loads(m.PTX), 2*(serialUnroll+1); n != want {
		t.Errorf("%d loads, want %d:\n%s", n, want, numbered(m.PTX))
	}
	asm(t, m.PTX, `sub\.s64 %rd\d+, %rd\d+, %rd\d+`, `setp\.lt\.u64 %p\d+, %rd\d+, 4`,
		// c[k] in the bodies of a trip: one base, then immediates.
		`ld\.global\.f32 %f\d+, \[%rd\d+\+4\]`, `ld\.global\.f32 %f\d+, \[%rd\d+\+12\]`,
		// The base steps by a trip's 4 elements at the trip's end.
		`add\.s64 %rd\d+, %rd\d+, 16;\n\tbra\.uni`)
	// The entry lets ptxas spend registers on the trip (unrolledCTAs).
	asm(t, m.PTX, `\.maxntid 256, 1, 1\n\.minnctapersm 4\n\{`)
	for _, vary := range []string{"break", "loaded bound"} {
		m := compileKernel(t, hornerKernel(vary))
		if n := loads(m.PTX); n != 2 {
			t.Errorf("%s: %d loads, want 2 (no unrolling):\n%s", vary, n, numbered(m.PTX))
		}
		if count(m.PTX, `minnctapersm`) != 0 {
			t.Errorf("%s: .minnctapersm without an unrolled loop:\n%s", vary, numbered(m.PTX))
		}
	}
}

// With fast math a trip is fastUnroll bodies, each trip's bases computed
// at its top from the counter (no stepping).
func TestSerialUnrollFastMath(t *testing.T) {
	m := compileKernelWith(t, hornerKernel("plain"), Options{FastMath: true})
	if n, want := count(m.PTX, `ld\.global\.f32`), 2*(fastUnroll+1); n != want {
		t.Errorf("%d loads, want %d:\n%s", n, want, numbered(m.PTX))
	}
	asm(t, m.PTX, `setp\.lt\.u64 %p\d+, %rd\d+, 8`, `ld\.global\.f32 %f\d+, \[%rd\d+\+28\]`)
	if count(m.PTX, `add\.s64 %rd\d+, %rd\d+, 32;`) != 0 {
		t.Errorf("fast math stepped a base:\n%s", numbered(m.PTX))
	}
}

// A serial task runs one thread: its unrolled loop leaves the entry's
// occupancy hint alone.
func TestSerialUnrollSerialTask(t *testing.T) {
	b := ir.NewBuilder("serialSum")
	c, y := b.Array("c", ir.F32, 1), b.Array("y", ir.F32, 1)
	acc := b.Decl("acc", ir.F32c(0))
	b.ForRange("k", ir.LenOf(c, 0), func(k *ir.Var) {
		b.Assign(acc, ir.Op(ir.Add, ir.Ref(acc), ir.Ld(c, ir.Ref(k))))
	})
	b.Store(y, ir.Ref(acc), ir.I64c(0))
	m := compileKernel(t, b.Kernel())
	if n := count(m.PTX, `ld\.global\.f32`); n != serialUnroll+1 {
		t.Fatalf("%d loads, want %d (an unrolled serial loop):\n%s", n, serialUnroll+1, numbered(m.PTX))
	}
	if count(m.PTX, `minnctapersm`) != 0 {
		t.Errorf("a serial task's entry has .minnctapersm:\n%s", numbered(m.PTX))
	}
}
