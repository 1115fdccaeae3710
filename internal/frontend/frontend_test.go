package frontend

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/valid")

// TestValid parses every file of testdata/valid, checks each kernel with
// ir.Verify and lower.Lower, and compares the printed IR with NAME.golden.
func TestValid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata/valid files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".go")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ks, err := Parse(filepath.Base(f), src)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for _, k := range ks {
				checkKernel(t, k)
				sb.WriteString(ir.Print(k))
			}
			golden := strings.TrimSuffix(f, ".go") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := sb.String(); got != string(want) {
				t.Errorf("IR differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// checkKernel asserts what every produced kernel must satisfy.
func checkKernel(t *testing.T, k *ir.Kernel) {
	t.Helper()
	if err := ir.Verify(k); err != nil {
		t.Errorf("kernel %s does not verify: %v\n%s", k.Name, err, ir.Print(k))
	}
	if _, err := lower.Lower(k); err != nil {
		t.Errorf("kernel %s does not lower: %v", k.Name, err)
	}
	if !k.Pos.IsKnown() {
		t.Errorf("kernel %s has no position", k.Name)
	}
	for _, p := range k.Params {
		if !p.Pos.IsKnown() {
			t.Errorf("kernel %s: parameter %s has no position", k.Name, p.Name)
		}
	}
	ir.Inspect(k.Body, func(n ir.Node) bool {
		if s, ok := n.(ir.Stmt); ok && !s.Position().IsKnown() {
			t.Errorf("kernel %s: %T has no position", k.Name, s)
		}
		return true
	})
}
