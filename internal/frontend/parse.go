package frontend

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"sync"

	"github.com/quadrants-go/qd/internal/ir"
)

// kernelMarker is the comment line that makes the function below it a kernel.
const kernelMarker = "//qd:kernel"

// Parse parses and type-checks the Go source src (named filename in
// positions and messages) and returns one kernel per function marked with a
// //qd:kernel comment line, in source order. The error, when not nil, is an
// ErrorList of positioned *ir.Error values. A generic kernel is an error
// here: ParseFile returns it as a template to instantiate.
func Parse(filename string, src []byte) ([]*ir.Kernel, error) {
	f, err := ParseFile(filename, src)
	if err != nil {
		return nil, err
	}
	if len(f.Generics) > 0 {
		for _, g := range f.Generics {
			g.fc.errorf(g.fd.Type.TypeParams.Pos(), g.Name, "kernel %s is generic; launching generic kernels is not supported yet: write one kernel per element type", g.Name)
		}
		return nil, f.fc.errs.result()
	}
	return f.Kernels, nil
}

// ParseFile parses and type-checks src as Parse does, and returns its plain
// kernels, translated, and its generic kernels as templates
// (Generic.Instantiate translates one for given type arguments).
func ParseFile(filename string, src []byte) (*File, error) {
	s := loadStd()
	if s.err != nil {
		return nil, s.err
	}
	fc := &fileCtx{std: s, fset: token.NewFileSet(), filename: filename, fake: map[*types.Package]bool{},
		tctxt: types.NewContext()}
	// The file's positions come after the embedded sources', so that one
	// token.Pos says which of the two it is in (stdlib.isLibPos).
	fc.fset.AddFile("", -1, s.fset.Base())
	f, err := parser.ParseFile(fc.fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		var el scanner.ErrorList
		if errors.As(err, &el) {
			for _, e := range el {
				fc.errs.add(&ir.Error{Pos: ir.Pos{File: cmp.Or(e.Pos.Filename, filename), Line: e.Pos.Line, Col: e.Pos.Column}, Msg: e.Msg})
			}
			return nil, fc.errs.result()
		}
		return nil, err
	}
	fc.file = f
	out := &File{fc: fc}
	kernels := fc.findKernels()
	if len(kernels) == 0 {
		if err := fc.errs.result(); err != nil {
			return nil, err
		}
		return out, nil
	}
	fc.typeCheck()
	if err := fc.errs.result(); err != nil {
		return nil, err
	}
	for _, fd := range kernels {
		if fd.Type.TypeParams != nil && fd.Type.TypeParams.NumFields() > 0 {
			if g := fc.generic(fd); g != nil {
				out.Generics = append(out.Generics, g)
			}
			continue
		}
		if k := fc.buildKernel(fd, fd.Name.Name, nil); k != nil {
			out.Kernels = append(out.Kernels, k)
		}
	}
	if err := fc.errs.result(); err != nil {
		return nil, err
	}
	return out, nil
}

// fileCtx is what every kernel of one file shares.
type fileCtx struct {
	std      *stdlib
	fset     *token.FileSet
	filename string
	file     *ast.File
	pkg      *types.Package
	info     *types.Info
	fake     map[*types.Package]bool            // imports served as empty packages
	decls    map[*types.Func]*ast.FuncDecl      // functions of the file
	kernels  map[*types.Func]bool               // those marked //qd:kernel
	assigned map[ast.Node]map[types.Object]bool // cache of assignedIn
	layouts  map[types.Type]*layout             // cache of layoutOf
	nreturns map[*ast.FuncDecl]int              // cache of returns
	tctxt    *types.Context                     // instances the front end makes
	mu       sync.Mutex                         // held by Generic.Instantiate
	typeErrs []types.Error
	errs     errList
}

// pos is the position of p as the user reads it: in filename, or where a
// //line directive says (a generated part of the source names its own
// file and lines).
func (fc *fileCtx) pos(p token.Pos) ir.Pos {
	if !p.IsValid() {
		return ir.Pos{}
	}
	if fc.std.isLibPos(p) {
		q := fc.std.fset.Position(p)
		return ir.Pos{File: q.Filename, Line: q.Line, Col: q.Column}
	}
	q := fc.fset.Position(p)
	return ir.Pos{File: cmp.Or(q.Filename, fc.filename), Line: q.Line, Col: q.Column}
}

func (fc *fileCtx) errorf(p token.Pos, kernel, format string, args ...any) {
	fc.errs.add(ir.Errorf(fc.pos(p), kernel, format, args...))
}

