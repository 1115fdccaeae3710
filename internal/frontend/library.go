package frontend

//go:generate cp ../../vec.go vec.go.txt
//go:generate cp ../../mat.go mat.go.txt
//go:generate cp ../../quat.go quat.go.txt
//go:generate cp ../../decomp.go decomp.go.txt
//go:generate cp ../../rand.go rand.go.txt
//go:generate cp ../../blockapi.go blockapi.go.txt

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// The value library of package qd (vectors, matrices, quaternions,
// decompositions, random numbers), as Go source: exact copies of the root
// package's files, refreshed by go generate, which a root test compares.
// Unlike the kernel API, whose declarations are all the front end needs,
// the library's bodies are type-checked and translated: a kernel that calls
// qd.SVD3 inlines SVD3's body as it inlines a helper of its own file.
var (
	//go:embed vec.go.txt
	vecSource []byte
	//go:embed mat.go.txt
	matSource []byte
	//go:embed quat.go.txt
	quatSource []byte
	//go:embed decomp.go.txt
	decompSource []byte
	//go:embed rand.go.txt
	randSource []byte
	// The block-level kernel API: declarations, as kernelapi.go's.
	//go:embed blockapi.go.txt
	blockSource []byte
)

// qdFiles are the files of package qd the front end sees, named as in the
// root package: the kernel API first, then the library.
var qdFiles = []struct {
	name string
	src  *[]byte
	api  bool // the kernel API: declarations only
}{
	{"kernelapi.go", &qdSource, true},
	{"blockapi.go", &blockSource, true},
	{"vec.go", &vecSource, false},
	{"mat.go", &matSource, false},
	{"quat.go", &quatSource, false},
	{"decomp.go", &decompSource, false},
	{"rand.go", &randSource, false},
}

// checkQD type-checks package qd from its embedded files. The kernel API's
// bodies are replaced by panic("") first: they are the native
// implementations (atomics through sync/atomic and unsafe) that the front
// end never translates, and without them their imports need not resolve
// (go/types accepts no generic function without a body). The library keeps
// its bodies, and their types, uses and instantiations are recorded in the
// returned Info.
func checkQD(fset *token.FileSet, deps *stdlib) (*types.Package, *types.Info, map[*types.Func]*ast.FuncDecl, error) {
	var files []*ast.File
	for _, qf := range qdFiles {
		f, err := parser.ParseFile(fset, qf.name, *qf.src, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("qd: embedded source of package qd: %v", err)
		}
		if qf.api {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					fd.Body = stubBody(fd.Body)
				}
			}
		}
		files = append(files, f)
	}
	info := newInfo()
	conf := types.Config{
		DisableUnusedImportCheck: true,
		Importer:                 importerFunc(func(p string) (*types.Package, error) { return deps.imp(p, nil) }),
		Sizes:                    sizes,
	}
	pkg, err := conf.Check(QDPath, fset, files, info)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("qd: embedded source of package qd: %v", err)
	}
	decls := map[*types.Func]*ast.FuncDecl{}
	for _, f := range files[1:] {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[fn] = fd
				}
			}
		}
	}
	return pkg, info, decls, nil
}

// newInfo makes the types.Info the front end reads: types and constant
// values, definitions and uses, selections and instantiations.
func newInfo() *types.Info {
	return &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances:  map[*ast.Ident]types.Instance{},
	}
}

// stubBody returns a body of just panic(""), at body's braces.
func stubBody(body *ast.BlockStmt) *ast.BlockStmt {
	call := &ast.CallExpr{Fun: &ast.Ident{NamePos: body.Lbrace, Name: "panic"}, Lparen: body.Lbrace, Rparen: body.Lbrace,
		Args: []ast.Expr{&ast.BasicLit{ValuePos: body.Lbrace, Kind: token.STRING, Value: `""`}}}
	return &ast.BlockStmt{Lbrace: body.Lbrace, List: []ast.Stmt{&ast.ExprStmt{X: call}}, Rbrace: body.Rbrace}
}

// isLibPos reports whether p lies in the embedded sources (the library, the
// kernel API, math): every Parse numbers its file after them.
func (s *stdlib) isLibPos(p token.Pos) bool {
	return p.IsValid() && int(p) < s.fset.Base()
}

// libPos describes p, a position in the library, for messages.
func (s *stdlib) libPos(p token.Pos) string {
	q := s.fset.Position(p)
	return fmt.Sprintf("%s:%d:%d", q.Filename, q.Line, q.Column)
}

// bitCasts are math's bit casts (rand.go's normal generators use them),
// each with the type it gives: an ir.Bitcast, which keeps every bit.
var bitCasts = map[string]ir.Type{"Float32bits": ir.U32, "Float32frombits": ir.F32, "Float64bits": ir.U64, "Float64frombits": ir.F64}
