package frontend

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// maxInlines bounds the helper calls inlined into one kernel: helpers that
// call each other several times each grow exponentially once inlined.
const maxInlines = 5000

// maxStmts bounds the statements translated for one kernel: inlining
// duplicates code, and nesting it grows it exponentially.
const maxStmts = 200000

// binding is what a Go variable stands for in the IR.
type binding struct {
	v     *ir.Var    // a scalar local: reads are VarRefs, assignments Assigns
	val   ir.Expr    // a read-only scalar value (kernel scalar parameter, bound helper argument)
	vars  []*ir.Var  // agg: the leaves of a local value; ptr: those the pointer points to
	vals  []ir.Expr  // ro: the leaves of a read-only value (a bound helper argument)
	agg   bool       // a local of struct or array type, in vars
	ro    bool       // a read-only value of struct or array type, in vals
	ptr   bool       // a pointer receiver, pointing to vars
	param *ir.Param  // an array (Dims > 0), or the kernel scalar parameter behind val
	idx3  []*ir.Var  // a qd.NDRange3 index: p.I, p.J, p.K
	blk   *blockCtx  // a qd.Blocks loop's block variable (blocks.go)
	pt    *perThread // a qd.PerThread value
	bad   bool       // a variable whose declaration failed: uses are not reported again
}

// target is a statement that break or continue may leave.
type target struct {
	label    *types.Label
	loop     bool    // continue is allowed
	parallel bool    // a ParallelFor: break is an error, continue leaves brk
	brk      *ir.For // what break leaves
	cont     *ir.For // what continue continues
	// contBrk, when set, is a one-trip loop around the body that continue
	// leaves instead (the body of a ParallelFor, which is not an ir.For, or
	// of a loop whose Post cannot live in ir.For.Post).
	contBrk *ir.For
	used    bool // a break of brk, or of contBrk, was emitted
	// usedBrk and usedCont say which: an unrolled loop wraps its
	// iterations only in the one-trip loops that are left.
	usedBrk, usedCont bool
}

// frame is one function being translated: the kernel, or an inlined helper.
type frame struct {
	fn       *types.Func // nil for the kernel
	name     string
	parent   *frame
	vars     map[types.Object]*binding
	results  []result
	retFor   *ir.For // one-trip wrapper a non-tail return breaks out of
	retUsed  bool
	targets  []*target
	callPos  token.Pos
	isKernel bool
	info     *types.Info // what go/types recorded about the function's source
	env      env         // the type arguments of a generic function or receiver
	tcache   map[types.Type]types.Type
	lib      bool             // a function of qd's value library
	userPos  ir.Pos           // in a library frame: the call in the kernel's file that led there
	owned    map[*ir.Var]bool // the frame's own locals (see tailReturn)
	// inLit counts the qd.Serial function literals being translated in
	// this frame: a return there ends the literal, not the function.
	inLit int
}

// result is a helper's result: the locals of its leaves.
type result struct {
	t    types.Type
	vars []*ir.Var
}

// builder translates one kernel.
type builder struct {
	name  string // the kernel's name in messages: saxpy, or saxpy[float64]
	fc    *fileCtx
	std   *stdlib
	info  *types.Info
	k     *ir.Kernel
	nvars int
	block *[]ir.Stmt
	fr    *frame
	pos   ir.Pos // position of the statements emitted next
	top   bool   // at the top level of the kernel or of a StreamParallel block
	inPar bool   // inside a parallel loop
	inSP  bool   // inside a StreamParallel block
	// serialIn, while top is false outside a parallel loop, is what made
	// the code serial: the statement where top turned false, or a
	// qd.Serial block. A range loop there is refused unless it is
	// inSerial (serial.go).
	serialIn serialCtx
	inlines  int
	nstmts   int
	nerrs    int
	// fresh are locals holding results that calls handed over and that
	// nothing names yet: a declaration may adopt them (see tailReturn).
	fresh   map[*ir.Var]bool
	libErrs map[ir.Pos]bool // calls into the library with an error reported
	// blockDim is the pending qd.LoopConfig(qd.BlockDim(n)) value and the
	// position of that call, consumed by the next parallel loop.
	blockDim    int
	blockDimPos token.Pos
	// blk is the qd.Blocks loop being translated (blocks.go); nshared
	// counts the kernel's shared arrays.
	blk       *blockCtx
	nshared   int
	sawBlocks bool // the kernel has a block loop: blockRulesHold checks it
}

