package ptx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// mainLoop is the PTX of the first entry up to its first instruction that
// matches stop: for an unrolled task, the prologue and the unrolled main
// loop up to its first store.
func mainLoop(t *testing.T, ptx, stop string) string {
	t.Helper()
	i := strings.Index(ptx, ".visible .entry")
	if i < 0 {
		t.Fatalf("no entry in\n%s", ptx)
	}
	ptx = ptx[i:]
	loc := regexp.MustCompile(stop).FindStringIndex(ptx)
	if loc == nil {
		t.Fatalf("no %q in\n%s", stop, numbered(ptx))
	}
	return ptx[:loc[0]]
}

func count(s, pattern string) int {
	return len(regexp.MustCompile(pattern).FindAllStringIndex(s, -1))
}

// skipNoUnroll skips a test of unrolling when it is off, and returns the
// options that turn the vector loops off so that the unrolled loop is the
// first.
func skipNoUnroll(t *testing.T) Options {
	if unroll < 2 {
		t.Skip("unrolling is off")
	}
	return Options{noVector: true}
}

func TestUnrollSaxpy(t *testing.T) {
	opts := skipNoUnroll(t)
	m := compileKernelWith(t, saxpy(), opts)
	// unroll iterations' 2 loads each come before the main loop's first
	// store, and the one-element remainder loop follows with 2 more.
	if n := count(mainLoop(t, m.PTX, `st\.global\.f32`), `ld\.global\.f32`); n != 2*unroll {
		t.Errorf("%d loads before the first store, want %d:\n%s", n, 2*unroll, numbered(m.PTX))
	}
	if n, want := count(m.PTX, `ld\.global\.f32`), 2*unroll+2; n != want {
		t.Errorf("%d loads, want %d", n, want)
	}
	if n, want := count(m.PTX, `st\.global\.f32`), unroll+1; n != want {
		t.Errorf("%d stores, want %d", n, want)
	}
	asm(t, m.PTX,
		`max\.s64 %rd\d+, %rd\d+, 0`, // the main loop's limit
		`(?s)`+strings.Repeat(`ld\.global\.f32.*`, 2*unroll)+strings.Repeat(`st\.global\.f32.*`, unroll),
	)
}

// A local gets one register per iteration, and its declarations are
// interleaved before the stores.
func TestUnrollLocal(t *testing.T) {
	opts := skipNoUnroll(t)
	b := ir.NewBuilder("unroll_local")
	x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		tv := b.Decl("t", ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.F32c(2)))
		b.Store(y, ir.Op(ir.Add, ir.Ref(tv), ir.F32c(1)), ir.Ref(i))
	})
	m := compileKernelWith(t, b.Kernel(), opts)
	head := mainLoop(t, m.PTX, `st\.global\.f32`)
	if n := count(head, `ld\.global\.f32`); n != unroll {
		t.Errorf("%d loads before the first store, want %d:\n%s", n, unroll, numbered(m.PTX))
	}
	if n := count(head, `mul\.rn\.f32`); n != unroll {
		t.Errorf("%d multiplications before the first store, want %d", n, unroll)
	}
}

// A store followed by a load of the same element in one iteration keeps its
// order: the reload comes after the iteration's store.
func TestUnrollStoreThenLoad(t *testing.T) {
	opts := skipNoUnroll(t)
	b := ir.NewBuilder("unroll_reload")
	y, z := b.Array("y", ir.F32, 1), b.Array("z", ir.F32, 1)
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
		b.Store(y, ir.F32c(1), ir.Ref(i))
		b.Store(z, ir.Ld(y, ir.Ref(i)), ir.Ref(i))
	})
	m := compileKernelWith(t, b.Kernel(), opts)
	if n := count(mainLoop(t, m.PTX, `ld\.global\.f32`), `st\.global\.f32`); n != unroll {
		t.Errorf("%d stores before the first load, want the %d of the first statement:\n%s", n, unroll, numbered(m.PTX))
	}
}

// Bodies with control flow, atomics, transcendental calls, or that set a
// per-launch temporary are not unrolled.
func TestUnrollNotSimple(t *testing.T) {
	b := ir.NewBuilder("unroll_if")
	x, y := b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.If(ir.Op(ir.Gt, ir.Ld(x, ir.Ref(i)), ir.F32c(0)), func() {
			b.Store(y, ir.Ld(x, ir.Ref(i)), ir.Ref(i))
		}, nil)
	})
	ifK := b.Kernel()

	b = ir.NewBuilder("unroll_exp")
	x, y = b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Fn(ir.Exp, ir.Ld(x, ir.Ref(i))), ir.Ref(i))
	})
	expK := b.Kernel()

	b = ir.NewBuilder("unroll_atomic") // a histogram: not a reduction
	x, s := b.Array("x", ir.F32, 1), b.Array("s", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Do(&ir.Atomic{Op: ir.AtomicAdd, Array: s, Index: []ir.Expr{ir.Conv(ir.I64, ir.Ld(x, ir.Ref(i)))}, Value: ir.F32c(1)})
	})
	atomicK := b.Kernel()

	for _, k := range []*ir.Kernel{ifK, expK, atomicK} {
		m := compileKernel(t, k)
		if n := count(m.PTX, `ld\.global\.f32`); n > 2 {
			t.Errorf("%s: %d loads: unrolled:\n%s", k.Name, n, numbered(m.PTX))
		}
		asm(t, m.PTX, `!max\.s64`)
	}
}

// A multi-dimensional range is not unrolled by default. When allowed, each
// iteration's variables come from its own counters, stepped from the
// previous iteration's, in both the 32- and the 64-bit form; bool stores
// and assignments to locals work.
func TestUnrollMultiDim(t *testing.T) {
	opts := skipNoUnroll(t)
	if unrollMaxDims != 1 {
		t.Fatalf("unrollMaxDims = %d; update this test", unrollMaxDims)
	}
	asm(t, compileKernelWith(t, multiDimBody(), opts).PTX, `!max\.s64`)
	opts.unrollDims = 3
	m := compileKernelWith(t, multiDimBody(), opts)
	if n := count(mainLoop(t, m.PTX, `st\.global\.s32`), `ld\.global\.s32`); n != unroll {
		t.Errorf("%d loads before the first store, want %d:\n%s", n, unroll, numbered(m.PTX))
	}
	// No division in the loops: one per form splits the thread's start
	// point and one the stride, once.
	if n := count(m.PTX, `div\.u32`); n != 2 {
		t.Errorf("%d 32-bit divisions, want 2", n)
	}
	if n := count(m.PTX, `div\.u64`); n != 2 {
		t.Errorf("%d 64-bit divisions, want 2", n)
	}
	asm(t, m.PTX, `st\.global\.u8`)
}

func multiDimBody() *ir.Kernel {
	b := ir.NewBuilder("unroll_2d")
	a, c := b.Array("a", ir.I32, 2), b.Array("c", ir.Bool, 2)
	b.Parallel2(ir.Conv(ir.I32, ir.LenOf(a, 0)), ir.Conv(ir.I32, ir.LenOf(a, 1)), func(i, j *ir.Var) {
		v := b.Decl("v", ir.Op(ir.Add, ir.Ld(a, ir.Ref(i), ir.Ref(j)), ir.Ref(j)))
		b.Assign(v, ir.Op(ir.Mul, ir.Ref(v), ir.Ref(i)))
		b.Store(a, ir.Ref(v), ir.Ref(i), ir.Ref(j))
		b.Store(c, ir.Op(ir.Gt, ir.Ref(v), ir.I32c(0)), ir.Ref(i), ir.Ref(j))
	})
	return b.Kernel()
}
