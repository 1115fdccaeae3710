package ptx

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// testTarget heads the PTX of the tests; the ptxas check rewrites it per
// architecture.
var testTarget = Target{SM: 70, Version: "6.0"}

// stubMath stands in for package ptxmath until it exists: a valid .func of
// the documented shape (it returns its first argument), so modules that call
// transcendentals still assemble.
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

func TestMain(m *testing.M) {
	mathFunc = stubMath
	os.Exit(m.Run())
}

// compileKernel lowers and compiles k, failing the test on any error, and
// assembles the PTX with ptxas for every architecture it supports when ptxas
// is on PATH (TestPtxasAvailable reports when it is not). Every PTX text the
// tests produce goes through here.
func compileKernel(t *testing.T, k *ir.Kernel) *Module {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	m, err := Compile(plan, testTarget)
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

// compileErr lowers and compiles k and returns the compile error.
func compileErr(t *testing.T, k *ir.Kernel) error {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	_, err = Compile(plan, testTarget)
	return err
}

// ptxasTool describes the ptxas on PATH, found once.
var ptxasTool = sync.OnceValue(func() (tool struct {
	path   string
	cuda   int    // CUDA release as cuDriverGetVersion encodes it
	archs  []int  // of 70, 80, 90: those it assembles for
	reason string // why there is none
}) {
	p, err := exec.LookPath("ptxas")
	if err != nil {
		tool.reason = "ptxas not on PATH: run .ci/install-ptxas.sh and put its bin folder on PATH"
		return
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	m := regexp.MustCompile(`release (\d+)\.(\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		tool.reason = fmt.Sprintf("ptxas --version: %v: %s", err, out)
		return
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	tool.path, tool.cuda = p, 1000*major+10*minor
	help, _ := exec.Command(p, "--help").CombinedOutput()
	for _, sm := range []int{70, 80, 90} {
		// CUDA 13 dropped sm_70 as an output architecture.
		if bytes.Contains(help, []byte(fmt.Sprintf("'sm_%d'", sm))) {
			tool.archs = append(tool.archs, sm)
		}
	}
	if len(tool.archs) == 0 {
		tool.reason = fmt.Sprintf("ptxas at %s supports none of sm_70, sm_80, sm_90", p)
	}
	return
})

var headerRE = regexp.MustCompile(`(?m)^\.version \S+\n\.target \S+\n`)

// assemble runs ptxas on text for each supported architecture, with the
// header rewritten to what TargetFor picks for that architecture and the
// installed ptxas's CUDA release. Warnings count as errors.
func assemble(t *testing.T, name, text string) {
	t.Helper()
	tool := ptxasTool()
	if tool.path == "" {
		return
	}
	dir := t.TempDir()
	for _, sm := range tool.archs {
		if err := ptxasRun(tool.path, tool.cuda, sm, dir, name, text); err != nil {
			t.Error(err)
		}
	}
}

// ptxasRun assembles text for sm_<sm> in dir and returns ptxas's complaint,
// with the numbered PTX.
func ptxasRun(ptxas string, cuda, sm int, dir, name, text string) error {
	tg, err := TargetFor(sm, cuda)
	if err != nil {
		return fmt.Errorf("TargetFor(%d, %d): %v", sm, cuda, err)
	}
	src := headerRE.ReplaceAllLiteralString(text, fmt.Sprintf(".version %s\n.target sm_%d\n", tg.Version, sm))
	file := filepath.Join(dir, fmt.Sprintf("%s_sm%d.ptx", sanitize(name), sm))
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		return err
	}
	out, err := exec.Command(ptxas, "--warning-as-error", fmt.Sprintf("-arch=sm_%d", sm), "-o", os.DevNull, file).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("ptxas -arch=sm_%d on %s: %v\n%s\n--- PTX ---\n%s", sm, name, err, out, numbered(src))
	}
	return nil
}

func numbered(s string) string {
	var sb strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&sb, "%4d %s\n", i+1, l)
	}
	return sb.String()
}

// TestPtxasAvailable says whether the PTX of this package's tests was
// assembled, and by which ptxas for which architectures.
func TestPtxasAvailable(t *testing.T) {
	tool := ptxasTool()
	if tool.path == "" {
		t.Skip(tool.reason)
	}
	// The check must be able to fail.
	bad := "//\n.version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32;\n\tret;\n}\n"
	if err := ptxasRun(tool.path, tool.cuda, tool.archs[0], t.TempDir(), "bad", bad); err == nil || !strings.Contains(err.Error(), "frob") {
		t.Errorf("ptxas accepted an unknown instruction: %v", err)
	}
	t.Logf("ptxas %s (CUDA %d.%d) assembles every test PTX for sm_%v", tool.path, tool.cuda/1000, tool.cuda%1000/10, tool.archs)
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
