package benchsuite

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"testing"
)

// TestHeatIsTheDemos: the heat step measured here is the demo's
// (cmd/qd/demo_kernels.go), the kernel of the CPU bar: a change to one
// must go to the other.
func TestHeatIsTheDemos(t *testing.T) {
	body := func(file, fn string) string {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
				var b bytes.Buffer
				printer.Fprint(&b, fset, fd.Type)
				printer.Fprint(&b, fset, fd.Body)
				return b.String()
			}
		}
		t.Fatalf("%s: no function %s", file, fn)
		return ""
	}
	if got, want := body("cpu_kernels.go", "heatAt"), body("../../cmd/qd/demo_kernels.go", "heatCell"); got != want {
		t.Errorf("heatAt differs from the demo's heatCell:\n%s\nwant\n%s", got, want)
	}
}

// TestExampleBlocksCopy: the radix sort measured on the CPU is
// examples/blocks' own; testdata/blocks_example.go is a copy of its
// kernels (go:embed reads no file outside the package), kept the same.
func TestExampleBlocksCopy(t *testing.T) {
	want, err := os.ReadFile("../../examples/blocks/kernels.go")
	if err != nil {
		t.Fatal(err)
	}
	if exampleBlocksSrc != string(want) {
		t.Error("testdata/blocks_example.go differs from examples/blocks/kernels.go: copy it again")
	}
}
