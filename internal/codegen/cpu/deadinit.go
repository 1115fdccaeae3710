package cpu

import "github.com/quadrants-go/qd/internal/ir"

// Dead zero values. A declaration without a value zeroes its variable, one
// pass over the batch. Inlined helpers with a result declare one, var r T,
// and then assign it on every path (if ... { r = a } else { r = b }), so
// that zero is never read: assignedBeforeRead finds such variables and the
// declaration compiles to nothing.

// assignedBeforeRead reports whether every path through list, from its
// start, assigns v before reading it (a lane that leaves by break or
// continue leaves v's scope, so it counts as assigned).
func assignedBeforeRead(v *ir.Var, list []ir.Stmt) bool {
	for _, s := range list {
		switch s := s.(type) {
		case *ir.Assign:
			if s.Var == v && !exprReads(s.Value, v) {
				return true
			}
		case *ir.Break, *ir.Continue:
			return true
		case *ir.If:
			if exprReads(s.Cond, v) {
				return false
			}
			if assignedBeforeRead(v, s.Then) && assignedBeforeRead(v, s.Else) {
				return true
			}
		}
		if stmtReads(s, v) {
			return false
		}
	}
	return false
}

// stmtReads reports whether s, or a statement inside it, may read v.
func stmtReads(s ir.Stmt, v *ir.Var) bool {
	found := false
	ir.Inspect([]ir.Stmt{s}, func(n ir.Node) bool {
		if r, ok := n.(*ir.VarRef); ok && r.Var == v {
			found = true
		}
		return !found
	})
	return found
}

func exprReads(e ir.Expr, v *ir.Var) bool {
	found := false
	ir.InspectExpr(e, func(n ir.Node) bool {
		if r, ok := n.(*ir.VarRef); ok && r.Var == v {
			found = true
		}
		return !found
	})
	return found
}
