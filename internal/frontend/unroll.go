package frontend

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// Unrolling. A serial loop over a constant count (for i := range 3, a
// three-clause loop with constant bounds, a range over a local array)
// whose body indexes a local array with the loop variable (directly or in
// a loop nested in it: m[i][j] in for i { for j { ... } }) is unrolled:
// each iteration is translated with the variable bound to its constant, so
// that every such index selects its leaves at compile time instead of
// through a chain of selects over the whole array. The library's matrix
// loops become straight-line code this way. A loop is unrolled only when
// its trip count times the statements of its body (nested constant loops
// counted with their own trip counts) stays within maxUnroll; beyond that
// it stays a loop and its indices are dynamic.

// maxUnroll bounds the statements one unrolled loop nest produces, counted
// in source statements before inlining. 1024 unrolls every loop of the
// value library (the largest, Mat4's 4×4 loops, make 16 statements) and a
// [64]T filled element by element with room to spare, while a loop the
// size of a kernel stays one.
const maxUnroll = 1024

// maxUnrollTrips bounds the iterations of an unrolled loop: a dynamic index
// into an array longer than maxDynamicLeaves is refused anyway.
const maxUnrollTrips = 256

// indexesLocalArray reports whether body indexes a local array (or an
// array of a local value) with an index that reads obj.
func (b *builder) indexesLocalArray(body ast.Node, obj types.Object) bool {
	if obj == nil {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		if ix, ok := n.(*ast.IndexExpr); ok && isLocalArray(b.typ(ix.X)) && b.mentions(ix.Index, obj) {
			found = true
		}
		return !found
	})
	return found
}

// mentions reports whether e reads obj.
func (b *builder) mentions(e ast.Node, obj types.Object) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && b.info.Uses[id] == obj {
			found = true
		}
		return !found
	})
	return found
}

// unrollCost counts the statements unrolling body once produces: a nested
// loop over a constant count counts its body that many times.
func (b *builder) unrollCost(list []ast.Stmt) int {
	n := 0
	for _, s := range list {
		n++
		ast.Inspect(s, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.RangeStmt:
				trips := int64(1)
				if tv := b.info.Types[x.X]; tv.Value != nil {
					if k, ok := constant.Int64Val(constant.ToInt(tv.Value)); ok && k > 0 {
						trips = k
					}
				} else if at, ok := b.typ(x.X).Underlying().(*types.Array); ok {
					trips = max(at.Len(), 1)
				}
				n += int(min(trips, maxUnroll+1)) * b.unrollCost(x.Body.List)
				return false
			case *ast.FuncLit:
				return false
			case ast.Stmt:
				if _, isBlock := x.(*ast.BlockStmt); !isBlock && x != s {
					n++
				}
			}
			return n <= maxUnroll
		})
		if n > maxUnroll {
			break
		}
	}
	return n
}

// shouldUnroll reports whether a serial loop of trips iterations over the
// variable obj with this body is unrolled.
func (b *builder) shouldUnroll(trips int64, obj types.Object, body *ast.BlockStmt) bool {
	if trips < 0 || trips > maxUnrollTrips || !b.indexesLocalArray(body, obj) {
		return false
	}
	return trips*int64(b.unrollCost(body.List)) <= maxUnroll
}

// unroll emits the iterations of a loop whose variable takes the values
// vals: each one runs bind (which binds the variables the body sees) and
// translates the body. A continue leaves a one-trip loop around its
// iteration and a break one around them all, each only when used.
func (b *builder) unroll(pos ir.Pos, label *types.Label, body []ast.Stmt, n int, bind func(k int)) {
	all := &ir.For{Pos: pos}
	t := &target{label: label, loop: true, brk: all}
	var out []ir.Stmt
	b.withTarget(t, func() {
		for k := range n {
			it := &ir.For{Pos: pos}
			t.contBrk, t.usedCont = it, false
			var iter []ir.Stmt
			b.nested(inLoop, &iter, func() {
				bind(k)
				b.stmtList(body, false)
			})
			if t.usedCont {
				it.Body = append(iter, &ir.Break{Pos: pos, Loop: it})
				iter = []ir.Stmt{it}
			}
			out = append(out, iter...)
		}
	})
	if t.usedBrk {
		all.Body = append(out, &ir.Break{Pos: pos, Loop: all})
		out = []ir.Stmt{all}
	}
	*b.block = append(*b.block, out...)
}

