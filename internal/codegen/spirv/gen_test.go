package spirv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// TestDisassemble writes saxpy's module and, with QD_SPIRV_DIS=1, prints
// its disassembly (for reading the generator's output).
func TestDisassemble(t *testing.T) {
	if os.Getenv("QD_SPIRV_DIS") != "1" {
		t.Skip("QD_SPIRV_DIS=1 prints a disassembly")
	}
	plan, err := lower.Lower(suitekernels.Saxpy())
	if err != nil {
		t.Fatal(err)
	}
	k, err := Generate(plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "k.spv")
	os.WriteFile(p, Bytes(k.Entries[0].Words), 0o644)
	out, err := exec.Command("spirv-dis", p).CombinedOutput()
	t.Logf("%s %v", out, err)
}
