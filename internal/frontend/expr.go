package frontend

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// bad is the placeholder for an expression that could not be translated: an
// error has been reported and the kernel will be dropped.
func bad() ir.Expr { return &ir.Const{T: ir.Invalid} }

// expr translates an expression that yields one scalar. Statements it needs
// (inlined calls) are emitted first.
func (b *builder) expr(e ast.Expr) ir.Expr {
	if tv, ok := b.info.Types[e]; ok && tv.Value != nil {
		return b.constant(tv, e.Pos())
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return b.expr(x.X)
	case *ast.Ident:
		return b.ident(x)
	case *ast.BasicLit:
		return b.constant(b.info.Types[e], e.Pos())
	case *ast.BinaryExpr:
		return b.binary(x)
	case *ast.UnaryExpr:
		return b.unary(x)
	case *ast.IndexExpr:
		if bd, isPT := b.perThreadIndex(x); isPT { // blocks.go
			if bd == nil || bd.v == nil {
				return bad()
			}
			return &ir.VarRef{Var: bd.v}
		}
		if b.isLocalIndex(x.X) {
			return b.indexVal(x).scalar()
		}
		return b.load(x)
	case *ast.CallExpr:
		vals := b.callVals(x)
		if len(vals) != 1 {
			if len(vals) > 1 {
				b.errorf(x.Pos(), "%s returns %d values where one is needed", shortExpr(x.Fun), len(vals))
			} else if b.nerrs == 0 {
				b.errorf(x.Pos(), "%s returns no value", shortExpr(x.Fun))
			}
			return bad()
		}
		return vals[0].scalar()
	case *ast.SelectorExpr:
		return b.selector(x)
	case *ast.StarExpr:
		vars, ok := b.pointee(x.X, x.Pos())
		if !ok || len(vars) != 1 {
			return bad()
		}
		return &ir.VarRef{Var: vars[0]}
	case *ast.FuncLit:
		b.errorf(x.Pos(), "function literals (closures) are not supported in kernels, except as the argument of qd.StreamParallel or qd.Serial")
	case *ast.CompositeLit:
		b.composite(x, b.typ(x)) // reports what is wrong
	case *ast.SliceExpr:
		b.errorf(x.Pos(), "slicing is not supported in kernels; pass the whole array and index it")
	case *ast.TypeAssertExpr:
		b.errorf(x.Pos(), "type assertions are not supported in kernels (interfaces are not supported)")
	case *ast.IndexListExpr:
		b.errorf(x.Pos(), "function values are not supported in kernels; call %s directly", shortExpr(x))
	default:
		b.errorf(e.Pos(), "this expression is not supported in kernels")
	}
	return bad()
}

// value translates an expression of any kernel type: a scalar, or a struct
// or array value as its leaves.
func (b *builder) value(e ast.Expr) val {
	t := b.typ(e)
	if !isAggregate(t) {
		return scalarVal(t, b.expr(e))
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return b.value(x.X)
	case *ast.Ident:
		return b.identVal(x, t)
	case *ast.CompositeLit:
		return b.composite(x, t)
	case *ast.SelectorExpr:
		return b.selectorVal(x, t)
	case *ast.IndexExpr:
		if bd, isPT := b.perThreadIndex(x); isPT {
			if bd == nil {
				return b.badVal(t)
			}
			return bindingVal(bd, t)
		}
		if b.isLocalIndex(x.X) {
			return b.indexVal(x)
		}
		if b.isRecordAccess(x) {
			return b.recordVal(x)
		}
		b.load(x) // reports what is wrong
		return b.badVal(t)
	case *ast.CallExpr:
		vals := b.callVals(x)
		if len(vals) == 1 {
			return vals[0]
		}
		if len(vals) > 1 {
			b.errorf(x.Pos(), "%s returns %d values where one is needed", shortExpr(x.Fun), len(vals))
		}
		return b.badVal(t)
	case *ast.StarExpr:
		vars, ok := b.pointee(x.X, x.Pos())
		if !ok {
			return b.badVal(t)
		}
		return val{t: t, leaves: refs(vars)}
	}
	b.expr(e) // reports what is wrong
	return b.badVal(t)
}

