package frontend

import (
	"go/ast"
	"go/token"
	"go/types"
	"math"

	"github.com/quadrants-go/qd/internal/ir"
)

// callVals translates a call: a conversion, a builtin, a kernel API or math
// function, a method, or a function of the file or of the library
// (inlined). It returns the call's values.
func (b *builder) callVals(x *ast.CallExpr) []val {
	if tv, ok := b.info.Types[x.Fun]; ok && tv.IsType() {
		t := b.subst(tv.Type)
		if isAggregate(t) {
			l, ok := b.valueLayout(t, x.Fun.Pos(), "conversion to "+b.fc.typeString(t))
			if !ok || len(x.Args) != 1 {
				return []val{b.badVal(t)}
			}
			return []val{b.convertVal(b.value(x.Args[0]), t, l)}
		}
		return []val{scalarVal(t, b.conversion(x, t))}
	}
	if x.Ellipsis.IsValid() {
		b.errorf(x.Ellipsis, "variadic calls (f(xs...)) are not supported in kernels")
		return nil
	}
	fun := ast.Unparen(x.Fun)
	if id, ok := fun.(*ast.Ident); ok {
		if bi, ok := b.info.Uses[id].(*types.Builtin); ok {
			return b.scalars(x, b.builtin(x, bi.Name()))
		}
	}
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		if s, ok := b.info.Selections[sel]; ok {
			if s.Kind() == types.MethodVal || s.Kind() == types.MethodExpr {
				if fn, ok := s.Obj().(*types.Func); ok {
					if name, ok := b.std.blockMethods[fn]; ok {
						return b.scalars(x, b.blockMethod(x, sel, name))
					}
				}
				return b.methodCall(x, sel, s)
			}
			b.errorf(x.Pos(), "calling function values is not supported in kernels")
			return nil
		}
	}
	fn := b.funcOf(fun)
	if fn == nil {
		if id, ok := fun.(*ast.Ident); ok {
			if bd := b.lookup(b.info.Uses[id]); bd != nil && bd.bad {
				return nil // its declaration's error says it all
			}
		}
		b.errorf(x.Pos(), "calling %s is not supported in kernels: only functions of the kernel's file, qd and math functions can be called", shortExpr(x.Fun))
		return nil
	}
	if a, ok := b.std.funcs[fn.Origin()]; ok {
		return b.scalars(x, b.apiCall(x, fn, a))
	}
	if c := b.calleeOf(fn); c != nil {
		e, ok := b.funcEnv(x.Fun, c.fn)
		if !ok {
			b.errorf(x.Pos(), "internal error: the type arguments of %s are unknown; please report this kernel", fn.Name())
			return nil
		}
		c.env = e
		return b.inline(x, c, nil, x.Args)
	}
	switch {
	case fn.Pkg() == b.std.math && bitCasts[fn.Name()] != ir.Invalid:
		if len(x.Args) != 1 {
			return nil // go/types reported it
		}
		v := b.expr(x.Args[0])
		if v.Type() == ir.Invalid {
			return nil
		}
		return b.scalars(x, []ir.Expr{ir.Bits(bitCasts[fn.Name()], v)})
	case fn.Pkg() == b.std.qd:
		b.errorf(x.Pos(), "qd.%s cannot be used in kernels; kernels may call qd.StreamParallel, qd.Serial, qd.LoopConfig, qd.NDRange, qd.NDRange3, the qd atomics, qd math (%s) and qd's value types", fn.Name(), supportedMath())
	case fn.Pkg() == b.std.math:
		b.errorf(x.Pos(), "math.%s is not supported in kernels; supported: %s", fn.Name(), supportedMath())
	case fn.Pkg() != nil && fn.Pkg() != b.fc.pkg:
		b.errorf(x.Pos(), "%s.%s cannot be called in kernels; kernels may use only qd and math", fn.Pkg().Name(), fn.Name())
	default:
		b.errorf(x.Pos(), "calling %s is not supported in kernels", fn.Name())
	}
	return nil
}

// scalars wraps the scalar results of a builtin or API call as values of
// the call's type.
func (b *builder) scalars(x *ast.CallExpr, es []ir.Expr) []val {
	if es == nil {
		return nil
	}
	t := b.typ(x)
	out := make([]val, len(es))
	for i, e := range es {
		out[i] = scalarVal(t, e)
	}
	return out
}

