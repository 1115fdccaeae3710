package frontend

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Syntax is what the front end parsed and type-checked, for tools that
// generate code from the kernels' own text (qd gen, internal/nativegen):
// the file set, the file, the type information and the plain (non-generic)
// kernels' declarations in source order.
type Syntax struct {
	Fset    *token.FileSet
	File    *ast.File
	Info    *types.Info
	Kernels []*ast.FuncDecl
}

// Syntax returns the file's syntax. It is valid only for a File that
// ParseFile returned without error.
func (f *File) Syntax() Syntax {
	fc := f.fc
	s := Syntax{Fset: fc.fset, File: fc.file, Info: fc.info}
	for _, d := range fc.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		fn, ok := fc.info.Defs[fd.Name].(*types.Func)
		if !ok || !fc.kernels[fn] || fd.Type.TypeParams.NumFields() > 0 {
			continue
		}
		s.Kernels = append(s.Kernels, fd)
	}
	return s
}