// selectorVal reads the field x of a value (or of what a pointer receiver
// points to).
func (b *builder) selectorVal(x *ast.SelectorExpr, t types.Type) val {
	sel, ok := b.info.Selections[x]
	if !ok || sel.Kind() != types.FieldVal {
		b.selector(x) // reports what is wrong
		return b.badVal(t)
	}
	if b.isRecordAccess(x) {
		return b.recordVal(x)
	}
	bt := b.typ(x.X)
	base := b.operandVal(x.X, bt)
	if p, isPtr := bt.Underlying().(*types.Pointer); isPtr {
		bt = p.Elem()
	}
	off, n, _, ok := b.fieldPath(bt, sel.Index())
	if !ok {
		return b.badVal(t)
	}
	return b.project(base, t, off, n)
}

// indexVal reads an element of a local array value.
func (b *builder) indexVal(x *ast.IndexExpr) val {
	if b.isRecordAccess(x) {
		return b.recordVal(x)
	}
	t := b.typ(x)
	at := b.typ(x.X)
	base := b.operandVal(x.X, at)
	if p, isPtr := at.Underlying().(*types.Pointer); isPtr {
		at = p.Elem()
	}
	al, ok := b.layoutOr(at, x.X.Pos(), func() string { return "array " + shortExpr(x.X) })
	if !ok {
		return b.badVal(t)
	}
	el, _ := b.fc.layoutOf(t)
	if el == nil {
		return b.badVal(t)
	}
	idx := b.expr(x.Index)
	if !idx.Type().IsInteger() {
		if idx.Type() != ir.Invalid {
			b.errorf(x.Index.Pos(), "array index must be an integer")
		}
		return b.badVal(t)
	}
	return b.elementOf(base, idx, t, el, al.length, x.Index.Pos())
}

// exprList translates scalar operands evaluated in order (see evalList).
func (b *builder) exprList(es []ast.Expr) []ir.Expr {
	vals := b.valList(es)
	out := make([]ir.Expr, len(vals))
	for i, v := range vals {
		out[i] = v.scalar()
	}
	return out
}

// valList translates operands of any type evaluated in order.
func (b *builder) valList(es []ast.Expr) []val {
	return b.evalN(len(es), func(i int) val { return b.value(es[i]) })
}

// evalList evaluates the operands fs in order (see evalN).
func (b *builder) evalList(fs []func() val) []val {
	return b.evalN(len(fs), func(i int) val { return fs[i]() })
}

// evalN evaluates n operands in order, f(i) the i'th. Go evaluates the calls of an
// expression left to right; inlined calls emit statements, so an earlier
// operand's leaf is spilled to a temporary before a later operand's
// statements run when it holds an atomic (a call in Go) or reads a local
// those statements assign (a method with a pointer receiver can change the
// caller's locals: in v.X() + v.Inc() the first call's result is the value
// before the second).
func (b *builder) evalN(n int, f func(i int) val) []val {
	vals := make([]val, n)
	if n == 1 {
		// One operand: nothing to order.
		vals[0] = f(0)
		return vals
	}
	pres := make([][]ir.Stmt, n)
	last := -1
	saved := b.block
	for i := range n {
		b.block = &pres[i]
		vals[i] = f(i)
		if len(pres[i]) > 0 {
			last = i
		}
	}
	b.block = saved
	// later holds the locals the statements of the operands after i assign.
	var spillVar [][]bool
	if last > 0 {
		spillVar = make([][]bool, n)
		later := map[*ir.Var]bool{}
		for i := last; i >= 0; i-- {
			if len(later) > 0 {
				for j, l := range vals[i].leaves {
					if readsAny(l, later) {
						if spillVar[i] == nil {
							spillVar[i] = make([]bool, len(vals[i].leaves))
						}
						spillVar[i][j] = true
					}
				}
			}
			assignedVars(pres[i], later)
		}
	}
	for i := range n {
		*b.block = append(*b.block, pres[i]...)
		if i >= last {
			continue
		}
		for j, l := range vals[i].leaves {
			if hasAtomic(l) || spillVar != nil && spillVar[i] != nil && spillVar[i][j] {
				vals[i].leaves[j] = b.spill(l)
			}
		}
	}
	return vals
}

