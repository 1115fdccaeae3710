package frontend

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// inline translates a call of a function of the kernel's file by inlining
// its body, and returns the locals (or pure expressions) holding its results.
func (b *builder) inline(x *ast.CallExpr, fn *types.Func, decl *ast.FuncDecl) []ir.Expr {
	for f := b.fr; f != nil; f = f.parent {
		if f.fn == fn {
			var names []string
			for g := b.fr; g != f.parent; g = g.parent {
				names = append(names, g.name)
			}
			for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
				names[i], names[j] = names[j], names[i]
			}
			names = append(names, fn.Name())
			b.errorf(x.Pos(), "recursive call %s is not supported: kernels inline the functions they call; rewrite it as a loop", strings.Join(names, " → "))
			return nil
		}
	}
	b.inlines++
	if b.inlines > maxInlines {
		if b.inlines == maxInlines+1 {
			b.errorf(x.Pos(), "kernel calls helper functions more than %d times once inlined; call fewer helpers from helpers", maxInlines)
		}
		return nil
	}
	sig := fn.Type().(*types.Signature)
	switch {
	case decl.Type.TypeParams != nil && decl.Type.TypeParams.NumFields() > 0:
		b.errorf(x.Pos(), "generic function %s cannot be called in kernels; write it for the concrete type", fn.Name())
		return nil
	case decl.Body == nil:
		b.errorf(x.Pos(), "function %s has no body", fn.Name())
		return nil
	case sig.Variadic():
		b.errorf(x.Pos(), "variadic function %s cannot be called in kernels", fn.Name())
		return nil
	}
	savedPos := b.pos
	b.pos = b.fc.pos(x.Pos())
	defer func() { b.pos = savedPos }()

	// Parameters, in order, with the argument expressions for scalars.
	type param struct {
		obj   types.Object
		typ   types.Type
		arg   ast.Expr
		array bool
	}
	var params []param
	for _, field := range decl.Type.Params.List {
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{nil}
		}
		for _, id := range names {
			var obj types.Object
			if id != nil && id.Name != "_" {
				obj = b.info.Defs[id]
			}
			_, isSlice := types.Unalias(b.info.TypeOf(field.Type)).(*types.Slice)
			params = append(params, param{obj: obj, typ: b.info.TypeOf(field.Type), array: isSlice})
		}
	}
	if len(x.Args) != len(params) {
		b.errorf(x.Pos(), "passing a multi-value call as the arguments of %s is not supported; assign its results to locals first", fn.Name())
		return nil
	}
	var scalarArgs []ast.Expr
	for i := range params {
		params[i].arg = x.Args[i]
		if !params[i].array {
			scalarArgs = append(scalarArgs, x.Args[i])
		}
	}
	vals := b.exprList(scalarArgs)
	if len(vals) != len(scalarArgs) {
		return nil
	}

	fr := &frame{fn: fn, name: fn.Name(), parent: b.fr, vars: map[types.Object]*binding{}, callPos: x.Pos()}
	assigned := b.fc.assignedIn(decl.Body)
	k := 0
	for _, p := range params {
		if p.array {
			ap, idx, ok := b.arrayIndexBase(p.arg)
			if !ok {
				return nil
			}
			if len(idx) > 0 {
				b.errorf(p.arg.Pos(), "sub-arrays such as %s cannot be passed to %s; pass the whole array and its index", shortExpr(p.arg), fn.Name())
				return nil
			}
			dims := 0
			for t := types.Unalias(p.typ); ; dims++ {
				s, ok := t.(*types.Slice)
				if !ok {
					break
				}
				t = types.Unalias(s.Elem())
			}
			if dims != ap.Dims {
				b.errorf(p.arg.Pos(), "%s has %d dimensions but %s's parameter has %d", ap.Name, ap.Dims, fn.Name(), dims)
				return nil
			}
			if p.obj != nil {
				fr.vars[p.obj] = &binding{param: ap}
			}
			continue
		}
		v := vals[k]
		k++
		name := "_"
		if p.obj != nil {
			name = p.obj.Name()
		}
		typ, ok := b.scalarType(p.typ, p.arg.Pos(), "parameter "+name+" of "+fn.Name())
		if !ok {
			return nil
		}
		v = b.convertTo(typ, v)
		switch {
		case p.obj == nil:
			b.discard(v)
		case !assigned[p.obj] && isDirect(v):
			fr.vars[p.obj] = &binding{val: v}
		default:
			fr.vars[p.obj] = &binding{v: b.decl(name, v)}
		}
	}

	// Results.
	res := sig.Results()
	resTypes := make([]ir.Type, res.Len())
	for i := range res.Len() {
		t, ok := b.scalarType(res.At(i).Type(), decl.Type.Results.Pos(), "result of "+fn.Name())
		if !ok {
			return nil
		}
		resTypes[i] = t
	}
	saved := b.fr
	b.fr = fr
	defer func() { b.fr = saved }()

	// The most common helper is a single return of an expression: its value
	// needs no result local when it reads nothing memory could change.
	if body := decl.Body.List; len(body) == 1 && res.Len() == 1 && res.At(0).Name() == "" {
		if r, ok := body[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			b.pos = b.fc.pos(r.Pos())
			v := b.convertTo(resTypes[0], b.expr(r.Results[0]))
			if !isSimple(v) {
				v = &ir.VarRef{Var: b.decl(fn.Name(), v)}
			}
			return []ir.Expr{v}
		}
	}
	for i := range res.Len() {
		name := res.At(i).Name()
		if name == "" || name == "_" {
			name = fn.Name()
		}
		v := b.newVar(name, resTypes[i])
		b.emit(&ir.Decl{Pos: b.pos, Var: v})
		fr.results = append(fr.results, v)
		if res.At(i).Name() != "" && res.At(i).Name() != "_" {
			fr.vars[res.At(i)] = &binding{v: v}
		}
	}
	fr.retFor = &ir.For{Pos: b.pos}
	if earlyReturn(decl.Body.List, true) {
		// A return in the middle leaves this one-trip loop; loops inside it
		// are serial even when the call is at the kernel's top level.
		b.nested(&fr.retFor.Body, func() { b.stmtList(decl.Body.List, true) })
		fr.retFor.Body = append(fr.retFor.Body, &ir.Break{Pos: fr.retFor.Pos, Loop: fr.retFor})
		b.emit(fr.retFor)
	} else {
		b.stmtList(decl.Body.List, true)
		if fr.retUsed {
			b.errorf(x.Pos(), "internal error: unexpected return placement in %s; please report this kernel", fn.Name())
		}
	}
	out := make([]ir.Expr, len(fr.results))
	for i, v := range fr.results {
		out[i] = &ir.VarRef{Var: v}
	}
	return out
}

// isDirect reports whether an argument can be read in place of a parameter
// that the helper never assigns: nothing the helper does can change it.
func isDirect(e ir.Expr) bool {
	switch e.(type) {
	case *ir.Const, *ir.ParamRef, *ir.VarRef, *ir.Len:
		return true
	}
	return false
}
