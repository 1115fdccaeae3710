package analysis

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Unrollable reports whether the body of parallel task t may be written as
// several iterations interleaved statement by statement, and its size
// (statements plus expression nodes), which bounds the code each copy
// adds. The body must be straight-line: declarations, assignments to a
// loop variable or to a local the body declared before, stores, and
// reductions of scope Whole (which a generator keeps in a register), none
// setting a per-launch temporary, over expressions with no atomic and no
// transcendental call (ir.Intrinsic.Exact ones are fine). The number of
// dimensions and the size limit are the generator's to check.
func Unrollable(plan *lower.Plan, t *lower.Task) (nodes int, ok bool) {
	if t.Kind != lower.Parallel || t.Loop == nil {
		return 0, false
	}
	private := map[*ir.Var]bool{}
	for _, v := range t.Loop.Vars {
		if _, temp := plan.TempSlot[v]; temp {
			return 0, false
		}
		private[v] = true
	}
	simple := func(e ir.Expr) bool {
		if e == nil {
			return false
		}
		ok := true
		ir.InspectExpr(e, func(n ir.Node) bool {
			nodes++
			switch n := n.(type) {
			case *ir.Atomic:
				ok = false
			case *ir.Call:
				if !n.Fn.Exact() {
					ok = false
				}
			}
			return ok
		})
		return ok
	}
	for _, s := range t.Loop.Body {
		nodes++
		switch s := s.(type) {
		case *ir.Decl:
			if _, temp := plan.TempSlot[s.Var]; temp || (s.Init != nil && !simple(s.Init)) {
				return 0, false
			}
			private[s.Var] = true
		case *ir.Assign:
			if !private[s.Var] || !simple(s.Value) {
				return 0, false
			}
		case *ir.Store:
			for _, x := range s.Index {
				if !simple(x) {
					return 0, false
				}
			}
			if !simple(s.Value) {
				return 0, false
			}
		case *ir.ExprStmt:
			// A reduction is a register update, as simple as an assignment.
			r := wholeReduction(t, s)
			if r == nil || !simple(r.Atomic.Value) {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	return nodes, true
}

// wholeReduction is the reduction of scope Whole that s is, or nil.
func wholeReduction(t *lower.Task, s *ir.ExprStmt) *lower.Reduction {
	for _, r := range t.Reductions {
		if r.Stmt == s && r.Scope == lower.Whole {
			return r
		}
	}
	return nil
}

// CountedLoop is a serial loop
//
//	for v := a; v < Bound; v++ { body }
//
// whose bound the body does not change and whose body neither sets v nor
// breaks, continues or loops: its iterations may run several to a trip
// while at least that many remain (Bound - v, exact in v's unsigned
// arithmetic whenever v < Bound), in their order, with the same result.
type CountedLoop struct {
	Var   *ir.Var // v: an int32 or int64 local, not a per-launch temporary
	Bound ir.Expr // constants, scalars, extents and locals the body leaves alone
	Nodes int     // the body's size, statements plus expression nodes
}

// Counted returns s as a counted loop, or nil when it is not one.
func Counted(plan *lower.Plan, s *ir.For) *CountedLoop {
	cond, isBin := s.Cond.(*ir.Binary)
	if !isBin || cond.Op != ir.Lt {
		return nil
	}
	ref, isRef := cond.X.(*ir.VarRef)
	if !isRef || (ref.Var.Type != ir.I32 && ref.Var.Type != ir.I64) {
		return nil
	}
	v, e := ref.Var, cond.Y
	if _, temp := plan.TempSlot[v]; temp || len(s.Post) != 1 {
		return nil
	}
	inc, isAssign := s.Post[0].(*ir.Assign)
	if !isAssign || inc.Var != v {
		return nil
	}
	add, isAdd := inc.Value.(*ir.Binary)
	if !isAdd || add.Op != ir.Add {
		return nil
	}
	if x, ok := add.X.(*ir.VarRef); !ok || x.Var != v {
		return nil
	}
	if one, ok := add.Y.(*ir.Const); !ok || one.Int() != 1 {
		return nil
	}
	// What the body sets, and whether it is straight enough.
	set := map[*ir.Var]bool{}
	nodes := 0
	simple := true
	ir.Inspect(s.Body, func(n ir.Node) bool {
		nodes++
		switch n := n.(type) {
		case *ir.For, *ir.Break, *ir.Continue, *ir.ParallelFor, *ir.StreamParallel:
			simple = false
		case *ir.Assign:
			set[n.Var] = true
		case *ir.Decl:
			set[n.Var] = true
		}
		return simple
	})
	if !simple || set[v] {
		return nil
	}
	// The bound: constants, scalars, extents and locals the body leaves.
	invariant := true
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Const, *ir.ParamRef, *ir.Len, *ir.Binary, *ir.Unary, *ir.Convert:
		case *ir.VarRef:
			if n.Var == v || set[n.Var] {
				invariant = false
			}
		default:
			invariant = false
		}
		return invariant
	})
	if !invariant {
		return nil
	}
	return &CountedLoop{Var: v, Bound: e, Nodes: nodes}
}