// assignedVars adds to set the locals that list assigns.
func assignedVars(list []ir.Stmt, set map[*ir.Var]bool) {
	ir.Inspect(list, func(n ir.Node) bool {
		if a, ok := n.(*ir.Assign); ok {
			set[a.Var] = true
		}
		return true
	})
}

// readsAny reports whether e reads a local of set.
func readsAny(e ir.Expr, set map[*ir.Var]bool) bool {
	found := false
	ir.InspectExpr(e, func(n ir.Node) bool {
		if r, ok := n.(*ir.VarRef); ok && set[r.Var] {
			found = true
		}
		return !found
	})
	return found
}

// logical builds x && y or x || y, where f translates y. When y needs
// statements they run only when Go would evaluate y: the result goes
// through a temporary set under an if.
func (b *builder) logical(op ir.BinOp, x ir.Expr, f func() ir.Expr) ir.Expr {
	var pre []ir.Stmt
	var y ir.Expr
	b.nested(inOperand, &pre, func() { y = f() })
	if len(pre) == 0 {
		return foldBinary(ir.NewBinary(op, x, y))
	}
	t := b.decl("cond", x)
	var c ir.Expr = &ir.VarRef{Var: t}
	if op == ir.LOr {
		c = &ir.Unary{Op: ir.Not, X: c}
	}
	b.emit(&ir.If{Pos: b.pos, Cond: c, Then: append(pre, &ir.Assign{Pos: b.pos, Var: t, Value: y})})
	return &ir.VarRef{Var: t}
}

var binOps = map[token.Token]ir.BinOp{
	token.ADD: ir.Add, token.SUB: ir.Sub, token.MUL: ir.Mul, token.QUO: ir.Div, token.REM: ir.Rem,
	token.AND: ir.And, token.OR: ir.Or, token.XOR: ir.Xor, token.AND_NOT: ir.AndNot,
	token.SHL: ir.Shl, token.SHR: ir.Shr,
	token.EQL: ir.Eq, token.NEQ: ir.Ne, token.LSS: ir.Lt, token.LEQ: ir.Le, token.GTR: ir.Gt, token.GEQ: ir.Ge,
	token.LAND: ir.LAnd, token.LOR: ir.LOr,
}

func (b *builder) binary(x *ast.BinaryExpr) ir.Expr {
	op, ok := binOps[x.Op]
	if !ok {
		b.errorf(x.OpPos, "operator %s is not supported in kernels", x.Op)
		return bad()
	}
	if op.IsLogical() {
		l := b.expr(x.X)
		return b.logical(op, l, func() ir.Expr { return b.expr(x.Y) })
	}
	if (op == ir.Eq || op == ir.Ne) && isAggregate(b.typ(x.X)) {
		vals := b.valList([]ast.Expr{x.X, x.Y})
		return b.valEqual(vals[0], vals[1], op == ir.Ne, x.OpPos)
	}
	if _, ok := b.typeOf(x); !ok {
		return bad()
	}
	vals := b.exprList([]ast.Expr{x.X, x.Y})
	l, r := vals[0], vals[1]
	if !op.IsShift() {
		// Untyped constant operands take the other operand's type.
		if _, c := l.(*ir.Const); c {
			l = b.convertTo(r.Type(), l)
		} else {
			r = b.convertTo(l.Type(), r)
		}
	}
	if !b.checkOperands(op, l.Type(), r.Type(), x.OpPos) {
		return bad()
	}
	return arith(op, l, r)
}

// checkOperands rejects operand types the IR does not define op for; Go's
// type checker has already rejected most.
func (b *builder) checkOperands(op ir.BinOp, x, y ir.Type, p token.Pos) bool {
	if x == ir.Invalid || y == ir.Invalid {
		return false
	}
	switch {
	case op.IsShift():
		if !x.IsInteger() || !y.IsInteger() {
			b.errorf(p, "shifts need integer operands")
			return false
		}
	case op == ir.Rem || op == ir.And || op == ir.Or || op == ir.Xor || op == ir.AndNot:
		if !x.IsInteger() {
			b.errorf(p, "operator needs integer operands")
			return false
		}
	case op == ir.Add || op == ir.Sub || op == ir.Mul || op == ir.Div || op == ir.Lt || op == ir.Le || op == ir.Gt || op == ir.Ge:
		if !x.IsNumeric() {
			b.errorf(p, "operator needs numeric operands")
			return false
		}
	}
	return true
}

