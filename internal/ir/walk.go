package ir

// Node is a Stmt or an Expr: what Inspect visits.
type Node any

// Inspect visits every statement of stmts and everything beneath it, in
// depth-first source order: a statement, then its expressions, then its
// nested statements (Store: Index, Value; If: Cond, Then, Else; For: Init,
// Cond, Post, Body; ParallelFor: Extents, Body; Blocks: Count, Size,
// Body; Threads: Body). When f returns false for a
// node its children are skipped. Nil statements and expressions are skipped, so Inspect is safe
// on kernels that have not been verified.
func Inspect(stmts []Stmt, f func(Node) bool) {
	for _, s := range stmts {
		inspectStmt(s, f)
	}
}

func inspectStmt(s Stmt, f func(Node) bool) {
	if s == nil || !f(s) {
		return
	}
	switch s := s.(type) {
	case *Decl:
		inspectExpr(s.Init, f)
	case *Assign:
		inspectExpr(s.Value, f)
	case *Store:
		for _, e := range s.Index {
			inspectExpr(e, f)
		}
		inspectExpr(s.Value, f)
	case *ExprStmt:
		inspectExpr(s.X, f)
	case *If:
		inspectExpr(s.Cond, f)
		Inspect(s.Then, f)
		Inspect(s.Else, f)
	case *For:
		Inspect(s.Init, f)
		inspectExpr(s.Cond, f)
		Inspect(s.Post, f)
		Inspect(s.Body, f)
	case *ParallelFor:
		for _, e := range s.Extents {
			inspectExpr(e, f)
		}
		Inspect(s.Body, f)
	case *StreamParallel:
		Inspect(s.Body, f)
	case *Blocks:
		inspectExpr(s.Count, f)
		inspectExpr(s.Size, f)
		Inspect(s.Body, f)
	case *Threads:
		Inspect(s.Body, f)
	}
}

// InspectExpr visits e and its operands in depth-first order (operands left
// to right; for Atomic: Index, Value, Compare). When f returns false for an
// expression its operands are skipped. A nil e is skipped.
func InspectExpr(e Expr, f func(Node) bool) { inspectExpr(e, f) }

func inspectExpr(e Expr, f func(Node) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *Unary:
		inspectExpr(e.X, f)
	case *Binary:
		inspectExpr(e.X, f)
		inspectExpr(e.Y, f)
	case *Convert:
		inspectExpr(e.X, f)
	case *Bitcast:
		inspectExpr(e.X, f)
	case *Select:
		inspectExpr(e.Cond, f)
		inspectExpr(e.X, f)
		inspectExpr(e.Y, f)
	case *Call:
		for _, a := range e.Args {
			inspectExpr(a, f)
		}
	case *Load:
		for _, x := range e.Index {
			inspectExpr(x, f)
		}
	case *Atomic:
		for _, x := range e.Index {
			inspectExpr(x, f)
		}
		inspectExpr(e.Value, f)
		inspectExpr(e.Compare, f)
	}
}

// VarsUsed calls f for every use of a local under stmts: each declaration
// (Decl, ParallelFor, Blocks and Threads variables), assignment (Assign,
// and the results of BlockReduce and BlockScan) and read, in Inspect's
// order.
// assigned is true for Assign targets. It lets passes collect the variables a
// task touches without a type switch of their own.
func VarsUsed(stmts []Stmt, f func(v *Var, assigned bool)) {
	Inspect(stmts, func(n Node) bool {
		switch n := n.(type) {
		case *Decl:
			f(n.Var, false)
		case *Assign:
			f(n.Var, true)
		case *ParallelFor:
			for _, v := range n.Vars {
				f(v, false)
			}
		case *Blocks:
			f(n.Var, false)
		case *Threads:
			f(n.Var, false)
		case *BlockReduce:
			f(n.X, false)
			f(n.Result, true)
		case *BlockScan:
			f(n.X, false)
			f(n.Result, true)
		case *VarRef:
			f(n.Var, false)
		}
		return true
	})
}
