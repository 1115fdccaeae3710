package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Every block kernel of the suite compiles, with and without index
// checks, and ptxas assembles it.
func TestBlockKernelsAssemble(t *testing.T) {
	for _, k := range suitekernels.BlockKernels() {
		t.Run(k.Name+"_"+k.Params[0].Elem.String(), func(t *testing.T) {
			c := compileKernel(t, k)
			compileKernelWith(t, k, Options{Debug: true})
			if k.Name == "blockCollectives" {
				asm(t, c.PTX, `shfl\.sync\.down\.b32`, `shfl\.sync\.up\.b32`, `\.shared \.align 8 \.b8 qdcoll\[264\]`, `!\.maxntid`)
			}
		})
	}
}

// The shape of a block task: shared memory declared and zeroed, a barrier
// after each thread loop, the block index striding by the grid, shared
// atomics in the shared space.
func TestBlockLoopShape(t *testing.T) {
	c := compileKernel(t, suitekernels.BlockHistogram())
	asm(t, c.PTX,
		`\.shared \.align 4 \.b8 qdsh1\[64\]`,
		`st\.shared\.u32 \[%r\d+\], 0`,
		`bar\.sync 0`,
		`mov\.u32 %r\d+, %nctaid\.x`,
		`red\.shared\.add\.s32`,
		`red\.global\.add\.s32`,
		`\.maxntid 128, 1, 1`,
		`!atom\.global\.add\.s32.*qdsh`)
	tr := compileKernel(t, suitekernels.BlockTranspose())
	asm(t, tr.PTX, `qdsh1\[288\]`, `st\.shared\.f32`, `ld\.shared\.f32`)
}
