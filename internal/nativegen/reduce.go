package nativegen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
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

// Scatters. `qd.AtomicAdd(&h[e], v)` (or `&h[a][b]`) statements at
// addresses the loop does change, into a 1-D (2-D) slice h that the loop
// reads and writes no other way, add into a private copy of h (native.Private): one per worker,
// taken by each chunk, when the loop is long enough for the copies to pay;
// after the loop the copies are summed and each non-zero sum added to h
// with one atomic. A histogram runs at plain Go's speed that way, where an
// atomic per element was ten times slower on one core, and slower still on
// two. A loop too short keeps the atomics.

// reduced is a loop's reductions: the edits of its body, and the chunk's
// prologue (the locals) and epilogue (the atomics).
type reduced struct {
	edits    []edit
	pro, epi string
	// private are the scatter targets given private copies; after is the
	// statements after the loop, their merge.
	private []scatter
	after   string
}

// beforeLoop is the statements before a loop of iters iterations (an
// expression of the generated code): its scatter targets' copies.
func (r reduced) beforeLoop(iters string) string {
	var b strings.Builder
	for _, p := range r.private {
		fn := "NewPrivate"
		if p.dims == 2 {
			fn = "NewPrivate2"
		}
		fmt.Fprintf(&b, "\t\t%sS := native.%s(%s, %s)\n", p.name, fn, p.target, iters)
	}
	return b.String()
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
	if id, ok := st.X.(*ast.Ident); ok {
		uses[info.Uses[id]]++ // the loop ranges over it: it reads it
	}
	private, order := g.scatterTargets(st.Body, inside, assigned, uses)
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ExprStmt:
			call, addr := g.atomicAddStmt(n)
			if call == nil {
				return true
			}
			if id, idx := elemOf(addr.X); id != nil {
				if p, ok := private[info.Uses[id]]; ok && len(idx) == p.dims {
					g.used[g.qd] = true
					fn, args := "Scatter", g.exprText(idx[0])
					if p.dims == 2 {
						fn, args = "Scatter2", args+", "+g.exprText(idx[1])
					}
					r.edits = append(r.edits, edit{g.off(n.Pos()), g.off(n.End()),
						fmt.Sprintf("native.%s(%s, %s, %s, %s, %s.AtomicAdd[%s]) %s", fn, p.name, p.target, args, g.exprText(call.Args[1]),
							g.qd, p.elem, g.lineAt(g.off(n.End())))})
					return false
				}
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
	for _, p := range order {
		r.private = append(r.private, p)
		r.pro += fmt.Sprintf("\t\t\t%s := %sS.Get()\n", p.name, p.name)
		r.epi += fmt.Sprintf("\t\t\t%sS.Put(%s)\n", p.name, p.name)
		r.after += fmt.Sprintf("\t\t%sS.Merge(%s.AtomicAdd[%s])\n", p.name, g.qd, p.elem)
	}
	return r
}

// scatter is a privatised scatter target: the slice's name, its element
// type and the private copy's name.
type scatter struct {
	target, elem, name string
	dims               int // 1: h[e]; 2: h[a][b]
}

// scatterTargets finds the slices body only scatters into: 1-D or 2-D slices
// declared outside the loop and not assigned in it, every mention of which
// in body is the address of an element in a qd.AtomicAdd statement whose
// index the loop changes (an invariant one is a reduction); by object, and
// in the order the body first names them.
func (g *gen) scatterTargets(body *ast.BlockStmt, inside func(types.Object) bool, assigned map[types.Object]bool, uses map[types.Object]int) (map[types.Object]scatter, []scatter) {
	info := g.syn.Info
	adds := map[types.Object]int{}
	var order []types.Object
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		st, ok := n.(*ast.ExprStmt)
		if !ok {
			return true
		}
		_, addr := g.atomicAddStmt(st)
		if addr == nil {
			return true
		}
		ix, ok := addr.X.(*ast.IndexExpr)
		if !ok {
			return true
		}
		if _, invariant := g.invariantElem(ix, inside, assigned); invariant {
			return true
		}
		id, idx := elemOf(ix)
		if id == nil || len(idx) > 2 {
			return true
		}
		obj := info.Uses[id]
		if _, isVar := obj.(*types.Var); !isVar || inside(obj) || assigned[obj] {
			return true
		}
		if adds[obj] == 0 {
			order = append(order, obj)
		}
		adds[obj]++
		return true
	})
	private := map[types.Object]scatter{}
	var ordered []scatter
	for _, obj := range order {
		if adds[obj] != uses[obj] {
			continue
		}
		// A slice of numbers, or of rows of them.
		elem, dims := obj.Type(), 0
		for dims < 2 {
			sl, ok := elem.Underlying().(*types.Slice)
			if !ok {
				break
			}
			elem, dims = sl.Elem(), dims+1
		}
		if b, ok := elem.Underlying().(*types.Basic); dims == 0 || !ok || b.Info()&types.IsNumeric == 0 {
			continue
		}
		p := scatter{obj.Name(), types.TypeString(elem, g.qualifier), fmt.Sprintf("%sP%d", prefix, len(private)), dims}
		private[obj], ordered = p, append(ordered, p)
	}
	return private, ordered
}

// atomicAddStmt is the call and the address operand of a statement
// qd.AtomicAdd(&x, v), or nils.
func (g *gen) atomicAddStmt(st *ast.ExprStmt) (*ast.CallExpr, *ast.UnaryExpr) {
	call, ok := st.X.(*ast.CallExpr)
	if !ok || g.qdFunc(call.Fun) != "AtomicAdd" || len(call.Args) != 2 {
		return nil, nil
	}
	addr, ok := call.Args[0].(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND {
		return nil, nil
	}
	return call, addr
}

// elemOf splits the element address x[i]... into the array's identifier
// and its indices, outermost first; nil for anything else.
func elemOf(e ast.Expr) (*ast.Ident, []ast.Expr) {
	var idx []ast.Expr
	for {
		switch x := e.(type) {
		case *ast.IndexExpr:
			idx = append([]ast.Expr{x.Index}, idx...)
			e = x.X
		case *ast.Ident:
			return x, idx
		default:
			return nil, nil
		}
	}
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
