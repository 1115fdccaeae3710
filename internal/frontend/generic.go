package frontend

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/quadrants-go/qd/internal/ir"
)

// File is what ParseFile finds in one source file: its plain kernels,
// translated, and its generic kernels, as templates.
type File struct {
	Kernels  []*ir.Kernel
	Generics []*Generic
	fc       *fileCtx
}

// Generic is a generic kernel, //qd:kernel func saxpy[T qd.Float](a T, x,
// y []T): go/types has checked it once, and Instantiate translates it for
// concrete type arguments. A launcher gets the type arguments from the
// launch's argument types: TypeFor maps each Go type (as reflect sees it)
// to a go/types type, Infer unifies the kernel's parameter types with the
// arguments' types, and Instantiate builds the kernel, named with its type
// list (saxpy[float64]) in messages, for a cache keyed by InstanceName.
// Errors in the kernel's body that the translation finds (a construct
// kernels do not support) are reported by Instantiate, naming the
// instance. A Generic is safe for concurrent use; instantiations of one
// file run one at a time.
type Generic struct {
	Name string
	Pos  ir.Pos
	// TypeParams are the names of the type parameters, in order.
	TypeParams []string
	fc         *fileCtx
	fd         *ast.FuncDecl
	sig        *types.Signature
}

// generic makes the template of the generic kernel fd.
func (fc *fileCtx) generic(fd *ast.FuncDecl) *Generic {
	fn, _ := fc.info.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return nil
	}
	g := &Generic{Name: fd.Name.Name, Pos: fc.pos(fd.Pos()), fc: fc, fd: fd, sig: fn.Type().(*types.Signature)}
	for i := range g.sig.TypeParams().Len() {
		g.TypeParams = append(g.TypeParams, g.sig.TypeParams().At(i).Obj().Name())
	}
	return g
}

// InstanceName is the name of the instance for targs in messages:
// saxpy[float64], saxpy[qd.Vec3[float32], Particle]. The instance's
// ir.Kernel is named irName of it (saxpy_float64), since the IR's names are
// identifiers.
func (g *Generic) InstanceName(targs ...types.Type) string {
	return g.Name + "[" + g.fc.typeList(targs) + "]"
}

// irName turns an instance's name into an identifier: every run of runes
// other than letters, digits and _ becomes one _, and a trailing one is
// dropped (saxpy[qd.Vec3[float32]] is saxpy_qd_Vec3_float32).
func irName(name string) string {
	var sb strings.Builder
	sep := false
	for _, r := range name {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep {
				sb.WriteByte('_')
				sep = false
			}
			sb.WriteRune(r)
			continue
		}
		sep = true
	}
	return sb.String()
}

