package lower

import "github.com/quadrants-go/qd/internal/ir"

// ReductionScope says over which iterations of a parallel loop a
// reduction's address stays the same.
type ReductionScope uint8

const (
	// Whole: the address is the same for every iteration of the loop, so
	// each thread (or CPU worker) accumulates all its iterations and one
	// atomic per block (per worker) writes the result.
	Whole ReductionScope = iota + 1
	// Innermost: the address depends only on the outer loop variables, so
	// it is the same along the innermost dimension: neighbouring iterations
	// (one warp's lanes) combine before one atomic.
	Innermost
)

func (s ReductionScope) String() string {
	switch s {
	case Whole:
		return "whole"
	case Innermost:
		return "innermost"
	}
	return "scope?"
}

// Reduction is an atomic add, min or max in a parallel task (on an array
// element or a record's leaf of a 32- or 64-bit type) whose old
// value is unused (its statement is the atomic alone) and whose address
// does not vary with the loop's index (Scope Whole) or with its innermost
// dimension (Scope Innermost). Code generators may combine the values of
// many iterations before one atomic: for integers and for min and max the
// result is exactly that of the per-iteration atomics; a float sum's
// rounding changes with the order of the additions.
type Reduction struct {
	Stmt   *ir.ExprStmt
	Atomic *ir.Atomic // Stmt.X
	Scope  ReductionScope
	// Nested is set when the atomic is under an if or a serial loop of the
	// body, so that not every iteration reaches it.
	Nested bool
}

// Identity is the bit pattern of the operation's neutral value for the
// reduction's type, as an ir.Const holds it: combining it changes nothing,
// bit for bit (for a float sum, -0: x + -0 is x for every x, -0 and NaN
// included).
func (r *Reduction) Identity() uint64 {
	return Identity(r.Atomic.Op, r.Atomic.Type())
}

// Identity is the neutral value of atomic op (add, min, max) on type t, as
// an ir.Const bit pattern.
func Identity(op ir.AtomicOp, t ir.Type) uint64 {
	switch op {
	case ir.AtomicAdd:
		switch t {
		case ir.F32:
			return 0x8000_0000
		case ir.F64:
			return 0x8000_0000_0000_0000
		}
		return 0
	case ir.AtomicMin:
		switch t {
		case ir.F32:
			return 0x7f80_0000 // +Inf
		case ir.F64:
			return 0x7ff0_0000_0000_0000
		case ir.I32:
			return 0x7fff_ffff
		case ir.I64:
			return 0x7fff_ffff_ffff_ffff
		case ir.U32:
			return 0xffff_ffff
		}
		return 0xffff_ffff_ffff_ffff // U64
	case ir.AtomicMax:
		switch t {
		case ir.F32:
			return 0xff80_0000 // -Inf
		case ir.F64:
			return 0xfff0_0000_0000_0000
		case ir.I32:
			return uint64(0xffff_ffff_8000_0000) // MinInt32, sign-extended
		case ir.I64:
			return 0x8000_0000_0000_0000
		}
		return 0 // unsigned
	}
	return 0
}

// reductions finds the reductions of every parallel task.
func (l *lowerer) reductions() {
	for _, t := range l.plan.Tasks {
		if t.Kind == Parallel && t.Loop != nil {
			t.Reductions = findReductions(t.Loop)
		}
	}
}

func findReductions(pf *ir.ParallelFor) []*Reduction {
	// Locals that vary between iterations: the loop variables and every
	// local the body declares. Kernel-level locals are fixed for the task.
	inner := map[*ir.Var]bool{}
	for _, v := range pf.Vars {
		inner[v] = true
	}
	ir.Inspect(pf.Body, func(n ir.Node) bool {
		if d, ok := n.(*ir.Decl); ok {
			inner[d.Var] = true
		}
		return true
	})
	var outer map[*ir.Var]bool // the outer loop variables, for Innermost
	if len(pf.Vars) > 1 {
		outer = map[*ir.Var]bool{}
		for _, v := range pf.Vars[:len(pf.Vars)-1] {
			outer[v] = true
		}
	}

	var found []*Reduction
	var walk func(ss []ir.Stmt, nested bool)
	walk = func(ss []ir.Stmt, nested bool) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ir.ExprStmt:
				if r := reductionOf(s, inner, outer); r != nil {
					r.Nested = nested
					found = append(found, r)
				}
			case *ir.If:
				walk(s.Then, true)
				walk(s.Else, true)
			case *ir.For:
				walk(s.Init, true)
				walk(s.Post, true)
				walk(s.Body, true)
			}
		}
	}
	walk(pf.Body, false)
	if len(found) == 0 {
		return nil
	}
	// An array the body also reads, stores or updates otherwise keeps its
	// per-iteration atomics: the body could observe partial results. A
	// record array counts as one array whatever leaf each access names
	// (reductions of several leaves of it stay reductions).
	reduced := map[ir.Node]bool{}
	for _, r := range found {
		reduced[r.Atomic] = true
	}
	other := map[*ir.Param]bool{}
	ir.Accesses(pf.Body, func(acc ir.Access) bool {
		if !reduced[acc.Node] {
			other[acc.Array] = true
		}
		return true
	})
	kept := found[:0]
	for _, r := range found {
		if !other[r.Atomic.Array] {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// reductionOf returns the reduction s is, or nil.
func reductionOf(s *ir.ExprStmt, inner, outer map[*ir.Var]bool) *Reduction {
	a, ok := s.X.(*ir.Atomic)
	if !ok || a.Array == nil || a.Value == nil {
		return nil
	}
	switch a.Op {
	case ir.AtomicAdd, ir.AtomicMin, ir.AtomicMax:
	default:
		return nil
	}
	switch a.Type() { // the element's, or the record leaf's
	case ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64:
	default:
		return nil
	}
	whole, innermost := true, outer != nil
	for _, x := range a.Index {
		if !invariant(x, inner, nil) {
			whole = false
			if !innermost || !invariant(x, inner, outer) {
				return nil
			}
		}
	}
	scope := Innermost
	if whole {
		scope = Whole
	}
	return &Reduction{Stmt: s, Atomic: a, Scope: scope}
}

// invariant reports whether e has the same value in every iteration:
// constants, scalar parameters, extents, kernel-level locals, pure
// arithmetic of those, and (when allowed is set) the variables in allowed.
func invariant(e ir.Expr, inner, allowed map[*ir.Var]bool) bool {
	ok := e != nil
	ir.InspectExpr(e, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Const, *ir.ParamRef, *ir.Len, *ir.Unary, *ir.Binary, *ir.Convert, *ir.Select, *ir.Call:
		case *ir.VarRef:
			if inner[n.Var] && !allowed[n.Var] {
				ok = false
			}
		default: // loads and atomics read memory that may change
			ok = false
		}
		return ok
	})
	return ok
}
