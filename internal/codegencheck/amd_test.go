package codegencheck

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/backend/hip"
	"github.com/quadrants-go/qd/internal/codegen/csrc"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// Every kernel the tests run (checkedKernels, the set ptxas_test.go
// assembles) is written as C source (package codegen/csrc) and
//
//   - compiled offline by clang for gfx90a, gfx942 and gfx1100, each code
//     object checked with debug/elf (machine, processor, every entry and
//     its kernel descriptor);
//   - compiled through the HIP backend's real path, hiprtc in a child
//     process via purego, for gfx90a (what Debian's ROCm 5.2 hiprtc
//     handles), and checked the same way;
//   - in its CUDA flavour, compiled by clang to PTX and assembled by ptxas:
//     the text NVRTC compiles under QD_CUDA_CODEGEN=csrc.
//
// The tools come from .ci/install-amd-tools.sh (and install-ptxas.sh);
// without them the tests skip with a notice, and with
// QD_REQUIRE_AMD_TOOLS=1 (set by .ci/run) they fail. All kernels go into
// one source per target, since a compiler's start-up dominates small
// compiles; a failing source is retried kernel by kernel to name the
// kernel.

// amdUnit is the kernels written into one source for arch, with their
// entry names, or the errors of those that failed.
type amdUnit struct {
	src     string
	entries []string
	errs    []string
}

func newAMDUnit(arch string, kernels []*ir.Kernel) amdUnit {
	var out amdUnit
	t, err := csrc.TargetFor(arch)
	if err != nil {
		return amdUnit{errs: []string{err.Error()}}
	}
	u, err := csrc.NewUnit(t)
	if err != nil {
		return amdUnit{errs: []string{err.Error()}}
	}
	for _, k := range kernels {
		plan, err := lower.Lower(k)
		var layout *kabi.Module
		if err == nil {
			layout, err = kabi.Layout(plan)
		}
		if err == nil {
			err = u.Add(plan, layout)
		}
		if err != nil {
			out.errs = append(out.errs, fmt.Sprintf("csrc %s for %s: %v", k.Name, arch, err))
			continue
		}
		for _, task := range layout.Tasks {
			out.entries = append(out.entries, task.Entry)
		}
	}
	out.src = u.Source()
	return out
}

// eachAlone runs compile on each kernel's own source, for the names of the
// kernels that fail when their combined source failed.
func eachAlone(arch string, kernels []*ir.Kernel, compile func(name string, u amdUnit) error) []string {
	var errs []string
	for _, k := range kernels {
		u := newAMDUnit(arch, []*ir.Kernel{k})
		if len(u.errs) > 0 {
			errs = append(errs, u.errs...)
		} else if err := compile(k.Name, u); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k.Name, err))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, arch+": the combined source fails but every kernel compiles alone (a clash between kernels?)")
	}
	return errs
}

func TestAMDSuiteKernelsClang(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang (offline AMDGPU compiles)", err)
	}
	kernels := checkedKernels(t)
	dir := t.TempDir()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([][]string, len(amdtools.Targets))
	entries := 0
	for i, arch := range amdtools.Targets {
		u := newAMDUnit(arch, kernels)
		entries = len(u.entries)
		wg.Add(1)
		go func() {
			defer wg.Done()
			compile := func(name string, u amdUnit) error {
				co, err := clang.CompileAMD(dir, name, arch, u.src, csrc.ClangOptions())
				if err == nil {
					err = amdtools.CheckCodeObject(co, arch, u.entries)
				}
				return err
			}
			errs[i] = u.errs
			if err := compile("suite", u); err != nil {
				errs[i] = append(errs[i], eachAlone(arch, kernels, compile)...)
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(errs...)
	for _, e := range all {
		t.Error(e)
	}
	t.Logf("clang %d (%s): %d kernels (%d entries) compiled for %v and their code objects checked in %v, %d failures",
		clang.Version, clang.Path, len(kernels), entries, amdtools.Targets, time.Since(start).Round(time.Millisecond), len(all))
}

func TestAMDSuiteKernelsHiprtc(t *testing.T) {
	info, err := hip.CompilerInfo()
	if err != nil {
		amdtools.Unavailable(t, "the HIP runtime's hiprtc (libamdhip64)", err)
	}
	t.Setenv("QD_HIP_CACHE", t.TempDir()) // compile for real: no hits from earlier runs
	const arch = "gfx90a"
	kernels := checkedKernels(t)
	start := time.Now()
	u := newAMDUnit(arch, kernels)
	for _, e := range u.errs {
		t.Error(e)
	}
	compile := func(name string, u amdUnit) error {
		co, err := hip.Compile(u.src, name, arch)
		if err == nil {
			err = amdtools.CheckCodeObject(co, arch, u.entries)
		}
		return err
	}
	if err := compile("suite", u); err != nil {
		t.Errorf("hiprtc on the suite's source: %v", err)
		for _, e := range eachAlone(arch, kernels, compile) {
			t.Error(e)
		}
	}
	t.Logf("%s: %d kernels (%d entries) compiled for %s through the HIP backend's hiprtc path and checked in %v",
		info, len(kernels), len(u.entries), arch, time.Since(start).Round(time.Millisecond))
}

func TestAMDSuiteKernelsCUDAFlavour(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang (offline CUDA compiles)", err)
	}
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	kernels := checkedKernels(t)
	dir := t.TempDir()
	sm := tool.Archs[len(tool.Archs)-1]
	arch := fmt.Sprintf("sm_%d", sm)
	compile := func(name string, u amdUnit) error {
		text, err := clang.CompileCUDA(dir, name, sm, u.src, csrc.ClangOptions())
		if err != nil {
			return err
		}
		for _, e := range u.entries {
			if !strings.Contains(text, ".entry "+e+"(") {
				return fmt.Errorf("no entry %s in clang's PTX", e)
			}
		}
		return tool.Assemble(dir, name, sm, text)
	}
	start := time.Now()
	u := newAMDUnit(arch, kernels)
	for _, e := range u.errs {
		t.Error(e)
	}
	if err := compile("suite", u); err != nil {
		for _, e := range eachAlone(arch, kernels, compile) {
			t.Error(e)
		}
	}
	t.Logf("the CUDA flavour of %d kernels compiled by clang for %s and assembled by ptxas in %v", len(kernels), arch, time.Since(start).Round(time.Millisecond))
}
