package frontend

import (
	"go/ast"
	"go/types"
	"strings"
)

// Generics. go/types checks a generic function once, so inside its body
// every type that mentions a type parameter is written in terms of it
// (Vec3[T], T). The front end translates a generic body once per
// instantiation: each frame carries an environment from the type
// parameters of its function (or of its receiver's type) to the types the
// call instantiates them with, and every type the translation asks about
// goes through it. The environments come from types.Info.Instances at calls
// of generic functions, from the receiver's type arguments at calls of
// methods of generic types, and from the caller of Generic.Instantiate for
// a generic kernel.

// env maps type parameters to the types they stand for in one frame.
type env map[*types.TypeParam]types.Type

// subst returns t with the frame's type parameters replaced. Types without
// type parameters come back as they are; others are rebuilt, named ones by
// types.Instantiate, through the file's Context so that equal
// instantiations are one *types.Named.
func (fr *frame) subst(fc *fileCtx, t types.Type) types.Type {
	if t == nil || len(fr.env) == 0 {
		return t
	}
	if r, ok := fr.tcache[t]; ok {
		return r
	}
	r := substType(t, fr.env, fc.tctxt)
	if fr.tcache == nil {
		fr.tcache = map[types.Type]types.Type{}
	}
	fr.tcache[t] = r
	return r
}

func substType(t types.Type, e env, ctxt *types.Context) types.Type {
	switch t := t.(type) {
	case *types.TypeParam:
		if r, ok := e[t]; ok {
			return r
		}
	case *types.Alias:
		return substType(types.Unalias(t), e, ctxt)
	case *types.Named:
		targs := t.TypeArgs()
		if targs.Len() == 0 {
			return t
		}
		args := make([]types.Type, targs.Len())
		changed := false
		for i := range targs.Len() {
			args[i] = substType(targs.At(i), e, ctxt)
			changed = changed || args[i] != targs.At(i)
		}
		if !changed {
			return t
		}
		// go/types has checked the instantiation in the generic body; the
		// constraints of the outer type parameters imply the inner ones.
		if r, err := types.Instantiate(ctxt, t.Origin(), args, false); err == nil {
			return r
		}
	case *types.Array:
		if el := substType(t.Elem(), e, ctxt); el != t.Elem() {
			return types.NewArray(el, t.Len())
		}
	case *types.Slice:
		if el := substType(t.Elem(), e, ctxt); el != t.Elem() {
			return types.NewSlice(el)
		}
	case *types.Pointer:
		if el := substType(t.Elem(), e, ctxt); el != t.Elem() {
			return types.NewPointer(el)
		}
	case *types.Struct:
		fields := make([]*types.Var, t.NumFields())
		tags := make([]string, t.NumFields())
		changed := false
		for i := range t.NumFields() {
			f := t.Field(i)
			ft := substType(f.Type(), e, ctxt)
			fields[i], tags[i] = f, t.Tag(i)
			if ft != f.Type() {
				fields[i] = types.NewField(f.Pos(), f.Pkg(), f.Name(), ft, f.Embedded())
				changed = true
			}
		}
		if changed {
			return types.NewStruct(fields, tags)
		}
	case *types.Tuple:
		if t == nil {
			return t
		}
		vars := make([]*types.Var, t.Len())
		changed := false
		for i := range t.Len() {
			v := t.At(i)
			vars[i] = v
			if vt := substType(v.Type(), e, ctxt); vt != v.Type() {
				vars[i] = types.NewVar(v.Pos(), v.Pkg(), v.Name(), vt)
				changed = true
			}
		}
		if changed {
			return types.NewTuple(vars...)
		}
	}
	return t
}

// typ is the type of e in the frame being translated, type parameters
// substituted.
func (b *builder) typ(e ast.Expr) types.Type {
	return b.fr.subst(b.fc, b.info.TypeOf(e))
}

// subst substitutes the current frame's type parameters in t.
func (b *builder) subst(t types.Type) types.Type { return b.fr.subst(b.fc, t) }

// funcIdent is the identifier that names the function of a call: f, qd.f,
// f[T], qd.f[T, U].
func funcIdent(fun ast.Expr) *ast.Ident {
	fun = ast.Unparen(fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = ast.Unparen(f.X)
	case *ast.IndexListExpr:
		fun = ast.Unparen(f.X)
	}
	switch f := fun.(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	}
	return nil
}

// funcEnv is the environment of a call of the generic function fn named by
// fun: its type parameters bound to the call's type arguments, explicit or
// inferred, in the caller's terms.
func (b *builder) funcEnv(fun ast.Expr, fn *types.Func) (env, bool) {
	tps := fn.Type().(*types.Signature).TypeParams()
	if tps.Len() == 0 {
		return nil, true
	}
	id := funcIdent(fun)
	if id == nil {
		return nil, false
	}
	inst, ok := b.info.Instances[id]
	if !ok || inst.TypeArgs.Len() != tps.Len() {
		return nil, false
	}
	e := env{}
	for i := range tps.Len() {
		e[tps.At(i)] = b.subst(inst.TypeArgs.At(i))
	}
	return e, true
}

// recvEnv is the environment of a method of a generic type called on a
// receiver of the instantiated type recv: the method's receiver type
// parameters (func (a Vec3[T]) ...) bound to recv's type arguments.
func recvEnv(method *types.Func, recv types.Type) env {
	sig := method.Type().(*types.Signature)
	rtps := sig.RecvTypeParams()
	if rtps.Len() == 0 {
		return nil
	}
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	n, ok := types.Unalias(recv).(*types.Named)
	if !ok || n.TypeArgs().Len() != rtps.Len() {
		return nil
	}
	e := env{}
	for i := range rtps.Len() {
		e[rtps.At(i)] = n.TypeArgs().At(i)
	}
	return e
}

// typeList renders type arguments for an instance's name: float64, or
// qd.Vec3[float32], Particle.
func (fc *fileCtx) typeList(targs []types.Type) string {
	names := make([]string, len(targs))
	for i, t := range targs {
		names[i] = fc.typeString(t)
	}
	return strings.Join(names, ", ")
}
