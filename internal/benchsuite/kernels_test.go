package benchsuite

import (
	"slices"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// TestKernelsPTX lowers every kernel of the suite (benchSrc and the
// embedded sources: the block rows', the n-body rows', the ports'),
// generates its PTX and assembles it with ptxas, so the GPU run cannot
// fail on a kernel: benchSrc's for sm_70, sm_80 and sm_90, the embedded
// sources' for sm_90 (the GPU they are timed on), with exact and with
// fast math as the rows run them (internal/codegencheck assembles them
// for every architecture, as one module). Without ptxas (install
// it with .ci/install-ptxas.sh) the PTX is still generated and the test
// skips saying so.
func TestKernelsPTX(t *testing.T) {
	kernels, err := frontend.Parse("bench.go", []byte(benchSrc))
	if err != nil {
		t.Fatal(err)
	}
	if len(kernels) != 4+2*3+2*3 {
		t.Fatalf("%d kernels in benchSrc", len(kernels))
	}
	plain := len(kernels)
	for _, src := range []struct{ name, text string }{
		{"blocks.go", blocksSrc}, {"nbody.go", nbodySrc}, {"nbody_vec.go", nbodyVecSrc}, {"ports.go", portsSrc},
	} {
		ks, err := frontend.Parse(src.name, []byte(src.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) == 0 {
			t.Fatalf("no kernels in %s", src.name)
		}
		kernels = append(kernels, ks...)
	}
	tool, toolErr := ptxas.Find()
	dir := t.TempDir()
	for i, k := range kernels {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if i < plain {
			for _, sm := range []int{70, 80, 90} {
				assemble(t, tool, toolErr, dir, k, plan, sm, ptx.Options{})
			}
			continue
		}
		for _, opts := range []ptx.Options{{}, {FastMath: true}} {
			assemble(t, tool, toolErr, dir, k, plan, 90, opts)
		}
	}
	if toolErr != nil {
		t.Skip(toolErr)
	}
}

// assemble generates k's PTX for sm_<sm> with opts and, where ptxas knows
// the architecture, assembles it.
func assemble(t *testing.T, tool ptxas.Tool, toolErr error, dir string, k *ir.Kernel, plan *lower.Plan, sm int, opts ptx.Options) {
	t.Helper()
	target, err := ptx.TargetFor(sm, max(tool.CUDA, 12080))
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := ptx.Generate(plan, target, opts)
	if err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
	if toolErr != nil || !slices.Contains(tool.Archs, sm) {
		return
	}
	target, _ = ptx.TargetFor(sm, tool.CUDA)
	if err := tool.Assemble(dir, k.Name, sm, ptxas.Retarget(text, target.Version, sm)); err != nil {
		t.Errorf("%+v: %v", opts, err)
	}
}
