package csrc

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// corpusUnit writes every corpus kernel into one unit for arch and returns
// its source and entry names.
func corpusUnit(t *testing.T, arch string) (string, []string) {
	t.Helper()
	u, err := NewUnit(mustTarget(t, arch))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range corpus() {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatalf("lower %s: %v", k.Name, err)
		}
		layout, err := kabi.Layout(plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Add(plan, layout); err != nil {
			t.Fatalf("csrc %s: %v", k.Name, err)
		}
		for _, task := range layout.Tasks {
			names = append(names, task.Entry)
		}
	}
	return u.Source(), names
}

// The corpus compiles with clang for every AMD target qd checks, and each
// code object is an AMDGPU ELF for its processor holding every entry and
// its kernel descriptor.
func TestClangAMD(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	for _, arch := range amdtools.Targets {
		src, names := corpusUnit(t, arch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			co, err := clang.CompileAMD(dir, "corpus", arch, src, ClangOptions())
			if err == nil {
				err = amdtools.CheckCodeObject(co, arch, names)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// The check can fail: a code object checked against another target.
	src, names := corpusUnit(t, "gfx90a")
	co, err := clang.CompileAMD(dir, "saxpy", "gfx90a", src, ClangOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := amdtools.CheckCodeObject(co, "gfx942", names); err == nil {
		t.Error("a gfx90a code object passed as gfx942")
	}
	if err := amdtools.CheckCodeObject(co, "gfx90a", append(names, "missing_t0")); err == nil || !strings.Contains(err.Error(), "missing_t0") {
		t.Errorf("a missing entry went unnoticed: %v", err)
	}
}

// The wrong wave size for a target stops the compile (the prelude's
// static_assert against the compiler's __AMDGCN_WAVEFRONT_SIZE).
func TestClangChecksWaveSize(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	tg := mustTarget(t, "gfx1100")
	tg.WaveSize = 64
	plan, err := lower.Lower(saxpy())
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := Generate(plan, tg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clang.CompileAMD(t.TempDir(), "wave", "gfx1100", src, ClangOptions()); err == nil || !strings.Contains(err.Error(), "wave size") {
		t.Errorf("wave size 64 on gfx1100: %v", err)
	}
}

// The CUDA flavour of the corpus compiles with clang to PTX that ptxas
// assembles: the same text NVRTC compiles on a GPU machine, checked here
// without one.
func TestClangCUDA(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, sm := range tool.Archs {
		src, names := corpusUnit(t, fmt.Sprintf("sm_%d", sm))
		text, err := clang.CompileCUDA(dir, "corpus", sm, src, ClangOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !strings.Contains(text, ".entry "+n+"(") {
				t.Errorf("sm_%d: no entry %s in the PTX", sm, n)
			}
		}
		if strings.Contains(text, ".approx") {
			t.Errorf("sm_%d: the PTX uses an .approx instruction", sm)
		}
		if !strings.Contains(text, ".maxntid 100, 1, 1") {
			t.Errorf("sm_%d: the block size of 100 is not a launch bound (.maxntid) in the PTX", sm)
		}
		if err := tool.Assemble(dir, "corpus", sm, text); err != nil {
			t.Error(err)
		}
	}
}

// Contraction stays off: a*b+c in the source is a multiply and an add in
// the PTX, never an fma (the CPU and the PTX path round twice).
func TestClangCUDANoContraction(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	for _, ft := range []ir.Type{ir.F32, ir.F64} {
		b := ir.NewBuilder("muladd")
		x := b.Array("x", ft, 1)
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			xi := ir.Ld(x, ir.Ref(i))
			b.Store(x, ir.Op(ir.Add, ir.Op(ir.Mul, xi, xi), xi), ir.Ref(i))
		})
		plan, err := lower.Lower(b.Kernel())
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := Generate(plan, mustTarget(t, "sm_80"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		text, err := clang.CompileCUDA(t.TempDir(), "muladd", 80, src, ClangOptions())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "fma.") || !strings.Contains(text, "mul.rn."+ft.String()) {
			t.Errorf("%v: a*b+c is not a mul.rn and an add.rn:\n%s", ft, text)
		}
	}
}

// A switch of more cases than clang nests braces (256) compiles, for AMD
// and as CUDA: the if/else chain it becomes is written flat.
func TestClangLongIfChain(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	dir := t.TempDir()
	src, _, _ := chainSource(t, 300, "gfx90a")
	if _, err := clang.CompileAMD(dir, "chain", "gfx90a", src, ClangOptions()); err != nil {
		t.Error(err)
	}
	src, _, _ = chainSource(t, 300, "sm_80")
	if _, err := clang.CompileCUDA(dir, "chain", 80, src, ClangOptions()); err != nil {
		t.Error(err)
	}
}
