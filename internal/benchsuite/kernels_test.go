package benchsuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestKernelsPTX lowers every kernel of the suite and generates its PTX,
// and assembles it with ptxas when ptxas is on PATH (bash
// .ci/install-ptxas.sh), so the GPU run cannot fail on a kernel.
func TestKernelsPTX(t *testing.T) {
	kernels := []*ir.Kernel{saxpyIR(), fillIR(), spinIR(), reduceIR(), stencilIR()}
	for _, g := range []int{2, 4, 8} {
		kernels = append(kernels, groupsIR(g, false), groupsIR(g, true))
	}
	target, err := ptx.TargetFor(90, 12080)
	if err != nil {
		t.Fatal(err)
	}
	ptxas, _ := exec.LookPath("ptxas")
	for _, k := range kernels {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		m, err := ptx.Compile(plan, target)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if ptxas == "" {
			continue
		}
		dir := t.TempDir()
		src := filepath.Join(dir, k.Name+".ptx")
		if err := os.WriteFile(src, []byte(m.PTX), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(ptxas, "-arch=sm_90", "-o", filepath.Join(dir, "out.cubin"), src).CombinedOutput(); err != nil {
			t.Errorf("%s: ptxas: %v\n%s", k.Name, err, out)
		}
	}
	if ptxas == "" {
		t.Log("ptxas not on PATH: PTX generated, not assembled")
	}
}