func (b *builder) unary(x *ast.UnaryExpr) ir.Expr {
	switch x.Op {
	case token.AND:
		b.errorf(x.Pos(), "& is only supported as &x[i], the first argument of a qd atomic (qd.AtomicAdd(&x[i], v))")
		return bad()
	case token.ARROW:
		b.errorf(x.Pos(), "channel receives are not supported in kernels")
		return bad()
	}
	v := b.expr(x.X)
	t := v.Type()
	switch x.Op {
	case token.ADD:
		return v
	case token.SUB:
		if t.IsNumeric() {
			return arithUnary(ir.Neg, v)
		}
	case token.NOT:
		if t == ir.Bool {
			return foldUnary(&ir.Unary{Op: ir.Not, X: v})
		}
	case token.XOR:
		if t.IsInteger() {
			return arithUnary(ir.BitNot, v)
		}
	}
	if t != ir.Invalid {
		b.errorf(x.Pos(), "operator %s is not supported on %s in kernels", x.Op, t)
	}
	return bad()
}

// ident reads a variable or parameter.
func (b *builder) ident(x *ast.Ident) ir.Expr {
	obj := b.info.Uses[x]
	if bd := b.lookup(obj); bd != nil {
		switch {
		case bd.bad:
		case bd.v != nil:
			return &ir.VarRef{Var: bd.v}
		case bd.val != nil:
			return bd.val
		case bd.idx3 != nil:
			b.errorf(x.Pos(), "%s is a qd.NDRange3 index; use its fields %s.I, %s.J and %s.K", x.Name, x.Name, x.Name, x.Name)
		case bd.agg || bd.ro:
			b.errorf(x.Pos(), "%s has type %s, which cannot be used here; use its fields or elements", x.Name, b.fc.typeString(b.typ(x)))
		case bd.ptr:
			b.errorf(x.Pos(), "%s is a pointer; kernels use pointers only as method receivers: write *%s to copy the value", x.Name, x.Name)
		case bd.param != nil && bd.param.IsShared():
			b.errorf(x.Pos(), "shared array %s can only be indexed (%s[i]) or measured (len(%s))", x.Name, x.Name, x.Name)
		case bd.param != nil:
			b.errorf(x.Pos(), "array %s can only be indexed (%s[i]), measured (len(%s)) or passed to a helper function", x.Name, x.Name, x.Name)
		case bd.blk != nil:
			b.errorf(x.Pos(), "%s is a qd.Block: use b.Index(), b.Size() or range over b.Threads()", x.Name)
		case bd.pt != nil:
			b.errorf(x.Pos(), "%s is a per-thread value: read or write %s[t] inside a thread loop, or combine the threads' values with qd.BlockSum", x.Name, x.Name)
		}
		return bad()
	}
	switch o := obj.(type) {
	case *types.Var:
		if o.Pkg() != nil && o.Parent() == o.Pkg().Scope() {
			b.errorf(x.Pos(), "package-level variable %s cannot be used in kernels; pass it as a parameter or declare it const", x.Name)
		} else {
			b.errorf(x.Pos(), "%s cannot be used here", x.Name)
		}
	case *types.Func:
		b.errorf(x.Pos(), "function values are not supported in kernels; call %s directly", x.Name)
	case *types.Nil:
		b.errorf(x.Pos(), "nil is not supported in kernels")
	case *types.Const:
		b.errorf(x.Pos(), "constant %s has an invalid value", x.Name)
	default:
		b.errorf(x.Pos(), "%s cannot be used as a value in kernels", x.Name)
	}
	return bad()
}

