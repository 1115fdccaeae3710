package suitekernels

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/lower"
)

// TestAllLower: every kernel of All verifies and lowers.
func TestAllLower(t *testing.T) {
	for _, k := range All() {
		if _, err := lower.Lower(k); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
}

// TestAllCallsEveryConstructor: every exported function of this package
// that returns a kernel is called in All, so that a kernel added here is
// compiled by the code generator checks too.
func TestAllCallsEveryConstructor(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	constructors := map[string]token.Position{}
	called := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			if fd.Name.Name == "All" {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if id, ok := call.Fun.(*ast.Ident); ok {
							called[id.Name] = true
						}
					}
					return true
				})
				continue
			}
			if res := fd.Type.Results; fd.Name.IsExported() && res != nil && len(res.List) == 1 {
				if star, ok := res.List[0].Type.(*ast.StarExpr); ok {
					if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Kernel" {
						constructors[fd.Name.Name] = fset.Position(fd.Pos())
					}
				}
			}
		}
	}
	if len(constructors) == 0 {
		t.Fatal("found no kernel constructors: the check is broken")
	}
	for name, pos := range constructors {
		if !called[name] {
			t.Errorf("%s (%s) is not called in All: the code generator checks would not compile its kernel", name, pos)
		}
	}
}