// Instantiate translates the kernel with its type parameters bound to
// targs. A type argument that does not satisfy its constraint is an error
// at the type parameter; every error of the translation names the
// instance.
func (g *Generic) Instantiate(targs ...types.Type) (*ir.Kernel, error) {
	fc := g.fc
	fc.mu.Lock()
	defer fc.mu.Unlock()
	tps := g.sig.TypeParams()
	name := g.InstanceName(targs...)
	fail := func(p token.Pos, format string, args ...any) (*ir.Kernel, error) {
		fc.errorf(p, name, format, args...)
		err := fc.errs.result()
		fc.errs = errList{}
		return nil, err
	}
	if len(targs) != tps.Len() {
		return fail(g.fd.Type.TypeParams.Pos(), "kernel %s has %d type parameters; got %d type arguments", g.Name, tps.Len(), len(targs))
	}
	for i, t := range targs {
		if t == nil {
			return fail(g.typeParamPos(i), "no type argument for %s", g.TypeParams[i])
		}
	}
	if _, err := types.Instantiate(fc.tctxt, g.sig, targs, true); err != nil {
		i := 0
		var ae *types.ArgumentError
		if errors.As(err, &ae) {
			i = ae.Index
			err = ae.Err
		}
		// go/types names package qd by its path; kernels name it qd.
		msg := strings.ReplaceAll(err.Error(), QDPath+".", "qd.")
		return fail(g.typeParamPos(i), "type argument %s for %s: %s", fc.typeString(targs[min(i, len(targs)-1)]), g.TypeParams[min(i, len(g.TypeParams)-1)], msg)
	}
	e := env{}
	for i := range tps.Len() {
		e[tps.At(i)] = targs[i]
	}
	k := fc.buildKernel(g.fd, name, e)
	err := fc.errs.result()
	fc.errs = errList{}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// typeParamPos is the position of type parameter i's name.
func (g *Generic) typeParamPos(i int) token.Pos {
	for _, f := range g.fd.Type.TypeParams.List {
		for _, n := range f.Names {
			if i == 0 {
				return n.Pos()
			}
			i--
		}
	}
	return g.fd.Type.TypeParams.Pos()
}

// Type resolves a type argument written in Go in the kernel's file's
// terms: "float32", "Particle", "qd.Vec3[float32]", "[3]float64".
func (g *Generic) Type(expr string) (types.Type, error) {
	g.fc.mu.Lock()
	defer g.fc.mu.Unlock()
	tv, err := types.Eval(g.fc.fset, g.fc.pkg, g.fd.Pos(), expr)
	if err != nil {
		return nil, fmt.Errorf("type argument %q for kernel %s: %v", expr, g.Name, err)
	}
	if !tv.IsType() {
		return nil, fmt.Errorf("type argument %q for kernel %s is not a type", expr, g.Name)
	}
	return tv.Type, nil
}

// Infer returns the type arguments that make the kernel's parameters take
// arguments of the types args, one per parameter (for an array argument,
// a slice type of its dimensions: []float32 for a 1-dimensional array of
// float32), by unifying each parameter's type with its argument's. A nil
// argument type binds nothing (a launcher leaves out what may be an
// untyped constant, and tries again with it if a type is left unbound).
func (g *Generic) Infer(args []types.Type) ([]types.Type, error) {
	params := g.sig.Params()
	if len(args) != params.Len() {
		return nil, fmt.Errorf("kernel %s has %d parameters; got %d argument types", g.Name, params.Len(), len(args))
	}
	bound := map[*types.TypeParam]types.Type{}
	for i, a := range args {
		p := params.At(i)
		if a == nil {
			continue
		}
		if !unify(p.Type(), a, bound) {
			return nil, fmt.Errorf("kernel %s: parameter %s has type %s, which an argument of type %s does not match",
				g.Name, p.Name(), g.fc.typeString(p.Type()), typeName(g.fc, a))
		}
	}
	tps := g.sig.TypeParams()
	out := make([]types.Type, tps.Len())
	for i := range tps.Len() {
		t, ok := bound[tps.At(i)]
		if !ok {
			return nil, fmt.Errorf("kernel %s: cannot infer %s from the argument types", g.Name, g.TypeParams[i])
		}
		out[i] = t
	}
	return out, nil
}

func typeName(fc *fileCtx, t types.Type) string {
	if t == nil {
		return "<nil>"
	}
	return fc.typeString(t)
}

// unify binds the type parameters in p so that p is identical to a.
func unify(p, a types.Type, bound map[*types.TypeParam]types.Type) bool {
	p, a = types.Unalias(p), types.Unalias(a)
	switch p := p.(type) {
	case *types.TypeParam:
		if t, ok := bound[p]; ok {
			return types.Identical(t, a)
		}
		bound[p] = a
		return true
	case *types.Slice:
		s, ok := a.(*types.Slice)
		return ok && unify(p.Elem(), s.Elem(), bound)
	case *types.Array:
		s, ok := a.(*types.Array)
		return ok && s.Len() == p.Len() && unify(p.Elem(), s.Elem(), bound)
	case *types.Pointer:
		s, ok := a.(*types.Pointer)
		return ok && unify(p.Elem(), s.Elem(), bound)
	case *types.Named:
		n, ok := a.(*types.Named)
		if !ok || p.TypeArgs().Len() == 0 {
			return types.Identical(p, a)
		}
		if n.Origin() != p.Origin() || n.TypeArgs().Len() != p.TypeArgs().Len() {
			return false
		}
		for i := range p.TypeArgs().Len() {
			if !unify(p.TypeArgs().At(i), n.TypeArgs().At(i), bound) {
				return false
			}
		}
		return true
	}
	return types.Identical(p, a)
}

// TypeFor returns the type that a Go type, as reflect describes a launch
// argument's (an element type, for an array), stands for in the kernel's
// file: a predeclared type by its kind, a type of package qd by name
// (qd.Vec3[float32]), any other named type by its name among the types the
// kernel's file declares, which must have the same structure; unnamed
// arrays, slices and structs are built from their parts.
func (g *Generic) TypeFor(rt reflect.Type) (types.Type, error) {
	g.fc.mu.Lock()
	defer g.fc.mu.Unlock()
	t, err := g.fc.reflectType(rt, 0)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %v", g.Name, err)
	}
	return t, nil
}

