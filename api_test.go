package qd

import (
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

// TestAPIHasNoInternalTypes: no exported function, method, field or
// variable of package qd mentions a type of an internal package, which
// users cannot name.
func TestAPIHasNoInternalTypes(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkgs["qd"].Files {
		internal := map[string]bool{} // local names of internal imports
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/internal/") {
				name := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				internal[name] = true
			}
		}
		check := func(what string, n ast.Node) {
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
						t.Errorf("%s: %s uses %s.%s, from an internal package", fset.Position(n.Pos()), what, id.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				check(d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									if n.IsExported() {
										check(s.Name.Name+"."+n.Name, fld.Type)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil {
								check(n.Name, s.Type)
							}
						}
					}
				}
			}
		}
	}
}

func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// TestDocsForNewcomers: the package doc's synopsis names only backends
// that are built in, and the README's install command works from a clone
// (the module is not published, so an @latest install fails).
func TestDocsForNewcomers(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p := doc.New(pkgs["qd"], "github.com/quadrants-go/qd", 0)
	if _, amd := backend.Lookup("amdgpu"); !amd && strings.Contains(p.Synopsis(p.Doc), "AMD") {
		t.Errorf("the package synopsis claims AMD GPUs, whose backend is not built in: %q", p.Synopsis(p.Doc))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	installs := regexp.MustCompile(`(?m)^\s*go install (\S+)`).FindAllStringSubmatch(string(readme), -1)
	if len(installs) == 0 {
		t.Fatal("the README gives no go install command")
	}
	for _, m := range installs {
		if !strings.HasPrefix(m[1], "./") {
			t.Errorf("README: go install %s does not work from a clone of an unpublished module; use ./cmd/qd", m[1])
		}
	}
}

// TestErrUnsupportedIsStandard: qd.ErrUnsupported, and the errors that wrap
// it, match the standard library's errors.ErrUnsupported.
func TestErrUnsupportedIsStandard(t *testing.T) {
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Fatal("ErrUnsupported does not match errors.ErrUnsupported")
	}
	p, err := Init(WithArch(CPU))
	check(t, err)
	defer p.Close()
	_, err = p.WrapStream(1) // no foreign streams on the CPU
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("WrapStream on the CPU: %v, want an error matching qd.ErrUnsupported and errors.ErrUnsupported", err)
	}
}