// selector translates a selector of one scalar: a field of a value, or p.I
// of a qd.NDRange3 index; qualified constants have been folded already.
func (b *builder) selector(x *ast.SelectorExpr) ir.Expr {
	if sel, ok := b.info.Selections[x]; ok {
		if f, ok := sel.Obj().(*types.Var); ok {
			if d, ok := b.std.index3Fields[f]; ok {
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok {
					if bd := b.lookup(b.info.Uses[id]); bd != nil && bd.idx3 != nil && d < len(bd.idx3) {
						return &ir.VarRef{Var: bd.idx3[d]}
					}
				}
				b.errorf(x.Pos(), "qd.Index3 values are only supported as the variable of a qd.NDRange3 loop")
				return bad()
			}
		}
		if sel.Kind() == types.FieldVal {
			return b.selectorVal(x, b.typ(x)).scalar()
		}
		b.errorf(x.Pos(), "method values are not supported in kernels; call the method: %s(...)", shortExpr(x))
		return bad()
	}
	if _, ok := b.info.Uses[x.Sel].(*types.Func); ok {
		b.errorf(x.Pos(), "function values are not supported in kernels; call %s directly", shortExpr(x))
		return bad()
	}
	b.errorf(x.Pos(), "%s cannot be used in kernels", shortExpr(x))
	return bad()
}

// arrayIndexBase resolves an array parameter, possibly partly indexed
// (x, x[i], x[i][j]), returning the index operands.
func (b *builder) arrayIndexBase(e ast.Expr) (*ir.Param, []ast.Expr, bool) {
	var idx []ast.Expr
	e = ast.Unparen(e)
	for {
		ix, ok := e.(*ast.IndexExpr)
		if !ok {
			break
		}
		idx = append([]ast.Expr{ix.Index}, idx...)
		e = ast.Unparen(ix.X)
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		if n := b.nerrs; b.expr(e) != nil && b.nerrs == n {
			b.errorf(e.Pos(), "only array parameters can be indexed in kernels")
		}
		return nil, nil, false
	}
	bd := b.lookup(b.info.Uses[id])
	if bd != nil && bd.bad {
		return nil, nil, false
	}
	if bd == nil || bd.param == nil || bd.param.Dims == 0 {
		if t := b.info.TypeOf(id); t != nil {
			switch t.Underlying().(type) {
			case *types.Map:
				b.errorf(id.Pos(), "maps are not supported in kernels")
				return nil, nil, false
			case *types.Basic:
				if isString(t) {
					b.errorf(id.Pos(), "strings are not supported in kernels")
					return nil, nil, false
				}
			}
		}
		b.errorf(id.Pos(), "%s is not an array parameter; only array parameters ([]T, [][]T, [][][]T) can be indexed in kernels", id.Name)
		return nil, nil, false
	}
	if len(idx) > bd.param.Dims {
		b.errorf(e.Pos(), "%s has %d dimensions but is indexed %d times", id.Name, bd.param.Dims, len(idx))
		return nil, nil, false
	}
	return bd.param, idx, true
}

func isString(t types.Type) bool {
	bt, ok := t.Underlying().(*types.Basic)
	return ok && bt.Info()&types.IsString != 0
}

// arrayIndex resolves an indexed array element or row.
func (b *builder) arrayIndex(x *ast.IndexExpr) (*ir.Param, []ast.Expr, bool) {
	return b.arrayIndexBase(x)
}

// load reads an array element.
func (b *builder) load(x *ast.IndexExpr) ir.Expr {
	if _, ok := b.typ(x).(*types.Signature); ok {
		b.errorf(x.Pos(), "function values are not supported in kernels; call %s directly", shortExpr(x))
		return bad()
	}
	if b.isRecordAccess(x) {
		return b.recordVal(x).scalar()
	}
	p, idx, ok := b.arrayIndex(x)
	if !ok {
		return bad()
	}
	if len(idx) != p.Dims {
		b.errorf(x.Pos(), "%s is a row of the %d-dimensional array %s; index all %d dimensions to read an element",
			shortExpr(x), p.Dims, p.Name, p.Dims)
		return bad()
	}
	vals := b.exprList(idx)
	for i, v := range vals {
		if !v.Type().IsInteger() && v.Type() != ir.Invalid {
			b.errorf(idx[i].Pos(), "array index must be an integer")
			return bad()
		}
	}
	return &ir.Load{Array: p, Index: vals}
}