// errorf reports an error at p. An error inside the value library is
// reported at the call in the kernel's file that led there, naming the
// library function and position, since that call is what the user can
// change.
func (b *builder) errorf(p token.Pos, format string, args ...any) {
	b.nerrs++
	if b.std.isLibPos(p) {
		var chain []string
		for f := b.fr; f != nil && f.lib; f = f.parent {
			chain = append(chain, "qd."+f.name)
		}
		// One error per call from the kernel's file: what follows inside
		// the library is the same problem again, or follows from it.
		if b.libErrs[b.fr.userPos] {
			return
		}
		if b.libErrs == nil {
			b.libErrs = map[ir.Pos]bool{}
		}
		b.libErrs[b.fr.userPos] = true
		msg := fmt.Sprintf(format, args...)
		if len(chain) > 0 {
			msg += fmt.Sprintf(" (in %s at %s", chain[0], b.std.libPos(p))
			if len(chain) > 1 {
				msg += ", called from " + strings.Join(chain[1:], " ← ")
			}
			msg += ")"
		}
		b.fc.errs.add(&ir.Error{Pos: b.fr.userPos, Kernel: b.name, Msg: msg})
		return
	}
	b.fc.errorf(p, b.name, format, args...)
}

// at is the position statements translated from source position p carry:
// p itself in the kernel's file; in the library, the call that led there.
func (b *builder) at(p token.Pos) ir.Pos {
	if b.std.isLibPos(p) {
		return b.fr.userPos
	}
	return b.fc.pos(p)
}

func (b *builder) emit(s ir.Stmt) { *b.block = append(*b.block, s) }

// into runs f with statements going to *dst.
func (b *builder) into(dst *[]ir.Stmt, f func()) {
	saved := b.block
	b.block = dst
	f()
	b.block = saved
}

// nested runs f for statements that are not at the top level (inside an if,
// a loop, a lazily evaluated operand): range loops there are serial. ctx
// says which, for the error a range loop there gets when the statement was
// at the top level.
func (b *builder) nested(ctx serialCtx, dst *[]ir.Stmt, f func()) {
	saved, savedIn := b.top, b.serialIn
	if b.top {
		b.serialIn = ctx
	}
	b.top = false
	b.into(dst, f)
	b.top, b.serialIn = saved, savedIn
}

func (b *builder) newVar(name string, t ir.Type) *ir.Var {
	b.nvars++
	return &ir.Var{Name: name, Type: t, ID: b.nvars}
}

// decl emits a declaration of a fresh local set to init.
func (b *builder) decl(name string, init ir.Expr) *ir.Var {
	v := b.newVar(name, init.Type())
	b.emit(&ir.Decl{Pos: b.pos, Var: v, Init: init})
	return v
}

// spill evaluates e into a temporary now, so that later statements cannot
// change or repeat its effect.
func (b *builder) spill(e ir.Expr) ir.Expr {
	return &ir.VarRef{Var: b.decl("tmp", e)}
}

// lookup finds the binding of obj in the current frame.
func (b *builder) lookup(obj types.Object) *binding {
	if obj == nil {
		return nil
	}
	return b.fr.vars[obj]
}

// buildKernel translates the kernel fd, or reports why it cannot. For a
// generic kernel, name is the instance's name (saxpy[float64]), which
// messages use, and e binds its type parameters; the IR's name must be an
// identifier, so the instance is saxpy_float64 there (irName).
func (fc *fileCtx) buildKernel(fd *ast.FuncDecl, name string, e env) *ir.Kernel {
	fn, _ := fc.info.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return nil
	}
	b := &builder{name: name, fc: fc, std: fc.std, info: fc.info, top: true, fresh: map[*ir.Var]bool{}}
	b.k = &ir.Kernel{Name: irName(name), Pos: fc.pos(fd.Pos())}
	b.block = &b.k.Body
	b.fr = &frame{fn: fn, name: fd.Name.Name, vars: map[types.Object]*binding{}, isKernel: true, info: fc.info, env: e}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() > 0 {
		b.errorf(fd.Type.Results.Pos(), "kernel %s cannot return values; write results to an array parameter", fd.Name.Name)
	}
	b.params(fd)
	b.checkStreamParallelPlacement(fd.Body.List)
	b.pos = fc.pos(fd.Body.Pos())
	b.kernelBody(fd.Body.List)
	if b.nerrs > 0 || b.sawBlocks && !b.blockRulesHold() {
		return nil
	}
	return b.k
}

