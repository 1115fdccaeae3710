package nativegen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// Reductions. `qd.AtomicAdd(&x[c], v)` as a statement, at an address the
// loop does not change, adds into one element from every iteration: as an
// atomic per iteration it is a compare-and-swap loop on one contended
// cache line, 15× the plain loop on one core and slower on two. In the
// generated loop each chunk adds into a local instead, and adds that to
// the element with one atomic at its end, as the closure compiler does per
// batch (docs/semantics.md#reductions: the order in which a reduction's
// values are added is unspecified). It applies when the address's
// variables are all declared outside the loop and not assigned in it, x
// appears nowhere else in the loop (nothing reads the element while the
// loop runs), and the statement is not in a function literal.

// reduced is a loop's reductions: the edits of its body, and the chunk's
// prologue (the locals) and epilogue (the atomics).
type reduced struct {
	edits    []edit
	pro, epi string
}

// reductions finds the reductions of the top-level loop st.
func (g *gen) reductions(st *ast.RangeStmt) reduced {
	var r reduced
	info := g.syn.Info
	inside := func(obj types.Object) bool {
		return obj != nil && obj.Pos() >= st.Pos() && obj.Pos() < st.End()
	}
	assigned := map[types.Object]bool{}
	uses := map[types.Object]int{} // array roots: their mentions in the body
	ast.Inspect(st.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					assigned[info.ObjectOf(id)] = true
				}
			}
		case *ast.IncDecStmt:
			if id, ok := n.X.(*ast.Ident); ok {
				assigned[info.ObjectOf(id)] = true
			}
		case *ast.Ident:
			if obj := info.Uses[n]; obj != nil {
				uses[obj]++
			}
		}
		return true
	})
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ExprStmt:
			call, ok := n.X.(*ast.CallExpr)
			if !ok || g.qdFunc(call.Fun) != "AtomicAdd" || len(call.Args) != 2 {
				return true
			}
			addr, ok := call.Args[0].(*ast.UnaryExpr)
			if !ok || addr.Op != token.AND {
				return true
			}
			root, invariant := g.invariantElem(addr.X, inside, assigned)
			if !invariant || uses[root] != 1 {
				return true
			}
			t := info.TypeOf(call)
			if t == nil {
				return true
			}
			k := len(r.edits) // a suffix per reduction
			acc, ok2 := fmt.Sprintf("qdgR%d", k), fmt.Sprintf("qdgOK%d", k)
			g.used[g.qd] = true
			r.edits = append(r.edits, edit{g.off(n.Pos()), g.off(n.End()),
				fmt.Sprintf("%s, %s = %s+(%s), true", acc, ok2, acc, g.exprText(call.Args[1]))})
			r.pro += fmt.Sprintf("\t\t\tvar %s %s\n\t\t\tvar %s bool\n", acc, types.TypeString(t, g.qualifier), ok2)
			r.epi += fmt.Sprintf("\t\t\tif %s {\n\t\t\t\t%s.AtomicAdd(%s, %s)\n\t\t\t}\n", ok2, g.qd, g.text(addr.Pos(), addr.End()), acc)
			return false
		}
		return true
	}
	ast.Inspect(st.Body, walk)
	return r
}

// invariantElem reports whether e is an element x[i]..., of an array
// parameter or outer variable x, whose indices use only variables declared
// outside the loop and not assigned in it, and constants; and returns x.
func (g *gen) invariantElem(e ast.Expr, inside func(types.Object) bool, assigned map[types.Object]bool) (types.Object, bool) {
	info := g.syn.Info
	ix, ok := e.(*ast.IndexExpr)
	if !ok {
		return nil, false
	}
	ok = true
	ast.Inspect(ix.Index, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			obj := info.Uses[n]
			switch obj.(type) {
			case *types.Var:
				if inside(obj) || assigned[obj] {
					ok = false
				}
			case *types.Const, *types.TypeName, *types.Builtin, *types.Nil, nil:
			default:
				ok = false
			}
		case *ast.CallExpr:
			if tv, isType := info.Types[n.Fun]; !isType || !tv.IsType() && !tv.IsBuiltin() {
				ok = false // a conversion or len, min, max only
			}
		case *ast.FuncLit:
			ok = false
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	switch x := ix.X.(type) {
	case *ast.Ident:
		obj := info.Uses[x]
		if _, isVar := obj.(*types.Var); !isVar || inside(obj) || assigned[obj] {
			return nil, false
		}
		return obj, true
	case *ast.IndexExpr:
		return g.invariantElem(x, inside, assigned)
	}
	return nil, false
}
