package csrc

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// checkedKernel loads, stores, indexes two dimensions, keeps a temporary
// (the record follows it) and reduces with an atomic: every kind of access
// the checks guard.
func checkedKernel() *ir.Kernel {
	b := ir.NewBuilder("checked")
	x, m := b.Array("x", ir.F32, 1), b.Array("m", ir.I64, 2)
	s := b.Array("s", ir.F64, 1)
	keep := b.Decl("keep", ir.I64c(3))
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(x, ir.Op(ir.Add, ir.Ld(x, ir.Ref(i)), ir.F32c(1)), ir.Ref(i))
		b.Store(m, ir.Ref(keep), ir.Ref(i), ir.I64c(2))
		b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.F64c(1), ir.I64c(0)))
	})
	return b.Kernel()
}

// With Debug every access checks its indices and records the first
// violation after the temporaries; each access is one site, named as the
// PTX generator names them. The source compiles for AMD and, in its CUDA
// flavour, to PTX that ptxas assembles.
func TestBoundsChecks(t *testing.T) {
	plan, err := lower.Lower(checkedKernel())
	if err != nil {
		t.Fatal(err)
	}
	amd, cuda := mustTarget(t, "gfx90a"), mustTarget(t, "sm_80")
	src, layout, err := Generate(plan, amd, Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if !layout.Bounds || len(layout.Sites) != 4 {
		t.Fatalf("Bounds %v, %d sites: %+v", layout.Bounds, len(layout.Sites), layout.Sites)
	}
	for i, want := range []string{"x", "x", "m", "s"} {
		if layout.Sites[i].Array != want {
			t.Errorf("site %d is %s, want %s", i, layout.Sites[i].Array, want)
		}
	}
	rec := "temps + 8" // one temporary before the record
	for _, want := range []string{"qd_bounds(" + rec + ", 1,", "qd_bounds(" + rec + ", 4,", "QD_DEV void qd_bounds("} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in the source:\n%s", want, Numbered(src))
		}
	}
	plain, _, err := Generate(plan, amd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "qd_bounds") {
		t.Error("the source without Debug checks indices")
	}

	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	if _, err := clang.CompileAMD(t.TempDir(), "checked", "gfx90a", src, ClangOptions()); err != nil {
		t.Fatalf("gfx90a: %v", err)
	}
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	csrc, _, err := Generate(plan, cuda, Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text, err := clang.CompileCUDA(dir, "checked", 80, csrc, ClangOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.Assemble(dir, "checked", 80, text); err != nil {
		t.Fatal(err)
	}
}
