package ptx

import (
	"slices"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/ptxas"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// sm90v81 is an sm_90 target whose driver takes PTX ISA 8.1.
var sm90v81 = Target{SM: 90, Version: "7.8", MaxVersion: "8.1"}

// Adjacent float32 atomic adds of one element become one vector add on
// sm_90 with PTX ISA 8.1, behind a test of the array's alignment that
// keeps the scalar adds for a misaligned start; everywhere else, and for
// every layout or statement that does not qualify, they stay scalar.
func TestVectorRed(t *testing.T) {
	gen := func(k *ir.Kernel, tg Target, o Options) string {
		t.Helper()
		text, _, err := Generate(mustLower(t, k), tg, stubbed(o))
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		return text
	}
	v2 := gen(suitekernels.Scatter2(), sm90v81, Options{})
	asm(t, v2, `(?m)^\.version 8\.1$`,
		`and\.b64 %rd\d+, %rd\d+, 7;\n\tsetp\.ne\.u64 (%p\d+), %rd\d+, 0;\n\t@%p\d+ bra \$L\d+;\n\tred\.global\.add\.v2\.f32 \[(%rd\d+)\], \{%f\d+, %f\d+\};`,
		`red\.global\.add\.f32 \[%rd\d+\], %f\d+;\n\tred\.global\.add\.f32 \[%rd\d+\+4\], %f\d+;`, // the misaligned start's
		`red\.global\.add\.f32 \[%rd\d+\+8\], %f\d+;`, // M, on its own
		`red\.global\.add\.s32 \[%rd\d+\+12\], %r\d+;`,
		`!\.v4`)
	v4 := gen(suitekernels.Scatter4(), sm90v81, Options{})
	asm(t, v4, `and\.b64 %rd\d+, %rd\d+, 15;`, `red\.global\.add\.v4\.f32 \[%rd\d+\], \{%f\d+, %f\d+, %f\d+, %f\d+\};`, `!\.v2`)

	for _, c := range []struct {
		name string
		tg   Target
		o    Options
	}{
		{"sm_90 without PTX ISA 8.1", Target{SM: 90, Version: "7.8", MaxVersion: "7.8"}, Options{}},
		{"sm_90 of a hand-written target", Target{SM: 90, Version: "7.8"}, Options{}},
		{"sm_80", Target{SM: 80, Version: "7.0", MaxVersion: "8.1"}, Options{}},
		{"index checks", sm90v81, Options{Debug: true}},
	} {
		for _, k := range []*ir.Kernel{suitekernels.Scatter2(), suitekernels.Scatter4()} {
			text := gen(k, c.tg, c.o)
			asm(t, text, `!red\.global\.add\.v`, `!\.version 8\.1`, `red\.global\.add\.f32`)
		}
	}

	// Statements that do not qualify keep the scalar adds.
	rec := func(size int, offsets ...int) *ir.Record {
		r := &ir.Record{Name: "R", Size: size, Align: 4}
		for _, o := range offsets {
			r.Leaves = append(r.Leaves, ir.Leaf{Path: ".F", Type: ir.F32, Offset: o})
		}
		return r
	}
	scatter := func(r *ir.Record, leaves []int, value func(w *ir.Param, wi *ir.Var, i *ir.Var) ir.Expr, index func(c *ir.Var, k int) ir.Expr) *ir.Kernel {
		b := ir.NewBuilder("s")
		grid := b.Records("grid", r, 1)
		idx, w := b.Array("idx", ir.I32, 1), b.Array("w", ir.F32, 1)
		b.Parallel(ir.LenOf(idx, 0), func(i *ir.Var) {
			c := b.Decl("c", ir.Conv(ir.I64, ir.Ld(idx, ir.Ref(i))))
			wi := b.Decl("wi", ir.Ld(w, ir.Ref(i)))
			for k, leaf := range leaves {
				v := ir.Ref(wi)
				if k > 0 && value != nil {
					v = value(w, wi, i)
				}
				at := ir.Ref(c)
				if index != nil {
					at = index(c, k)
				}
				b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, leaf, v, at))
			}
		})
		return b.Kernel()
	}
	for _, c := range []struct {
		name string
		k    *ir.Kernel
	}{
		{"a 12-byte element", scatter(rec(12, 0, 4, 8), []int{0, 1}, nil, nil)},
		{"leaves at 4 and 8", scatter(rec(16, 0, 4, 8, 12), []int{1, 2}, nil, nil)},
		{"leaves apart", scatter(rec(16, 0, 4, 8, 12), []int{0, 2}, nil, nil)},
		{"leaves in reverse", scatter(rec(16, 0, 4, 8, 12), []int{1, 0}, nil, nil)},
		{"a value that loads", scatter(rec(16, 0, 4, 8, 12), []int{0, 1}, func(w *ir.Param, _, i *ir.Var) ir.Expr { return ir.Ld(w, ir.Ref(i)) }, nil)},
		{"another element", scatter(rec(16, 0, 4, 8, 12), []int{0, 1}, nil, func(c *ir.Var, k int) ir.Expr { return ir.Op(ir.Add, ir.Ref(c), ir.I64c(int64(k))) })},
	} {
		text := gen(c.k, sm90v81, Options{})
		asm(t, text, `!red\.global\.add\.v`, `!\.version 8\.1`)
		if t.Failed() {
			t.Fatalf("%s:\n%s", c.name, numbered(text))
		}
	}
	// Two leaves of four adjacent ones at 16-byte alignment make one .v4;
	// a pair at offset 8 of a 16-byte element is a .v2.
	asm(t, gen(scatter(rec(16, 0, 4, 8, 12), []int{2, 3}, nil, nil), sm90v81, Options{}), `red\.global\.add\.v2\.f32 \[%rd\d+\+8\]`)

	// ptxas takes the vector adds for sm_90, when it knows PTX ISA 8.1.
	tool, err := ptxas.Find()
	switch {
	case err != nil:
		t.Logf("no ptxas: the vector adds are NOT assembled (%v)", err)
	case tool.CUDA < 12010 || !slices.Contains(tool.Archs, 90):
		t.Logf("ptxas of CUDA %d.%d does not know PTX ISA 8.1 for sm_90: the vector adds are NOT assembled", tool.CUDA/1000, tool.CUDA%1000/10)
	default:
		dir := t.TempDir()
		for name, text := range map[string]string{"v2": v2, "v4": v4} {
			if err := tool.Assemble(dir, name, 90, text); err != nil {
				t.Errorf("ptxas: %v\n%s", err, numbered(text))
			}
		}
	}
}