// conversion translates T(x) to a scalar type.
func (b *builder) conversion(x *ast.CallExpr, t types.Type) ir.Expr {
	to, ok := b.scalarType(t, x.Fun.Pos(), "conversion to "+b.fc.typeString(t))
	if !ok || len(x.Args) != 1 {
		return bad()
	}
	if tv := b.info.Types[x.Args[0]]; tv.Value != nil {
		// A constant converted to a type parameter's type (T(0.5)) is no
		// Go constant, but is exact: convert the exact value, as Go does.
		c, ok := constValue(tv.Value, to)
		if !ok {
			b.errorf(x.Args[0].Pos(), "constant %s does not fit in %s", tv.Value.ExactString(), b.fc.typeString(t))
			return bad()
		}
		return c
	}
	v := b.expr(x.Args[0])
	if v.Type() == ir.Invalid || v.Type() == to {
		return v
	}
	if c, ok := v.(*ir.Const); ok && !c.T.IsFloat() {
		return convertConst(c, to)
	}
	if to == ir.Bool || v.Type() == ir.Bool {
		b.errorf(x.Pos(), "cannot convert between bool and numbers")
		return bad()
	}
	return &ir.Convert{To: to, X: v}
}

// builtin translates len, min and max.
func (b *builder) builtin(x *ast.CallExpr, name string) []ir.Expr {
	switch name {
	case "len":
		if len(x.Args) != 1 {
			return nil
		}
		if t := b.typ(x.Args[0]); isLocalArray(t) {
			// go/types folds len of an array unless the operand holds a
			// call, which must still run.
			v := b.operandVal(x.Args[0], t)
			b.discardVal(v)
			if p, ok := t.Underlying().(*types.Pointer); ok {
				t = p.Elem()
			}
			return []ir.Expr{ir.I64c(t.Underlying().(*types.Array).Len())}
		}
		p, idx, ok := b.arrayIndexBase(x.Args[0])
		if !ok {
			return nil
		}
		if len(idx) >= p.Dims {
			b.errorf(x.Pos(), "len of an element of %s: %s has %d dimensions", p.Name, p.Name, p.Dims)
			return nil
		}
		// Rows are uniform (arrays are row-major), so len(x[i]) is the
		// extent of dimension 1 whatever i is; i is still evaluated for
		// its effects.
		for _, v := range b.exprList(idx) {
			b.discard(v)
		}
		return []ir.Expr{&ir.Len{Array: p, Dim: len(idx)}}
	case "min", "max":
		op := ir.Min
		if name == "max" {
			op = ir.Max
		}
		t, ok := b.typeOf(x)
		if !ok {
			return nil
		}
		vals := b.exprList(x.Args)
		if len(vals) == 0 {
			return nil
		}
		acc := b.convertTo(t, vals[0])
		for _, v := range vals[1:] {
			acc = arith(op, acc, b.convertTo(t, v))
		}
		return []ir.Expr{acc}
	}
	b.errorf(x.Pos(), "builtin %s is not supported in kernels; kernels may use len, min and max", name)
	return nil
}

