package codegencheck

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/difftest"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// valueKernels are the differential tests' kernels whose values are
// vectors, matrices, quaternions, structs and decompositions.
var valueKernels = map[string]bool{"vecOps": true, "matOps": true, "decomps": true, "quats": true, "structs": true, "generics": true, "vecAtomics": true}

var stackRE = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)

// TestValuesUseNoLocalMemory: the front end keeps every value in scalar
// registers, so the PTX of kernels full of Vec3, Mat3 and SVD3 declares no
// local memory and ptxas -v reports no stack frame and no spills for any
// of their entries and functions (docs/semantics.md#testing; SPEC §3: no
// local memory for a Mat3).
func TestValuesUseNoLocalMemory(t *testing.T) {
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	src, err := difftest.Source()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := frontend.Parse(difftest.FileName, src)
	if err != nil {
		t.Fatal(err)
	}
	sm := tool.Archs[len(tool.Archs)-1]
	tg, err := ptx.TargetFor(sm, tool.CUDA)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	checked := 0
	for _, k := range ks {
		if !valueKernels[k.Name] {
			continue
		}
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatal(err)
		}
		text, _, err := ptx.Generate(plan, tg, ptx.Options{})
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if strings.Contains(text, ".local") {
			t.Errorf("%s: the PTX declares or accesses local memory", k.Name)
		}
		info, err := tool.Resources(dir, k.Name, sm, text)
		if err != nil {
			t.Fatal(err)
		}
		frames := stackRE.FindAllStringSubmatch(info, -1)
		if len(frames) == 0 {
			t.Fatalf("%s: ptxas -v reported no stack frames:\n%s", k.Name, info)
		}
		for _, f := range frames {
			if f[1] != "0" || f[2] != "0" || f[3] != "0" {
				t.Errorf("%s: ptxas -v: %s", k.Name, f[0])
			}
		}
		checked++
		t.Logf("%s: %s", k.Name, strings.Join(regexp.MustCompile(`Used \d+ registers`).FindAllString(info, -1), ", "))
	}
	if checked != len(valueKernels) {
		t.Fatalf("checked %d kernels, want %d", checked, len(valueKernels))
	}
}