// constant turns a constant of go/types into an ir.Const of its type
// (untyped constants take their default type).
func (b *builder) constant(tv types.TypeAndValue, p token.Pos) ir.Expr {
	if tv.Type == nil || tv.Value == nil {
		b.errorf(p, "invalid constant")
		return bad()
	}
	t, ok := b.scalarType(types.Default(b.subst(tv.Type)), p, "constant "+tv.Value.ExactString())
	if !ok {
		return bad()
	}
	c, ok := constValue(tv.Value, t)
	if !ok {
		b.errorf(p, "constant %s does not fit in %s", tv.Value.ExactString(), t)
		return bad()
	}
	return c
}

// constValue encodes v as a constant of type t.
func constValue(v constant.Value, t ir.Type) (*ir.Const, bool) {
	switch t {
	case ir.Bool:
		if v.Kind() != constant.Bool {
			return nil, false
		}
		return ir.BoolC(constant.BoolVal(v)).(*ir.Const), true
	case ir.F32, ir.F64:
		// Rounded once, from the exact value: a constant converted to a
		// type parameter (T(1+1e-10)) reaches here unrounded, and rounding
		// it to float64 first could round it twice.
		if v.Kind() != constant.Int && v.Kind() != constant.Float {
			return nil, false
		}
		if t == ir.F32 {
			f, _ := constant.Float32Val(constant.ToFloat(v))
			return ir.F32c(f).(*ir.Const), true
		}
		f, _ := constant.Float64Val(constant.ToFloat(v))
		return ir.F64c(f).(*ir.Const), true
	}
	iv := constant.ToInt(v)
	if iv.Kind() != constant.Int {
		return nil, false
	}
	if t.IsUnsigned() {
		u, exact := constant.Uint64Val(iv)
		if !exact || u != truncBits(t, u) {
			return nil, false
		}
		return &ir.Const{T: t, Bits: u}, true
	}
	i, exact := constant.Int64Val(iv)
	if !exact || uint64(i) != truncBits(t, uint64(i)) {
		return nil, false
	}
	return &ir.Const{T: t, Bits: uint64(i)}, true
}

// convertConst re-encodes a constant as type t (an untyped constant meeting
// a typed operand), with Go's conversion semantics.
func convertConst(c *ir.Const, t ir.Type) ir.Expr {
	switch {
	case c.T == t:
		return c
	case t == ir.Bool || c.T == ir.Bool:
		return c
	case t.IsFloat() && c.T.IsFloat():
		if t == ir.F32 {
			return ir.F32c(float32(c.Float()))
		}
		return ir.F64c(c.Float())
	case t.IsFloat():
		f := float64(c.Int())
		if c.T.IsUnsigned() {
			f = float64(c.Bits)
		}
		if t == ir.F32 {
			return ir.F32c(float32(f))
		}
		return ir.F64c(f)
	case c.T.IsFloat():
		return &ir.Convert{To: t, X: c}
	}
	bits := c.Bits
	switch t {
	case ir.I32:
		bits = uint64(int64(int32(bits)))
	default:
		bits = truncBits(t, bits)
	}
	return &ir.Const{T: t, Bits: bits}
}

// intConst returns the value of an integer constant expression.
func (b *builder) intConst(e ast.Expr) (int64, bool) {
	tv, ok := b.info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	v := constant.ToInt(tv.Value)
	if v.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(v)
}

// isPure reports whether e reads nothing a helper or a store could change:
// it may be evaluated later, or twice.
func isPure(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Const, *ir.ParamRef, *ir.Len:
		return true
	case *ir.Convert:
		return isPure(e.X)
	case *ir.Unary:
		return isPure(e.X)
	case *ir.Binary:
		return isPure(e.X) && isPure(e.Y)
	}
	return false
}

// isSimple reports whether e is cheap and free of effects to evaluate twice
// at the same point: no loads, atomics or calls.
func isSimple(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Const, *ir.ParamRef, *ir.Len, *ir.VarRef:
		return true
	case *ir.Convert:
		return isSimple(e.X)
	case *ir.Unary:
		return isSimple(e.X)
	case *ir.Binary:
		return isSimple(e.X) && isSimple(e.Y)
	}
	return false
}

// hasAtomic reports whether e contains an atomic operation.
func hasAtomic(e ir.Expr) bool {
	found := false
	ir.InspectExpr(e, func(n ir.Node) bool {
		if _, ok := n.(*ir.Atomic); ok {
			found = true
		}
		return !found
	})
	return found
}