// apiCall translates a call of a qd or math function.
func (b *builder) apiCall(x *ast.CallExpr, fn *types.Func, a apiFunc) []ir.Expr {
	qual := fn.Pkg().Name() + "." + fn.Name()
	switch a.kind {
	case apiStreamParallel:
		b.errorf(x.Pos(), "qd.StreamParallel must be called as a statement at the top level of a kernel")
	case apiSerial:
		b.errorf(x.Pos(), "qd.Serial must be called as a statement: qd.Serial(func() { ... })")
	case apiLoopConfig:
		b.errorf(x.Pos(), "qd.LoopConfig must be a statement at the top level of the kernel, immediately before a parallel loop")
	case apiBlockDim:
		b.errorf(x.Pos(), "qd.BlockDim can only be used as an argument of qd.LoopConfig")
	case apiNDRange, apiNDRange3:
		b.errorf(x.Pos(), "%s can only be the range of a for loop (for i, j := range qd.NDRange(n, m))", qual)
	case apiBlocks:
		b.errorf(x.Pos(), "qd.Blocks can only be the range of a top-level loop (for b := range qd.Blocks(n, size))")
	case apiShared, apiNewPerThread, apiBlockScan:
		b.errorf(x.Pos(), "%s declares a variable: write x := %s, at the level of a qd.Blocks loop", qual, shortExpr(x))
	case apiBlockReduce:
		return b.blockReduce(x, a.minmax, qual)
	case apiAtomic:
		return b.atomic(x, a.atomic, qual)
	case apiAtomicVec:
		b.atomicVec(x, a.atomic, qual)
		return nil
	case apiIntrinsic:
		t, ok := b.typeOf(x)
		if !ok {
			return nil
		}
		if !t.IsFloat() {
			b.errorf(x.Pos(), "%s needs float32 or float64 arguments", qual)
			return nil
		}
		args := b.exprList(x.Args)
		if len(args) != a.intrinsic.Arity() {
			return nil
		}
		for i := range args {
			args[i] = b.convertTo(t, args[i])
		}
		return []ir.Expr{&ir.Call{Fn: a.intrinsic, Args: args}}
	case apiMathMinMax:
		args := b.exprList(x.Args)
		if len(args) != 2 {
			return nil
		}
		// math.Max and math.Min differ from the builtins in one case: an
		// infinity in the direction of the operation wins over a NaN
		// (math.Max(+Inf, NaN) = +Inf, max(+Inf, NaN) = NaN).
		x, y := b.convertTo(ir.F64, args[0]), b.convertTo(ir.F64, args[1])
		if !isSimple(x) {
			x = b.spill(x)
		}
		if !isSimple(y) {
			y = b.spill(y)
		}
		infv := math.Inf(1)
		if a.minmax == ir.Min {
			infv = math.Inf(-1)
		}
		inf := ir.F64c(infv)
		var cond ir.Expr
		for _, v := range []ir.Expr{x, y} {
			if c, ok := v.(*ir.Const); ok {
				if c.Float() == infv {
					return []ir.Expr{inf}
				}
				continue // a constant that is not that infinity adds nothing
			}
			is := ir.NewBinary(ir.Eq, v, inf)
			if cond == nil {
				cond = is
			} else {
				cond = ir.NewBinary(ir.LOr, cond, is)
			}
		}
		mm := ir.NewBinary(a.minmax, x, y)
		if cond == nil {
			return []ir.Expr{mm}
		}
		return []ir.Expr{&ir.Select{Cond: cond, X: inf, Y: mm}}
	case apiMathNaN:
		return []ir.Expr{ir.F64c(math.NaN())}
	case apiMathInf:
		args := b.exprList(x.Args)
		if len(args) != 1 {
			return nil
		}
		if c, ok := args[0].(*ir.Const); ok {
			if c.Int() >= 0 {
				return []ir.Expr{ir.F64c(math.Inf(1))}
			}
			return []ir.Expr{ir.F64c(math.Inf(-1))}
		}
		return []ir.Expr{&ir.Select{Cond: ir.NewBinary(ir.Ge, args[0], ir.Zero(args[0].Type())),
			X: ir.F64c(math.Inf(1)), Y: ir.F64c(math.Inf(-1))}}
	case apiMathIsNaN:
		args := b.exprList(x.Args)
		if len(args) != 1 {
			return nil
		}
		v := args[0]
		if !isSimple(v) {
			v = b.spill(v)
		}
		return []ir.Expr{ir.NewBinary(ir.Ne, v, v)}
	case apiMathIsInf:
		args := b.exprList(x.Args)
		if len(args) != 2 {
			return nil
		}
		v, sign := args[0], args[1]
		if !isSimple(v) {
			v = b.spill(v)
		}
		pos := ir.NewBinary(ir.Eq, v, ir.F64c(math.Inf(1)))
		neg := ir.NewBinary(ir.Eq, v, ir.F64c(math.Inf(-1)))
		if c, ok := sign.(*ir.Const); ok {
			switch {
			case c.Int() > 0:
				return []ir.Expr{pos}
			case c.Int() < 0:
				return []ir.Expr{neg}
			}
			return []ir.Expr{ir.NewBinary(ir.LOr, pos, neg)}
		}
		if !isSimple(sign) {
			sign = b.spill(sign)
		}
		zero := ir.Zero(sign.Type())
		return []ir.Expr{ir.NewBinary(ir.LOr,
			ir.NewBinary(ir.LAnd, ir.NewBinary(ir.Ge, sign, zero), pos),
			ir.NewBinary(ir.LAnd, ir.NewBinary(ir.Le, sign, zero), neg))}
	}
	return nil
}