// params declares the kernel's parameters. A parameter refused here is
// bound as bad, so that its uses report nothing more: the one error says
// what to write instead.
func (b *builder) params(fd *ast.FuncDecl) {
	for _, field := range fd.Type.Params.List {
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{nil}
		}
		for _, id := range names {
			p := field.Type.Pos()
			name := fmt.Sprintf("_%d", len(b.k.Params))
			var obj types.Object
			if id != nil {
				p, name, obj = id.Pos(), id.Name, b.info.Defs[id]
			}
			fail := func() {
				if obj != nil {
					b.fr.vars[obj] = &binding{bad: true}
				}
			}
			t := b.typ(field.Type)
			if _, ok := field.Type.(*ast.Ellipsis); ok {
				b.errorf(p, "variadic parameter %s is not supported; use an array parameter []T", name)
				fail()
				continue
			}
			elem, rec, dims, ok := b.arrayOrScalar(t, p, "parameter "+name)
			if !ok {
				fail()
				continue
			}
			prm := &ir.Param{Name: name, Elem: elem, Rec: rec, Dims: dims, Index: len(b.k.Params), Pos: b.fc.pos(p),
				GoType: types.TypeString(t, types.RelativeTo(b.fc.pkg))}
			b.k.Params = append(b.k.Params, prm)
			if obj == nil {
				continue
			}
			if dims > 0 {
				b.fr.vars[obj] = &binding{param: prm}
			} else {
				b.fr.vars[obj] = &binding{val: &ir.ParamRef{Param: prm}, param: prm}
			}
		}
	}
}

// arrayOrScalar classifies a parameter type: a scalar (dims 0) or a slice of
// 1 to ir.MaxDims (4) dimensions of a scalar element or of a record (a struct or fixed
// array element, in Go's layout: records.go). Struct and fixed-array
// scalars, outside an array, are refused with what to pass instead.
func (b *builder) arrayOrScalar(t types.Type, p token.Pos, what string) (ir.Type, *ir.Record, int, bool) {
	dims := 0
	whole := t
	for {
		s, ok := types.Unalias(t).(*types.Slice)
		if !ok {
			break
		}
		dims++
		t = s.Elem()
	}
	if dims > ir.MaxDims {
		b.errorf(p, "%s has %d dimensions; arrays have 1 to %d ([]T, [][]T, [][][]T, [][][][]T)", what, dims, ir.MaxDims)
		return ir.Invalid, nil, 0, false
	}
	if isAggregate(t) {
		if dims > 0 {
			rec, ok := b.recordParamType(t, whole, p, what)
			return ir.Invalid, rec, dims, ok
		}
		b.errorf(p, "%s has type %s: struct and fixed-size array parameters are not supported yet; pass each field or component as its own parameter, or a one-element array []%s",
			what, b.fc.typeString(whole), b.fc.typeString(whole))
		return ir.Invalid, nil, 0, false
	}
	et, ok := b.scalarType(t, p, what)
	return et, nil, dims, ok
}

// kernelBody translates the top level of the kernel.
func (b *builder) kernelBody(list []ast.Stmt) {
	b.stmtList(list, false)
}

// checkStreamParallelPlacement reports top-level statements mixed with
// qd.StreamParallel blocks. Nesting and use under if/for or in helpers are
// reported where the call is translated.
func (b *builder) checkStreamParallelPlacement(list []ast.Stmt) {
	var sp []ast.Stmt
	for _, s := range list {
		if b.isStreamParallelStmt(s) {
			sp = append(sp, s)
		}
	}
	if len(sp) == 0 {
		return
	}
	for i, s := range list {
		if b.isStreamParallelStmt(s) {
			continue
		}
		if _, ok := s.(*ast.EmptyStmt); ok {
			continue
		}
		if r, ok := s.(*ast.ReturnStmt); ok && i == len(list)-1 && len(r.Results) == 0 {
			continue
		}
		b.errorf(s.Pos(), "when a kernel uses qd.StreamParallel, every top-level statement must be a qd.StreamParallel block (first block at %s); move this statement into a block, or into a separate kernel",
			b.fc.pos(sp[0].Pos()))
	}
}

// isStreamParallelStmt reports whether s is a call of qd.StreamParallel.
func (b *builder) isStreamParallelStmt(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := ast.Unparen(es.X).(*ast.CallExpr)
	return ok && b.apiOf(call.Fun).kind == apiStreamParallel
}

// apiOf returns what the function named by fun is in the kernel API
// (apiNone for anything else), by its resolved object.
func (b *builder) apiOf(fun ast.Expr) apiFunc {
	fn := b.funcOf(fun)
	if fn == nil {
		return apiFunc{}
	}
	return b.std.funcs[fn.Origin()]
}

