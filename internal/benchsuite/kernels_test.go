package benchsuite

import (
	"slices"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// TestKernelsPTX lowers every kernel of the suite, generates its PTX and
// assembles it with ptxas, so the GPU run cannot fail on a kernel. Without
// ptxas (install it with .ci/install-ptxas.sh) the PTX is still generated
// and the test skips saying so.
func TestKernelsPTX(t *testing.T) {
	kernels := []*ir.Kernel{saxpyIR(), fillIR(ir.F32), fillIR(ir.F64), fillIR(ir.I32), spinIR(), reduceIR(ir.F32), reduceIR(ir.F64), reduceIR(ir.I32), stencilIR()}
	for _, g := range []int{2, 4, 8} {
		kernels = append(kernels, groupsIR(g, false), groupsIR(g, true))
	}
	tool, toolErr := ptxas.Find()
	dir := t.TempDir()
	for _, k := range kernels {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, sm := range []int{70, 80, 90} {
			target, err := ptx.TargetFor(sm, max(tool.CUDA, 12080))
			if err != nil {
				t.Fatal(err)
			}
			text, _, err := ptx.Generate(plan, target, ptx.Options{})
			if err != nil {
				t.Fatalf("%s: %v", k.Name, err)
			}
			if toolErr != nil || !slices.Contains(tool.Archs, sm) {
				continue
			}
			target, _ = ptx.TargetFor(sm, tool.CUDA)
			if err := tool.Assemble(dir, k.Name, sm, ptxas.Retarget(text, target.Version, sm)); err != nil {
				t.Error(err)
			}
		}
	}
	if toolErr != nil {
		t.Skip(toolErr)
	}
}
