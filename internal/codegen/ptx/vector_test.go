package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// saxpyVec: y[i] = a*x[i] + y[i] over len(y).
func saxpyVec(t ir.Type) *ir.Kernel {
	b := ir.NewBuilder("saxpy_" + t.String())
	a := b.Scalar("a", t)
	x, y := b.Array("x", t, 1), b.Array("y", t, 1)
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

func TestVectorLoop(t *testing.T) {
	m := compileKernel(t, saxpyVec(ir.F32))
	asm(t, m.PTX, `ld\.global\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}`, `st\.global\.v4\.f32`, `and\.b64 %rd\d+, %rd\d+, 15`)
	// x and y, for the vecUnroll vectors of the main loop and the one of
	// the remainder loop.
	if n, want := count(m.PTX, `ld\.global\.v4`), 2*(vecUnroll+1); n != want {
		t.Errorf("%d vector loads, want %d", n, want)
	}
	m = compileKernel(t, saxpyVec(ir.F64))
	asm(t, m.PTX, `ld\.global\.v2\.f64`, `st\.global\.v2\.f64`)

	// A write-only array is not read by the vector loop.
	b := ir.NewBuilder("scale")
	x, y := b.Array("x", ir.I32, 1), b.Array("y", ir.I32, 1)
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) { b.Store(y, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.I32c(3)), ir.Ref(i)) })
	m = compileKernel(t, b.Kernel())
	if n, want := count(m.PTX, `ld\.global\.v4`), vecUnroll+1; n != want {
		t.Errorf("%d vector loads, want %d", n, want)
	}
}

// Bodies the vector loop does not cover keep the ordinary loops only.
func TestNoVectorLoop(t *testing.T) {
	cases := map[string]func(b *ir.Builder){
		"neighbour": func(b *ir.Builder) {
			x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
			b.Parallel(ir.Op(ir.Sub, ir.LenOf(y, 0), ir.I64c(1)), func(i *ir.Var) {
				b.Store(y, ir.Ld(x, ir.Op(ir.Add, ir.Ref(i), ir.I64c(1))), ir.Ref(i))
			})
		},
		"mixed sizes": func(b *ir.Builder) {
			x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F64, 1)
			b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) { b.Store(y, ir.Conv(ir.F64, ir.Ld(x, ir.Ref(i))), ir.Ref(i)) })
		},
		"read after write": func(b *ir.Builder) {
			y, z := b.Array("y", ir.F32, 1), b.Array("z", ir.F32, 1)
			b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
				b.Store(y, ir.F32c(1), ir.Ref(i))
				b.Store(z, ir.Ld(y, ir.Ref(i)), ir.Ref(i))
			})
		},
		"2-D": func(b *ir.Builder) {
			x := b.Array("x", ir.F32, 2)
			b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i), ir.Ref(j)) })
		},
		"bool": func(b *ir.Builder) {
			x := b.Array("x", ir.Bool, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.BoolC(true), ir.Ref(i)) })
		},
	}
	for name, build := range cases {
		b := ir.NewBuilder("novec")
		build(b)
		plan, err := lower.Lower(b.Kernel())
		if err != nil {
			t.Fatal(err)
		}
		m, err := compilePlan(plan, testTarget)
		if err != nil {
			t.Fatal(err)
		}
		if count(m.PTX, `\.v[24]\.`) != 0 {
			t.Errorf("%s: vector accesses in\n%s", name, numbered(m.PTX))
		}
	}
}

// A reduction's reads are vector loads too.
func TestVectorReduction(t *testing.T) {
	m := compileKernel(t, reduceKernel(ir.AtomicAdd, ir.F32, 1))
	asm(t, m.PTX, `ld\.global\.v4\.f32`, `red\.global\.add\.f32`)
}