// isMarker reports whether c is the kernel marker line.
func isMarker(c *ast.Comment) bool {
	return strings.TrimRight(c.Text, " \t\r") == kernelMarker
}

// nearMarker reports whether c looks like the kernel marker but is not
// it (// qd:kernel, //qd: kernel, //QD:Kernel): like a //go: directive,
// the marker has no space and is lower case, and a near miss would
// otherwise leave its function silently not a kernel.
func nearMarker(c *ast.Comment) bool {
	if isMarker(c) {
		return false
	}
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"), "*/")
	return strings.ToLower(strings.Join(strings.Fields(t), "")) == "qd:kernel"
}

// findKernels returns the marked functions and reports markers that mark
// nothing: a marker separated from its function by a blank line, above a
// method, or above something that is not a function, would otherwise be
// silently ignored; so would a near miss of the marker.
func (fc *fileCtx) findKernels() []*ast.FuncDecl {
	var kernels []*ast.FuncDecl
	used := map[*ast.Comment]bool{}
	for _, d := range fc.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil {
			continue
		}
		marked := false
		for _, c := range fd.Doc.List {
			if isMarker(c) {
				used[c] = true
				marked = true
			}
		}
		if !marked {
			continue
		}
		if fd.Recv != nil {
			fc.errorf(fd.Pos(), fd.Name.Name, "a method cannot be a kernel; make %s a plain function", fd.Name.Name)
			continue
		}
		if fd.Body == nil {
			fc.errorf(fd.Pos(), fd.Name.Name, "kernel %s has no body", fd.Name.Name)
			continue
		}
		kernels = append(kernels, fd)
	}
	for _, cg := range fc.file.Comments {
		for _, c := range cg.List {
			if isMarker(c) && !used[c] {
				fc.errorf(c.Pos(), "", "%s must be on the line directly above a func declaration (no blank line in between)", kernelMarker)
			}
			if nearMarker(c) {
				fc.errorf(c.Pos(), "", "%s is not the kernel marker: write %s, with no space and in lower case", strings.TrimSpace(c.Text), kernelMarker)
			}
		}
	}
	return kernels
}

// typeCheck runs go/types over the file and reports the type errors that lie
// in the kernels, in the functions they call and in the package-level
// declarations they use; errors elsewhere belong to host code that may rely
// on the rest of its package, which qd does not see.
func (fc *fileCtx) typeCheck() {
	fc.info = newInfo()
	conf := types.Config{
		Importer: importerFunc(func(p string) (*types.Package, error) { return fc.std.imp(p, fc.fake) }),
		Error: func(err error) {
			if te, ok := err.(types.Error); ok {
				fc.typeErrs = append(fc.typeErrs, te)
			}
		},
		Sizes: sizes,
	}
	name := fc.file.Name.Name
	if name == "_" || name == "" {
		name = "kernels"
	}
	fc.pkg, _ = conf.Check(name, fc.fset, []*ast.File{fc.file}, fc.info)

	fc.decls = map[*types.Func]*ast.FuncDecl{}
	fc.kernels = map[*types.Func]bool{}
	var roots []*ast.FuncDecl
	for _, d := range fc.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		fn, ok := fc.info.Defs[fd.Name].(*types.Func)
		if !ok {
			continue
		}
		fc.decls[fn] = fd
		if fd.Recv == nil && fd.Doc != nil && fd.Body != nil && hasMarker(fd.Doc) {
			fc.kernels[fn] = true
			roots = append(roots, fd)
		}
	}

	// Collect the source ranges whose type errors matter.
	type span struct{ lo, hi token.Pos }
	var spans []span
	seen := map[ast.Node]bool{}
	foreign := map[token.Pos]bool{}
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		spans = append(spans, span{n.Pos(), n.End()})
		ast.Inspect(n, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.SelectorExpr:
				if id, ok := m.X.(*ast.Ident); ok {
					if pn, ok := fc.info.Uses[id].(*types.PkgName); ok && fc.fake[pn.Imported()] {
						fc.errorf(m.Pos(), "", "%s.%s: package %s cannot be used in kernels; kernels may use only qd and math",
							id.Name, m.Sel.Name, pn.Imported().Path())
						foreign[m.Pos()] = true
						foreign[m.Sel.Pos()] = true
						return false
					}
				}
			case *ast.Ident:
				obj := fc.info.Uses[m]
				if fn, ok := obj.(*types.Func); ok && fn.Pkg() == fc.pkg {
					// Methods are in no scope: find them by declaration.
					if fd := fc.decls[fn.Origin()]; fd != nil {
						visit(fd)
						return true
					}
				}
				if obj == nil || obj.Pkg() != fc.pkg || obj.Parent() != fc.pkg.Scope() {
					return true
				}
				if fn, ok := obj.(*types.Func); ok {
					if fd := fc.decls[fn]; fd != nil {
						visit(fd)
					}
					return true
				}
				if spec := fc.specOf(obj.Pos()); spec != nil {
					visit(spec)
				}
			}
			return true
		})
	}
	for _, fd := range roots {
		visit(fd)
	}
	relevant := func(p token.Pos) bool {
		for _, sp := range spans {
			if p >= sp.lo && p < sp.hi {
				return true
			}
		}
		return false
	}
	for _, g := range groupTypeErrors(fc.typeErrs) {
		main := g[0]
		if foreign[main.Pos] || !slices.ContainsFunc(g, func(te types.Error) bool { return relevant(te.Pos) }) {
			continue
		}
		// A continuation goes after its error, positioned, as go vet
		// prints it: "k redeclared in this block" at the second
		// declaration, then "\tk.go:4:6: other declaration of k". The
		// second declaration of a kernel is itself in no span (go/types
		// defines no object for it), so a group counts if any part does.
		msg := main.Msg
		for _, cont := range g[1:] {
			p := fc.pos(cont.Pos)
			msg += fmt.Sprintf("\n\t%s:%d:%d: %s", p.File, p.Line, p.Col, strings.TrimLeft(cont.Msg, "\t"))
		}
		fc.errorf(main.Pos, "", "%s", msg)
	}
}

