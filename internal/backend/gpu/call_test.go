package gpu

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every function of the backends that takes its driver arguments as
// ...uintptr must carry //go:uintptrescapes, or a pointer its caller
// converts may be left on a stack that moves during the call (gpu.Call).
// The check reads the sources of internal/backend.
func TestVariadicUintptrCallsKeepPointers(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Type.Params == nil || len(fd.Type.Params.List) == 0 {
				continue
			}
			last := fd.Type.Params.List[len(fd.Type.Params.List)-1]
			el, ok := last.Type.(*ast.Ellipsis)
			if !ok {
				continue
			}
			if id, ok := el.Elt.(*ast.Ident); !ok || id.Name != "uintptr" {
				continue
			}
			checked++
			if fd.Doc == nil || !hasDirective(fd.Doc, "//go:uintptrescapes") {
				t.Errorf("%s: %s takes ...uintptr without //go:uintptrescapes; call gpu.Call instead", fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no function taking ...uintptr: the check reads the wrong folder")
	}
}

func hasDirective(doc *ast.CommentGroup, dir string) bool {
	for _, c := range doc.List {
		if c.Text == dir {
			return true
		}
	}
	return false
}
