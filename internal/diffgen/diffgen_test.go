package diffgen

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFileFresh fails when the checked-in generated file differs
// from what Source generates now: someone edited the template (or the
// generated file) without running go generate ./internal/difftest.
func TestGeneratedFileFresh(t *testing.T) {
	want, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "difftest", FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; run go generate ./internal/difftest", FileName)
	}
}

// TestJoin checks that the joined source parses, holds every declaration
// of both files, and gives the generated kernels their own file and lines.
func TestJoin(t *testing.T) {
	hand := []byte("package p\n\nimport \"math\"\n\nconst c = math.Pi\n")
	gen := []byte("// Code generated; DO NOT EDIT.\n\npackage p\n\nimport \"math\"\n\n// f doc.\nfunc f() float64 {\n\treturn c * math.E\n}\n")
	src, err := Join(hand, gen)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "hand.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("joined source does not parse: %v\n%s", err, src)
	}
	if len(f.Decls) != 3 {
		t.Fatalf("joined source has %d declarations, want 3 (import, const, func):\n%s", len(f.Decls), src)
	}
	fn := f.Decls[2]
	if p := fset.Position(fn.Pos()); p.Filename != FileName || p.Line != 8 || p.Column != 1 {
		t.Errorf("func f at %s:%d:%d, want %s:8:1", p.Filename, p.Line, p.Column, FileName)
	}
	if !strings.Contains(string(src), "// f doc.") {
		t.Errorf("the doc comment of f is lost:\n%s", src)
	}
}