// bindConst binds the loop variable obj to the constant c in an unrolled
// iteration: directly, or through a local when the body assigns it.
func (b *builder) bindConst(obj types.Object, c ir.Expr, body ast.Node) {
	if obj == nil {
		return
	}
	if b.fc.assignedIn(b.info, body)[obj] {
		b.fr.vars[obj] = &binding{v: b.decl(obj.Name(), c)}
		return
	}
	b.fr.vars[obj] = &binding{val: c}
}

// constLoop recognises a three-clause loop with constant bounds whose body
// leaves its variable alone (for i := 0; i < 3; i++, and <=, >, >=, !=,
// i--, i += c, i -= c) and returns its variable and the values it takes.
func (b *builder) constLoop(s *ast.ForStmt) (types.Object, []ir.Expr, bool) {
	init, ok := s.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
		return nil, nil, false
	}
	id, ok := init.Lhs[0].(*ast.Ident)
	if !ok {
		return nil, nil, false
	}
	obj := b.info.Defs[id]
	if obj == nil {
		return nil, nil, false
	}
	it, ok := basicType(b.subst(obj.Type()))
	if !ok || !it.IsInteger() {
		return nil, nil, false
	}
	start, ok := b.intConst(init.Rhs[0])
	if !ok {
		return nil, nil, false
	}
	cond, ok := ast.Unparen(s.Cond).(*ast.BinaryExpr)
	if !ok {
		return nil, nil, false
	}
	op, bound := cond.Op, cond.Y
	if x, isID := ast.Unparen(cond.X).(*ast.Ident); !isID || b.info.Uses[x] != obj {
		y, isID := ast.Unparen(cond.Y).(*ast.Ident)
		if !isID || b.info.Uses[y] != obj {
			return nil, nil, false
		}
		bound = cond.X
		switch op { // c < i is i > c
		case token.LSS:
			op = token.GTR
		case token.GTR:
			op = token.LSS
		case token.LEQ:
			op = token.GEQ
		case token.GEQ:
			op = token.LEQ
		}
	}
	limit, ok := b.intConst(bound)
	if !ok {
		return nil, nil, false
	}
	var step int64
	switch p := s.Post.(type) {
	case *ast.IncDecStmt:
		step = 1
		if p.Tok == token.DEC {
			step = -1
		}
		if x, isID := ast.Unparen(p.X).(*ast.Ident); !isID || b.info.Uses[x] != obj {
			return nil, nil, false
		}
	case *ast.AssignStmt:
		if len(p.Lhs) != 1 || len(p.Rhs) != 1 || p.Tok != token.ADD_ASSIGN && p.Tok != token.SUB_ASSIGN {
			return nil, nil, false
		}
		if x, isID := ast.Unparen(p.Lhs[0]).(*ast.Ident); !isID || b.info.Uses[x] != obj {
			return nil, nil, false
		}
		if step, ok = b.intConst(p.Rhs[0]); !ok {
			return nil, nil, false
		}
		if p.Tok == token.SUB_ASSIGN {
			step = -step
		}
	default:
		return nil, nil, false
	}
	if b.fc.assignedIn(b.info, s.Body)[obj] {
		return nil, nil, false
	}
	// Run the loop at compile time, in the variable's type.
	var vals []ir.Expr
	cur := ir.IntC(it, start).(*ir.Const)
	lim := ir.IntC(it, limit).(*ir.Const)
	inc := ir.IntC(it, step).(*ir.Const)
	cmp := map[token.Token]ir.BinOp{token.LSS: ir.Lt, token.LEQ: ir.Le, token.GTR: ir.Gt, token.GEQ: ir.Ge, token.NEQ: ir.Ne}[op]
	if cmp == 0 {
		return nil, nil, false
	}
	for {
		holds, ok := compareConst(cmp, cur, lim)
		if !ok {
			return nil, nil, false
		}
		if !holds {
			return obj, vals, true
		}
		if len(vals) >= maxUnrollTrips {
			return nil, nil, false
		}
		vals = append(vals, cur)
		next, ok := foldInt(ir.Add, cur, inc)
		if !ok {
			return nil, nil, false
		}
		cur = &ir.Const{T: it, Bits: next}
	}
}
