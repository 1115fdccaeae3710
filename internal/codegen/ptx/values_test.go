package ptx

import (
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// The suite's kernels of records, 8- and 16-bit integers, bit casts and
// 4-D arrays compile in every mode (and assemble, where ptxas is), with
// a leaf at its offset from the element, small values loaded, stored and
// converted at their width, and the fourth extent passed.
func TestValues(t *testing.T) {
	want := map[string][]string{
		"recupdate": {`mul\.wide\.s32 %rd\d+, %r\d+, 24|mad\.lo\.s64 %rd\d+, %rd\d+, 24, %rd\d+`,
			`ld\.global\.f32 %f\d+, \[%rd\d+\+4\]`, `st\.global\.f64 \[%rd\d+\+8\]`, `st\.global\.s32 \[%rd\d+\+16\]`, `st\.global\.u8 \[%rd\d+\+20\], %r\d+`},
		"recstats":  {`red\.global\.add\.u64 \[%rd\d+\], %rd\d+`, `red\.global\.add\.f64 \[%rd\d+\+8\]`, `red\.global\.max\.s32 \[%rd\d+\+16\]`, `shfl\.sync\.down`},
		"recgrid":   {`ld\.global\.f32 %f\d+, \[%rd\d+\+4\]`, `ld\.global\.f32 %f\d+, \[%rd\d+\+12\]`, `st\.global\.f32 \[%rd\d+\+8\]`},
		"smallints": {`ld\.param\.s32 (%r\d+), \[s5\];\n\tcvt\.s32\.s8 %r\d+, %r\d+;`, `and\.b32 %r\d+, %r\d+, 65535;`, `ld\.global\.s8 %r\d+`, `st\.global\.s16 \[`, `cvt\.rzi\.s32\.f32 %r\d+, %f\d+;\n\tcvt\.s32\.s16`, `ld\.global\.u16`, `st\.global\.s8 \[%rd\d+\+0\]|st\.global\.s8 \[%rd\d+\], %r\d+`},
		"bitcast":   {`mov\.b32 %r\d+, %f\d+`, `mov\.b32 %f\d+, %r\d+`, `mov\.b64 %rd\d+, %fd\d+`, `mov\.b64 %fd\d+, %rd\d+`},
		"fill4":     {`ld\.param\.s64 %rd\d+, \[a0_d3\]`},
	}
	for _, k := range suitekernels.All() {
		patterns, ok := want[k.Name]
		if !ok && k.Name != "scatter2" && k.Name != "scatter4" {
			continue
		}
		for _, o := range []Options{{}, {Debug: true}, {FastMath: true}} {
			m := compileKernelWith(t, k, o)
			if !o.Debug && !o.FastMath {
				asm(t, m.PTX, patterns...)
			}
			if t.Failed() {
				t.Fatalf("%s %+v:\n%s", k.Name, o, numbered(m.PTX))
			}
		}
	}
	// A temporary of a small type keeps its width in its 8-byte slot.
	m := compileKernel(t, suitekernels.SmallInts())
	asm(t, m.PTX, `st\.global\.s8 \[%rd\d+\+0\]`, `ld\.global\.s8 %r\d+, \[%rd\d+\+0\]`)
}