// atomic translates qd.AtomicOp(&x[i...], v) and qd.AtomicCAS(&x[i], old, new).
func (b *builder) atomic(x *ast.CallExpr, op ir.AtomicOp, qual string) []ir.Expr {
	want := 2
	if op == ir.AtomicCAS {
		want = 3
	}
	if len(x.Args) != want {
		return nil
	}
	addr, ok := ast.Unparen(x.Args[0]).(*ast.UnaryExpr)
	if ok && addr.Op == token.AND && b.isRecordAccess(addr.X) {
		return b.recordAtomic(x, addr.X, op, qual)
	}
	var ix *ast.IndexExpr
	if ok && addr.Op == token.AND {
		ix, ok = ast.Unparen(addr.X).(*ast.IndexExpr)
	}
	if !ok || ix == nil {
		b.errorf(x.Args[0].Pos(), "the first argument of %s must be the address of an array element: &x[i]", qual)
		return nil
	}
	p, idx, ok := b.arrayIndex(ix)
	if !ok {
		return nil
	}
	if len(idx) != p.Dims {
		b.errorf(x.Args[0].Pos(), "the first argument of %s must be the address of an element: index all %d dimensions of %s", qual, p.Dims, p.Name)
		return nil
	}
	vals := b.exprList(append(append([]ast.Expr(nil), idx...), x.Args[1:]...))
	if len(vals) != len(idx)+want-1 {
		return nil
	}
	n := len(idx)
	if (op == ir.AtomicAnd || op == ir.AtomicOr || op == ir.AtomicXor) && !p.Elem.IsInteger() {
		b.errorf(x.Pos(), "%s needs an integer array", qual)
		return nil
	}
	if !p.Elem.IsNumeric() {
		b.errorf(x.Pos(), "%s needs a numeric array", qual)
		return nil
	}
	a := &ir.Atomic{Op: op, Array: p, Index: vals[:n], Value: b.convertTo(p.Elem, vals[n])}
	if op == ir.AtomicCAS {
		a.Compare = b.convertTo(p.Elem, vals[n])
		a.Value = b.convertTo(p.Elem, vals[n+1])
	}
	return []ir.Expr{a}
}

// recordAtomic translates an atomic on one leaf of an element of a record
// array: qd.AtomicAdd(&grid[i][j].M, m).
func (b *builder) recordAtomic(x *ast.CallExpr, target ast.Expr, op ir.AtomicOp, qual string) []ir.Expr {
	a, ok := b.recordPath(target)
	if !ok {
		return nil
	}
	if len(a.dyn) > 0 {
		b.errorf(a.dyn[0].index.Pos(), "the first argument of %s indexes %s inside an element of %s with %s, which is not a constant; an atomic needs one address: index with a constant, or with the variable of a loop over a constant count (for k := range N), which is unrolled",
			qual, shortExpr(target), a.p.Name, shortExpr(a.dyn[0].index))
		return nil
	}
	if _, scalar := basicType(a.t); !scalar || a.n != 1 {
		b.errorf(x.Args[0].Pos(), "the first argument of %s must be the address of a scalar: %s has type %s; apply it to each field or component (&%s[0], ...)",
			qual, shortExpr(target), b.fc.typeString(a.t), shortExpr(target))
		return nil
	}
	vals := b.exprList(append(append([]ast.Expr(nil), a.index...), x.Args[1:]...))
	n := len(a.index)
	if len(vals) != n+len(x.Args)-1 || !b.recordIndices(a, vals[:n]) {
		return nil
	}
	et := a.p.LeafType(a.off)
	if (op == ir.AtomicAnd || op == ir.AtomicOr || op == ir.AtomicXor) && !et.IsInteger() {
		b.errorf(x.Pos(), "%s needs an integer operand; %s has type %s", qual, shortExpr(target), b.fc.typeString(a.t))
		return nil
	}
	if !et.IsNumeric() {
		b.errorf(x.Pos(), "%s needs a numeric operand; %s has type %s", qual, shortExpr(target), b.fc.typeString(a.t))
		return nil
	}
	at := &ir.Atomic{Op: op, Array: a.p, Index: vals[:n], Leaf: a.off, Value: b.convertTo(et, vals[n])}
	if op == ir.AtomicCAS {
		at.Compare = b.convertTo(et, vals[n])
		at.Value = b.convertTo(et, vals[n+1])
	}
	return []ir.Expr{at}
}
