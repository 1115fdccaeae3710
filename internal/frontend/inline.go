package frontend

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// callee is a function to inline: its declaration, what go/types recorded
// about it (the kernel file's Info, or the library's), and, for a generic
// function or a method of a generic type, the types its type parameters
// stand for at this call.
type callee struct {
	fn   *types.Func // the declared (origin) function
	decl *ast.FuncDecl
	info *types.Info
	env  env
	lib  bool // a function of qd's value library
}

// calleeOf returns the declaration to inline for fn, or nil when fn is
// declared neither in the kernel's file nor in the library.
func (b *builder) calleeOf(fn *types.Func) *callee {
	origin := fn.Origin()
	if d := b.fc.decls[origin]; d != nil {
		return &callee{fn: origin, decl: d, info: b.fc.info}
	}
	if d := b.std.decls[origin]; d != nil {
		return &callee{fn: origin, decl: d, info: b.std.info, lib: true}
	}
	return nil
}

// receiver is the receiver of a method call, evaluated.
type receiver struct {
	ptr  bool      // a pointer receiver: the method works on vars
	vars []*ir.Var // what a pointer receiver points to
	arg  func() val
}

// inline translates a call of a function of the kernel's file or of the
// library by inlining its body, and returns its results. Value parameters
// are bound to the arguments' leaves when the function never assigns them
// and nothing it does can change them, else to fresh locals; array
// parameters alias the caller's arrays; a pointer receiver works on the
// caller's leaves.
func (b *builder) inline(x *ast.CallExpr, c *callee, recv *receiver, args []ast.Expr) []val {
	fn, decl := c.fn, c.decl
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
	case decl.Body == nil:
		b.errorf(x.Pos(), "function %s has no body", fn.Name())
		return nil
	case sig.Variadic():
		b.errorf(x.Pos(), "variadic function %s cannot be called in kernels", fn.Name())
		return nil
	}
	savedPos := b.pos
	b.pos = b.at(x.Pos())
	defer func() { b.pos = savedPos }()

	fr := &frame{fn: fn, name: fn.Name(), parent: b.fr, vars: map[types.Object]*binding{}, callPos: x.Pos(),
		info: c.info, env: c.env, lib: c.lib, userPos: b.fr.userPos}
	if c.lib && !b.fr.lib {
		fr.userPos = b.fc.pos(x.Pos())
	}
	if recv != nil {
		fr.name = recvName(sig) + "." + fn.Name()
	}

	// Parameters, in order: the receiver first, for a method.
	type param struct {
		obj   types.Object
		typ   types.Type
		arg   ast.Expr
		array bool
		// alias, for an argument that names a block loop's value (a
		// shared array, a per-thread value, the block): the parameter is
		// bound to the argument's own binding (blocks.go).
		alias *binding
	}
	var params []param
	if recv != nil && decl.Recv != nil && len(decl.Recv.List) == 1 {
		var obj types.Object
		if names := decl.Recv.List[0].Names; len(names) == 1 && names[0].Name != "_" {
			obj = c.info.Defs[names[0]]
		}
		params = append(params, param{obj: obj, typ: fr.subst(b.fc, sig.Recv().Type())})
	}
	for _, field := range decl.Type.Params.List {
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{nil}
		}
		for _, id := range names {
			var obj types.Object
			if id != nil && id.Name != "_" {
				obj = c.info.Defs[id]
			}
			t := fr.subst(b.fc, c.info.TypeOf(field.Type))
			_, isSlice := types.Unalias(t).(*types.Slice)
			params = append(params, param{obj: obj, typ: t, array: isSlice})
		}
	}
	first := 0
	if recv != nil {
		first = 1
	}
	if len(args) != len(params)-first {
		b.errorf(x.Pos(), "passing a multi-value call as the arguments of %s is not supported; assign its results to locals first", fn.Name())
		return nil
	}
	var thunks []func() val
	if recv != nil && !recv.ptr {
		thunks = append(thunks, recv.arg)
	}
	for i := first; i < len(params); i++ {
		params[i].arg = args[i-first]
		if params[i].array {
			continue
		}
		if params[i].alias = b.blockArg(args[i-first]); params[i].alias != nil {
			continue
		}
		if _, isPtr := params[i].typ.Underlying().(*types.Pointer); isPtr {
			b.errorf(args[i-first].Pos(), "pointer parameters are not supported in kernels; return the new value instead, or make %s a method with a pointer receiver", fn.Name())
			return nil
		}
		a := args[i-first]
		thunks = append(thunks, func() val { return b.value(a) })
	}
	vals := b.evalList(thunks)
	if len(vals) != len(thunks) {
		return nil
	}

	assigned := b.fc.assignedIn(c.info, decl.Body)
	var written map[*ir.Var]bool // what the callee may write of the caller's locals
	if recv != nil && recv.ptr {
		written = map[*ir.Var]bool{}
		for _, v := range recv.vars {
			written[v] = true
		}
	}
	k := 0
	for pi, p := range params {
		if pi == 0 && recv != nil && recv.ptr {
			if p.obj != nil {
				fr.vars[p.obj] = &binding{ptr: true, vars: recv.vars}
			}
			continue
		}
		if p.alias != nil {
			if p.obj != nil {
				fr.vars[p.obj] = p.alias
			}
			continue
		}
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
		pos := x.Lparen
		if p.arg != nil {
			pos = p.arg.Pos()
		}
		if !b.bindParam(fr, p.obj, name, p.typ, v, pos, fn.Name(), assigned[p.obj], written) {
			return nil
		}
	}

	// Results.
	res := sig.Results()
	resTypes := make([]types.Type, res.Len())
	resLayouts := make([]*layout, res.Len())
	for i := range res.Len() {
		t := fr.subst(b.fc, res.At(i).Type())
		l, ok := b.resultLayout(t, decl, fn.Name())
		if !ok {
			return nil
		}
		resTypes[i], resLayouts[i] = t, l
	}
	saved, savedInfo, savedTop := b.fr, b.info, b.top
	b.fr, b.info = fr, c.info
	if c.lib {
		// The library's loops are never parallel, wherever it is called.
		b.top = false
	}
	defer func() { b.fr, b.info, b.top = saved, savedInfo, savedTop }()

	if out, ok := b.tailReturn(decl, res, resTypes, resLayouts, fn.Name()); ok {
		return out
	}
	for i := range res.Len() {
		name := res.At(i).Name()
		named := name != "" && name != "_"
		if !named {
			name = fn.Name()
		}
		vars := b.newLeaves(name, resLayouts[i])
		for _, v := range vars {
			b.emit(&ir.Decl{Pos: b.pos, Var: v})
		}
		fr.own(vars)
		fr.results = append(fr.results, result{t: resTypes[i], vars: vars})
		if named {
			fr.vars[res.At(i)] = localBinding(resTypes[i], vars)
		}
	}
	fr.retFor = &ir.For{Pos: b.pos}
	if earlyReturn(decl.Body.List, true) {
		// A return in the middle leaves this one-trip loop; loops inside it
		// are serial even when the call is at the kernel's top level.
		b.nested(inEarlyReturn, &fr.retFor.Body, func() { b.stmtList(decl.Body.List, true) })
		fr.retFor.Body = append(fr.retFor.Body, &ir.Break{Pos: fr.retFor.Pos, Loop: fr.retFor})
		b.emit(fr.retFor)
	} else {
		b.stmtList(decl.Body.List, true)
		if fr.retUsed {
			b.errorf(x.Pos(), "internal error: unexpected return placement in %s; please report this kernel", fn.Name())
		}
	}
	out := make([]val, len(fr.results))
	for i, r := range fr.results {
		out[i] = val{t: r.t, leaves: refs(r.vars)}
		for _, v := range r.vars {
			b.fresh[v] = true
		}
	}
	return out
}