// groupTypeErrors groups go/types errors: an error whose message starts
// with a tab continues the one before it (go/types reports "other
// declaration of k" that way).
func groupTypeErrors(errs []types.Error) [][]types.Error {
	var groups [][]types.Error
	for _, te := range errs {
		if n := len(groups); n > 0 && strings.HasPrefix(te.Msg, "\t") {
			groups[n-1] = append(groups[n-1], te)
			continue
		}
		groups = append(groups, []types.Error{te})
	}
	return groups
}

func hasMarker(cg *ast.CommentGroup) bool {
	for _, c := range cg.List {
		if isMarker(c) {
			return true
		}
	}
	return false
}

// specOf returns the package-level spec declaring the object at p.
func (fc *fileCtx) specOf(p token.Pos) ast.Node {
	for _, d := range fc.file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || p < gd.Pos() || p >= gd.End() {
			continue
		}
		for _, s := range gd.Specs {
			if p >= s.Pos() && p < s.End() {
				return s
			}
		}
	}
	return nil
}

// assignedIn returns the objects that body assigns (=, op=, ++, --, or as
// the target of a range clause with =), in whole or in part (p.X = v,
// a[i] = v), or whose address it takes (&v, or a method with a pointer
// receiver called on v): those need a local of their own where a
// read-only binding would otherwise do. info is what go/types recorded
// about body.
func (fc *fileCtx) assignedIn(info *types.Info, body ast.Node) map[types.Object]bool {
	if m, ok := fc.assigned[body]; ok {
		return m
	}
	m := map[types.Object]bool{}
	mark := func(e ast.Expr) {
		if id := rootIdent(e); id != nil {
			if obj := info.Uses[id]; obj != nil {
				m[obj] = true
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				mark(l)
			}
		case *ast.IncDecStmt:
			mark(n.X)
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				mark(n.Key)
				mark(n.Value)
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				mark(n.X)
			}
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[n]; ok && sel.Kind() == types.MethodVal && mayTakeAddress(sel) {
				mark(n.X)
			}
		}
		return true
	})
	if fc.assigned == nil {
		fc.assigned = map[ast.Node]map[types.Object]bool{}
	}
	fc.assigned[body] = m
	return m
}

// rootIdent is the variable at the root of a selector and index path
// (p in p.V[i].X), or nil.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// mayTakeAddress reports whether calling the method sel on a value takes
// the value's address: a pointer receiver on an operand that is no
// pointer, or any method on a value of type parameter type (its method
// set is known only once instantiated).
func mayTakeAddress(sel *types.Selection) bool {
	if _, ok := sel.Recv().(*types.TypeParam); ok {
		return true
	}
	fn, ok := sel.Obj().(*types.Func)
	if !ok {
		return false
	}
	_, ptrRecv := fn.Type().(*types.Signature).Recv().Type().(*types.Pointer)
	_, ptrOperand := sel.Recv().Underlying().(*types.Pointer)
	return ptrRecv && !ptrOperand
}
