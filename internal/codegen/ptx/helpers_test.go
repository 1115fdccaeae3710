package ptx

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// testTarget heads the PTX of the tests; the ptxas check rewrites it per
// architecture.
var testTarget = Target{SM: 70, Version: "6.0"}

// stubMath stands in for package devmath's subroutines (Options.mathFunc):
// a valid .func of the documented shape (it returns its first argument), so
// modules that call transcendentals assemble, and stay short to read.
func stubMath(fn ir.Intrinsic, t ir.Type) (string, string, error) {
	ty := opType(t)
	name := fmt.Sprintf("__qd_%s_%s", fn, ty)
	params := fmt.Sprintf(".reg .%s %%a", ty)
	if fn.Arity() == 2 {
		params += fmt.Sprintf(", .reg .%s %%b", ty)
	}
	def := fmt.Sprintf(".func (.reg .%s %%ret) %s(%s)\n{\n\tmov.%s %%ret, %%a;\n\tret;\n}\n", ty, name, params, ty)
	return name, def, nil
}

// stubbed returns o with stubMath for the transcendentals unless o names
// other subroutines: the tests compile with the stubs, except those of
// devmath's real ones (TestDevmath), which keep the rest short.
func stubbed(o Options) Options {
	if o.mathFunc == nil {
		o.mathFunc = stubMath
	}
	return o
}

// compileKernel lowers and compiles k, failing the test on any error, and
// assembles the PTX with ptxas for every architecture it supports when ptxas
// is on PATH (TestPtxasAvailable reports when it is not). Every PTX text the
// tests produce goes through here.
func compileKernel(t *testing.T, k *ir.Kernel) *compiled {
	t.Helper()
	return compileKernelWith(t, k, Options{})
}

// compileKernelWith is compileKernel with options (stubbed).
func compileKernelWith(t *testing.T, k *ir.Kernel, opts Options) *compiled {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	m, err := compilePlanWith(plan, testTarget, opts)
	if err != nil {
		t.Fatalf("compile %s: %v", k.Name, err)
	}
	if len(m.Tasks) != len(plan.Tasks) {
		t.Fatalf("%d task infos for %d tasks", len(m.Tasks), len(plan.Tasks))
	}
	if strings.Contains(m.PTX, ".approx") {
		t.Errorf("%s: PTX uses an .approx instruction", k.Name)
	}
	assemble(t, k.Name, m.PTX)
	return m
}

func mustLower(t *testing.T, k *ir.Kernel) *lower.Plan {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	return plan
}

// compileErr lowers and compiles k with opts (stubbed) and returns the
// compile error.
func compileErr(t *testing.T, k *ir.Kernel, opts Options) error {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	_, err = compilePlanWith(plan, testTarget, opts)
	return err
}

// compiled is a module's PTX with its layout.
type compiled struct {
	PTX string
	*kabi.Module
}

// compilePlan lays out plan and compiles it, as a driver does.
func compilePlan(plan *lower.Plan, tg Target) (*compiled, error) {
	return compilePlanWith(plan, tg, Options{})
}

// compilePlanWith is compilePlan with options (stubbed).
func compilePlanWith(plan *lower.Plan, tg Target, opts Options) (*compiled, error) {
	text, layout, err := Generate(plan, tg, stubbed(opts))
	if err != nil {
		return nil, err
	}
	return &compiled{PTX: text, Module: layout}, nil
}

// assemble runs ptxas on text for each architecture it supports, with the
// header rewritten to what TargetFor picks for that architecture and the
// installed ptxas's CUDA release. Without ptxas it does nothing;
// TestPtxasAvailable skips with the reason.
func assemble(t *testing.T, name, text string) {
	t.Helper()
	tool, err := ptxas.Find()
	if err != nil {
		return
	}
	dir := t.TempDir()
	for _, sm := range tool.Archs {
		if err := assembleFor(tool, sm, dir, name, text); err != nil {
			t.Error(err)
		}
	}
}

func assembleFor(tool ptxas.Tool, sm int, dir, name, text string) error {
	tg, err := TargetFor(sm, tool.CUDA)
	if err != nil {
		return fmt.Errorf("TargetFor(%d, %d): %v", sm, tool.CUDA, err)
	}
	return tool.Assemble(dir, name, sm, ptxas.Retarget(text, tg.Version, sm))
}

var numbered = ptxas.Numbered

// TestPtxasAvailable says whether the PTX of this package's tests was
// assembled, and by which ptxas for which architectures.
func TestPtxasAvailable(t *testing.T) {
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	// The check must be able to fail.
	bad := "//\n.version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32;\n\tret;\n}\n"
	if err := assembleFor(tool, tool.Archs[0], t.TempDir(), "bad", bad); err == nil || !strings.Contains(err.Error(), "frob") {
		t.Errorf("ptxas accepted an unknown instruction: %v", err)
	}
	t.Logf("ptxas %s (CUDA %d.%d) assembles every test PTX for sm_%v", tool.Path, tool.CUDA/1000, tool.CUDA%1000/10, tool.Archs)
}

// asm checks that the PTX matches each of the regexps; a leading '!' means
// it must not match.
func asm(t *testing.T, ptx string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		re := regexp.MustCompile(strings.TrimPrefix(p, "!"))
		if re.MatchString(ptx) == neg {
			if neg {
				t.Errorf("PTX matches %q, it should not:\n%s", p[1:], numbered(ptx))
			} else {
				t.Errorf("PTX does not match %q:\n%s", p, numbered(ptx))
			}
		}
	}
}