// tailReturn translates a body whose one return is its last statement and
// whose results are unnamed, the form of most helpers: the returned values
// become the call's values without result locals. A leaf that is a local
// of the helper (or a result of a call it makes) is handed over to the
// caller, which may adopt it as the local it declares (declare); one that
// is a simple expression is returned as it is; any other is computed into
// a local first. It reports whether the body had that form.
func (b *builder) tailReturn(decl *ast.FuncDecl, res *types.Tuple, ts []types.Type, ls []*layout, name string) ([]val, bool) {
	body := decl.Body.List
	if len(body) == 0 || res.Len() == 0 || res.At(0).Name() != "" || b.fc.returns(decl) != 1 {
		return nil, false
	}
	r, ok := body[len(body)-1].(*ast.ReturnStmt)
	if !ok {
		return nil, false
	}
	b.stmtList(body[:len(body)-1], false)
	b.pos = b.at(r.Pos())
	var vals []val
	if len(r.Results) == 1 && res.Len() > 1 {
		if call, ok := ast.Unparen(r.Results[0]).(*ast.CallExpr); ok {
			vals = b.callVals(call)
		}
	} else {
		vals = b.valList(r.Results)
	}
	if len(vals) != res.Len() {
		out := make([]val, res.Len())
		for i := range out {
			out[i] = b.badVal(ts[i])
		}
		return out, true
	}
	out := make([]val, len(vals))
	handed := map[*ir.Var]bool{}
	for i, v := range vals {
		l := ls[i]
		if v.bad() || len(v.leaves) != l.size() {
			out[i] = b.badVal(ts[i])
			continue
		}
		out[i] = val{t: ts[i], leaves: make([]ir.Expr, l.size())}
		for j, e := range v.leaves {
			e = b.convertTo(l.types[j], e)
			if ref, isRef := e.(*ir.VarRef); isRef && (b.fr.owned[ref.Var] || b.fresh[ref.Var]) && !handed[ref.Var] {
				handed[ref.Var] = true
				b.fresh[ref.Var] = true
			} else if !isSimple(e) {
				nv := b.decl(name+l.names[j], e)
				b.fresh[nv] = true
				e = &ir.VarRef{Var: nv}
			}
			out[i].leaves[j] = e
		}
	}
	return out, true
}