func (fc *fileCtx) reflectType(rt reflect.Type, depth int) (types.Type, error) {
	if depth > 32 {
		return nil, fmt.Errorf("type %s nests too deeply", rt)
	}
	if rt.Name() != "" {
		t, err := fc.namedType(rt.PkgPath(), rt.Name())
		if err != nil {
			return nil, err
		}
		if !sameShape(t, rt, 0) {
			return nil, fmt.Errorf("type %s of the argument differs from %s of the kernel's file", rt, fc.typeString(t))
		}
		return t, nil
	}
	switch rt.Kind() {
	case reflect.Array:
		el, err := fc.reflectType(rt.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		return types.NewArray(el, int64(rt.Len())), nil
	case reflect.Slice:
		el, err := fc.reflectType(rt.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		return types.NewSlice(el), nil
	case reflect.Struct:
		fields := make([]*types.Var, rt.NumField())
		for i := range rt.NumField() {
			f := rt.Field(i)
			ft, err := fc.reflectType(f.Type, depth+1)
			if err != nil {
				return nil, err
			}
			pkg := fc.pkg
			if f.PkgPath == "" {
				pkg = nil
			}
			fields[i] = types.NewField(token.NoPos, pkg, f.Name, ft, f.Anonymous)
		}
		return types.NewStruct(fields, nil), nil
	}
	return nil, fmt.Errorf("type %s cannot be a type argument of a kernel", rt)
}

// namedType resolves a named type from its package path and its name as
// reflect spells them ("float32"; "Vec3[float32]" in qd's path; the type
// arguments of an instance with full package paths).
func (fc *fileCtx) namedType(pkgPath, name string) (types.Type, error) {
	base, args, generic := strings.Cut(name, "[")
	var scope *types.Scope
	switch {
	case pkgPath == "":
		scope = types.Universe
	case pkgPath == QDPath:
		scope = fc.std.qd.Scope()
	default:
		// Reflect names the user's package by its import path, which the
		// front end never sees: the kernel's file is that package.
		scope = fc.pkg.Scope()
	}
	tn, ok := scope.Lookup(base).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("type %s is not declared in the kernel's file", base)
	}
	if !generic {
		return tn.Type(), nil
	}
	if !strings.HasSuffix(args, "]") {
		return nil, fmt.Errorf("cannot read the type arguments of %s", name)
	}
	var targs []types.Type
	for _, a := range splitTypeList(args[:len(args)-1]) {
		t, err := fc.typeFromName(strings.TrimSpace(a))
		if err != nil {
			return nil, err
		}
		targs = append(targs, t)
	}
	return types.Instantiate(fc.tctxt, tn.Type(), targs, true)
}

// typeFromName resolves a type argument as reflect writes it in an
// instance's name: path.Name[...], a predeclared name, [N]T or []T.
func (fc *fileCtx) typeFromName(s string) (types.Type, error) {
	switch {
	case strings.HasPrefix(s, "[]"):
		el, err := fc.typeFromName(s[2:])
		if err != nil {
			return nil, err
		}
		return types.NewSlice(el), nil
	case strings.HasPrefix(s, "["):
		n, rest, ok := strings.Cut(s[1:], "]")
		length, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("cannot read the type argument %s", s)
		}
		el, err := fc.typeFromName(rest)
		if err != nil {
			return nil, err
		}
		return types.NewArray(el, length), nil
	}
	head := s
	if i := strings.IndexByte(s, '['); i >= 0 {
		head = s[:i]
	}
	dot := strings.LastIndexByte(head, '.')
	if dot < 0 {
		return fc.namedType("", s)
	}
	if strings.ContainsAny(head, " {*") {
		return nil, fmt.Errorf("the type argument %s is not supported: name it with a type declared in the kernel's file", s)
	}
	return fc.namedType(head[:dot], s[dot+1:])
}

// splitTypeList splits a list of type arguments at its top-level commas.
func splitTypeList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// sameShape reports whether the go/types type t has the structure of the
// reflect type rt: the same kinds, lengths, and field names and types.
func sameShape(t types.Type, rt reflect.Type, depth int) bool {
	if depth > 32 {
		return false
	}
	if it, ok := basicType(t); ok {
		switch rt.Kind() {
		case reflect.Bool:
			return it == ir.Bool
		case reflect.Int, reflect.Int64:
			return it == ir.I64
		case reflect.Int32:
			return it == ir.I32
		case reflect.Uint, reflect.Uint64:
			return it == ir.U64
		case reflect.Uint32:
			return it == ir.U32
		case reflect.Float32:
			return it == ir.F32
		case reflect.Float64:
			return it == ir.F64
		}
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		return rt.Kind() == reflect.Array && int64(rt.Len()) == u.Len() && sameShape(u.Elem(), rt.Elem(), depth+1)
	case *types.Slice:
		return rt.Kind() == reflect.Slice && sameShape(u.Elem(), rt.Elem(), depth+1)
	case *types.Struct:
		if rt.Kind() != reflect.Struct || rt.NumField() != u.NumFields() {
			return false
		}
		for i := range u.NumFields() {
			if rt.Field(i).Name != u.Field(i).Name() || !sameShape(u.Field(i).Type(), rt.Field(i).Type, depth+1) {
				return false
			}
		}
		return true
	case *types.Basic:
		// Types kernels do not support (int8, string): kinds by name, so
		// that the instantiation reports them.
		return u.Name() == rt.Kind().String()
	}
	return false
}

// TermTypes are the types of type parameter i's constraint's terms, in
// order (float32 and float64 for qd.Float): what checks that compile every
// kernel instantiate a generic kernel with. A constraint with no terms
// (any, comparable) has none.
func (g *Generic) TermTypes(i int) []types.Type {
	tps := g.sig.TypeParams()
	if i < 0 || i >= tps.Len() {
		return nil
	}
	var out []types.Type
	var walk func(t types.Type)
	walk = func(t types.Type) {
		switch u := t.Underlying().(type) {
		case *types.Interface:
			for j := range u.NumEmbeddeds() {
				walk(u.EmbeddedType(j))
			}
		case *types.Union:
			for j := range u.Len() {
				walk(u.Term(j).Type())
			}
		default:
			out = append(out, t)
		}
	}
	walk(tps.At(i).Constraint())
	return out
}