// funcOf returns the function that fun names (an identifier or a qualified
// identifier, possibly instantiated), or nil.
func (b *builder) funcOf(fun ast.Expr) *types.Func {
	fun = ast.Unparen(fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if _, isSel := b.info.Selections[f]; isSel {
			return nil // a method or field
		}
		id = f.Sel
	default:
		return nil
	}
	fn, _ := b.info.Uses[id].(*types.Func)
	return fn
}

// basicType maps a Go type to an IR scalar type when kernels support it.
func basicType(t types.Type) (ir.Type, bool) {
	if t == nil {
		return ir.Invalid, false
	}
	if _, ok := t.(*types.TypeParam); ok {
		return ir.Invalid, false
	}
	u, ok := t.Underlying().(*types.Basic)
	if !ok {
		return ir.Invalid, false
	}
	switch u.Kind() {
	case types.Bool, types.UntypedBool:
		return ir.Bool, true
	case types.Int, types.Int64, types.UntypedInt:
		return ir.I64, true
	case types.Int32, types.UntypedRune:
		return ir.I32, true
	case types.Uint, types.Uint64:
		return ir.U64, true
	case types.Uint32:
		return ir.U32, true
	case types.Int8:
		return ir.I8, true
	case types.Int16:
		return ir.I16, true
	case types.Uint8:
		return ir.U8, true
	case types.Uint16:
		return ir.U16, true
	case types.Float32:
		return ir.F32, true
	case types.Float64, types.UntypedFloat:
		return ir.F64, true
	}
	return ir.Invalid, false
}

// scalarType maps a Go type to an IR scalar type, reporting unsupported ones
// with what kernels support instead.
func (b *builder) scalarType(t types.Type, p token.Pos, what string) (ir.Type, bool) {
	if it, ok := basicType(t); ok {
		return it, true
	}
	if t == nil {
		b.errorf(p, "%s has no type", what)
		return ir.Invalid, false
	}
	if tp, ok := t.(*types.TypeParam); ok {
		b.errorf(p, "internal error: %s has type %s, a type parameter left uninstantiated; please report this kernel", what, tp)
		return ir.Invalid, false
	}
	t = types.Unalias(t)
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.String, types.UntypedString:
			b.errorf(p, "%s has type %s; strings are not supported in kernels", what, b.fc.typeString(t))
		case types.Complex64, types.Complex128, types.UntypedComplex:
			b.errorf(p, "%s has type %s; complex numbers are not supported in kernels: use two float arrays", what, b.fc.typeString(t))
		case types.UntypedNil:
			b.errorf(p, "nil is not supported in kernels")
		case types.Invalid:
			b.errorf(p, "%s has an invalid type", what)
		default:
			b.errorf(p, "%s has type %s, which kernels do not support; use bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32 or float64", what, b.fc.typeString(t))
		}
	case *types.Slice:
		b.errorf(p, "%s has array type %s; arrays are only supported as parameters ([]T, [][]T, [][][]T), not as locals or results", what, b.fc.typeString(t))
	case *types.Array:
		b.errorf(p, "%s has fixed-size array type %s where kernels need a scalar (a bool, an integer or a float)", what, b.fc.typeString(t))
	case *types.Pointer:
		b.errorf(p, "%s has pointer type %s; pointers are not supported in kernels (only &x[i] as the first argument of a qd atomic)", what, b.fc.typeString(t))
	case *types.Map:
		b.errorf(p, "%s has map type %s; maps are not supported in kernels", what, b.fc.typeString(t))
	case *types.Chan:
		b.errorf(p, "%s has channel type %s; channels are not supported in kernels", what, b.fc.typeString(t))
	case *types.Struct:
		b.errorf(p, "%s has struct type %s where kernels need a scalar (a bool, an integer or a float)", what, b.fc.typeString(t))
	case *types.Interface:
		b.errorf(p, "%s has interface type %s; interfaces are not supported in kernels", what, b.fc.typeString(t))
	case *types.Signature:
		b.errorf(p, "%s has function type %s; function values are not supported in kernels: call the function directly", what, b.fc.typeString(t))
	default:
		b.errorf(p, "%s has type %s, which kernels do not support", what, b.fc.typeString(t))
	}
	return ir.Invalid, false
}

// typeOf maps the type of the expression e. It describes e only for an
// error: rendering every subexpression of a long chain x+1+1+... made
// compiling it quadratic in its length.
func (b *builder) typeOf(e ast.Expr) (ir.Type, bool) {
	t := b.typ(e)
	if it, ok := basicType(t); ok {
		return it, true
	}
	return b.scalarType(t, e.Pos(), "expression "+shortExpr(e))
}

// shortExpr renders e for messages, shortened.
func shortExpr(e ast.Expr) string {
	s := types.ExprString(e)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