// returns counts the return statements of decl.
func (fc *fileCtx) returns(decl *ast.FuncDecl) int {
	if n, ok := fc.nreturns[decl]; ok {
		return n
	}
	n := 0
	ast.Inspect(decl.Body, func(x ast.Node) bool {
		switch x.(type) {
		case *ast.ReturnStmt:
			n++
		case *ast.FuncLit:
			return false
		}
		return true
	})
	if fc.nreturns == nil {
		fc.nreturns = map[*ast.FuncDecl]int{}
	}
	fc.nreturns[decl] = n
	return n
}

// recvName is the name of a method's receiver type, for messages
// (Vec3 for func (a Vec3[T]) Add).
func recvName(sig *types.Signature) string {
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name()
	}
	return types.TypeString(t, nil)
}

// resultLayout checks a helper's result type.
func (b *builder) resultLayout(t types.Type, decl *ast.FuncDecl, name string) (*layout, bool) {
	p := decl.Type.Results.Pos()
	if isAggregate(t) {
		return b.valueLayout(t, p, "result of "+name)
	}
	it, ok := b.scalarType(t, p, "result of "+name)
	if !ok {
		return nil, false
	}
	return &layout{types: []ir.Type{it}, names: []string{""}, scalar: true}, true
}

// bindParam binds a value parameter of the frame fr to the argument v:
// directly to its leaves when the body never assigns the parameter and
// each leaf is a constant, a parameter or a local the callee cannot write
// (written: the caller's locals a pointer receiver lets it change), else
// to fresh locals holding a copy.
func (b *builder) bindParam(fr *frame, obj types.Object, name string, t types.Type, v val, p token.Pos, fname string, assigned bool, written map[*ir.Var]bool) bool {
	what := "parameter " + name + " of " + fname
	if isAggregate(t) {
		l, ok := b.valueLayout(t, p, what)
		if !ok {
			return false
		}
		v = b.convertVal(v, t, l)
		switch {
		case obj == nil:
			b.discardVal(v)
		case !assigned && allDirect(v.leaves, written):
			b.unfresh(v.leaves)
			fr.vars[obj] = &binding{ro: true, vals: v.leaves}
		default:
			vars := b.declLeaves(name, l, v, b.pos)
			fr.own(vars)
			fr.vars[obj] = &binding{agg: true, vars: vars}
		}
		return true
	}
	typ, ok := b.scalarType(t, p, what)
	if !ok {
		return false
	}
	e := b.convertTo(typ, v.scalar())
	switch {
	case obj == nil:
		b.discard(e)
	case !assigned && allDirect([]ir.Expr{e}, written):
		b.unfresh([]ir.Expr{e})
		fr.vars[obj] = &binding{val: e}
	default:
		v := b.decl(name, e)
		fr.own([]*ir.Var{v})
		fr.vars[obj] = &binding{v: v}
	}
	return true
}

// localBinding binds a local of type t held in vars.
func localBinding(t types.Type, vars []*ir.Var) *binding {
	if isAggregate(t) {
		return &binding{agg: true, vars: vars}
	}
	if len(vars) != 1 {
		return &binding{bad: true}
	}
	return &binding{v: vars[0]}
}

// allDirect reports whether every leaf can be read in place of a parameter
// that the helper never assigns: nothing the helper does can change it.
func allDirect(leaves []ir.Expr, written map[*ir.Var]bool) bool {
	for _, e := range leaves {
		switch e := e.(type) {
		case *ir.Const, *ir.ParamRef, *ir.Len:
		case *ir.VarRef:
			if written[e.Var] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// own records vars as locals of the frame: a tail return may hand them to
// the caller.
func (fr *frame) own(vars []*ir.Var) {
	if fr.owned == nil {
		fr.owned = map[*ir.Var]bool{}
	}
	for _, v := range vars {
		fr.owned[v] = true
	}
}

// unfresh withdraws the locals leaves read from adoption: they are now
// bound to a name (a parameter read in place), and a local adopting them
// would alias it.
func (b *builder) unfresh(leaves []ir.Expr) {
	for _, e := range leaves {
		if r, ok := e.(*ir.VarRef); ok {
			delete(b.fresh, r.Var)
		}
	}
}

// adopt returns the locals v's leaves read when they are all results
// handed over by calls, distinct and of the right types, so that a
// declaration can take them over instead of copying them (r := m.Inv()).
func (b *builder) adopt(v val, l *layout) ([]*ir.Var, bool) {
	if len(v.leaves) != l.size() || len(b.fresh) == 0 {
		return nil, false
	}
	vars := make([]*ir.Var, len(v.leaves))
	for i, e := range v.leaves {
		r, ok := e.(*ir.VarRef)
		if !ok || !b.fresh[r.Var] || r.Var.Type != l.types[i] {
			return nil, false
		}
		for _, w := range vars[:i] {
			if w == r.Var {
				return nil, false
			}
		}
		vars[i] = r.Var
	}
	for _, w := range vars {
		delete(b.fresh, w)
	}
	return vars, true
}
