package benchsuite

import (
	"slices"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// TestKernelsPTX lowers every kernel of the suite, generates its PTX and
// assembles it with ptxas, so the GPU run cannot fail on a kernel. Without
// ptxas (install it with .ci/install-ptxas.sh) the PTX is still generated
// and the test skips saying so.
func TestKernelsPTX(t *testing.T) {
	kernels, err := frontend.Parse("bench.go", []byte(benchSrc))
	if err != nil {
		t.Fatal(err)
	}
	if len(kernels) != 4+2*3+2*3 {
		t.Fatalf("%d kernels in benchSrc", len(kernels))
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
