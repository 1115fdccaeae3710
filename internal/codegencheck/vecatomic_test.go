package codegencheck

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

const vecAtomicSrc = `package k

import "github.com/quadrants-go/qd"

type node struct {
	V qd.Vec2[float32]
	M float32
	N int32
}

//qd:kernel
func scatter2(grid []node, vs []qd.Vec2[float32], cell []int32) {
	for i := range vs {
		qd.AtomicAddVec(&grid[cell[i]].V, vs[i].Scale(0.5))
	}
}

//qd:kernel
func scatter4(acc []qd.Vec4[float32], vs []qd.Vec4[float32], cell []int32) {
	for i := range vs {
		qd.AtomicAddVec(&acc[cell[i]], vs[i])
	}
}

//qd:kernel
func total2(sum []qd.Vec2[float32], vs []qd.Vec2[float32]) {
	for i := range vs {
		qd.AtomicAddVec(&sum[0], vs[i])
	}
}
`

// TestVectorAtomicPTX: the front end shapes qd.AtomicAddVec as the PTX
// generator's vector reduction wants it (codegen/ptx vecred.go), so on
// sm_90 with PTX ISA 8.1 an aligned Vec2[float32] add is one
// red.global.add.v2.f32 and a Vec4 one .v4, behind the alignment test
// whose other branch keeps the scalar adds; a reduction (the element
// never varies with the index) is one block reduction per component
// instead. When ptxas is installed the modules assemble for sm_90 (as
// vector reductions only when its toolkit takes PTX ISA 8.1).
func TestVectorAtomicPTX(t *testing.T) {
	ks, err := frontend.Parse("vecatomic.go", []byte(vecAtomicSrc))
	if err != nil {
		t.Fatal(err)
	}
	tg := ptx.Target{SM: 90, Version: "7.8", MaxVersion: "8.1"}
	want := map[string][]string{
		"scatter2": {`red\.global\.add\.v2\.f32 \[%rd\d+\], \{%f\d+, %f\d+\};`, `red\.global\.add\.f32 \[%rd\d+\+4\], %f\d+;`, `!\.v4`},
		"scatter4": {`red\.global\.add\.v4\.f32 \[%rd\d+\], \{%f\d+, %f\d+, %f\d+, %f\d+\};`, `!\.v2`},
		"total2":   {`!red\.global\.add\.v`},
	}
	tool, toolErr := ptxas.Find()
	for _, k := range ks {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatal(err)
		}
		text, _, err := ptx.Generate(plan, tg, ptx.Options{})
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		pats, ok := want[k.Name]
		if !ok {
			t.Fatalf("unexpected kernel %s", k.Name)
		}
		for _, p := range pats {
			neg := strings.HasPrefix(p, "!")
			if regexp.MustCompile(strings.TrimPrefix(p, "!")).MatchString(text) == neg {
				t.Errorf("%s: PTX matches %q = %v, want %v:\n%s", k.Name, strings.TrimPrefix(p, "!"), neg, !neg, text)
			}
		}
		if m := regexp.MustCompile(`red\.global\.add\.v2\.f32[^\n]*`).FindString(text); m != "" {
			t.Logf("%s: %s", k.Name, m)
		}
		if toolErr != nil {
			continue
		}
		// The installed toolkit may predate PTX ISA 8.1: assemble what the
		// generator makes for a driver of that toolkit's version, which is
		// the vector form exactly when the toolkit takes it.
		ttg, err := ptx.TargetFor(90, tool.CUDA)
		if err != nil {
			t.Fatal(err)
		}
		if text, _, err = ptx.Generate(plan, ttg, ptx.Options{}); err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if info, err := tool.Resources(t.TempDir(), k.Name, 90, text); err != nil {
			t.Errorf("%s: ptxas: %v\n%s", k.Name, err, info)
		}
	}
	if toolErr != nil {
		t.Logf("ptxas not run: %v", toolErr)
	}
}
