package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
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

// A run of shared stores of global loads is written loads first, and an
// && of comparisons is a predicate operation, not a branch.
func TestBlockStagedLoads(t *testing.T) {
	b := ir.NewBuilder("staged")
	in := b.Array("in", ir.F32, 1)
	n := b.Scalar("n", ir.I64)
	b.Blocks(ir.I64c(4), ir.I64c(32), func(blk *ir.Var) {
		sh := b.Shared("sh", ir.F32, 64)
		b.Threads(func(th *ir.Var) {
			b.Store(sh, ir.Ld(in, ir.Ref(th)), ir.Ref(th))
			b.Store(sh, ir.Ld(in, ir.Op(ir.Add, ir.Ref(th), ir.I64c(32))), ir.Op(ir.Add, ir.Ref(th), ir.I64c(32)))
			b.If(ir.Op(ir.LAnd, ir.Op(ir.Lt, ir.Ref(th), ir.P(n)), ir.Op(ir.Gt, ir.Ref(blk), ir.I64c(0))), func() {
				b.Store(in, ir.Ld(sh, ir.Op(ir.Sub, ir.I64c(63), ir.Ref(th))), ir.Ref(th))
			}, nil)
		})
	})
	c := compileKernel(t, b.Kernel())
	asm(t, c.PTX, `(?s)ld\.global\.f32[^\n]*\n(.*\n)*?\s*ld\.global\.f32(.*\n)*?\s*st\.shared\.f32(.*\n)*?\s*st\.shared\.f32`, `and\.pred`)
	// With index checks the stores keep their order.
	d := compileKernelWith(t, b.Kernel(), Options{Debug: true})
	asm(t, d.PTX, `(?s)ld\.global\.f32.*st\.shared\.f32.*ld\.global\.f32.*st\.shared\.f32`)
}
