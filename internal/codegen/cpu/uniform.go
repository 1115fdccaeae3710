package cpu

import "github.com/quadrants-go/qd/internal/ir"

// Uniform variables. A local that every lane of a batch always holds the
// same value in, such as the counter of an inner loop with a fixed trip
// count (for k := 0; k < 32; k++), or any local of a serial task, lives in
// one scalar slot instead of a lane register: reading it is a uniform
// value, so loop conditions on it need no mask and arithmetic on it no
// vector pass.
//
// A local is uniform when every assignment to it (its declaration
// included) assigns a uniform value in a uniform context: every enclosing
// if has a uniform condition, and every enclosing loop has a uniform
// condition and no lane can leave it early on its own (no break or continue
// out of it under a varying condition). Uniform values are those the
// compiler computes as uniform: constants, scalar parameters, lengths,
// temporaries, the outer indices of a row batch, uniform locals, and
// operations, intrinsic calls and loads over those. The set is found by
// iterating to a fixed point from "every local is uniform".

// uniformity is the state of the analysis of one body.
type uniformity struct {
	c        *compiler
	local    map[*ir.Var]bool // declared locals (not temporaries)
	decls    []*ir.Var        // the same, in declaration order
	assigned map[*ir.Var]bool // variables the body assigns to
	varying  map[*ir.Var]bool
	changed  bool
}

// uniformVars returns the locals of body that can live in scalar slots, in
// declaration order.
func uniformVars(c *compiler, body []ir.Stmt) []*ir.Var {
	return analyzeUniform(c, body).vars()
}

// analyzeUniform runs the analysis over body.
func analyzeUniform(c *compiler, body []ir.Stmt) *uniformity {
	u := &uniformity{c: c, local: map[*ir.Var]bool{}, assigned: map[*ir.Var]bool{}, varying: map[*ir.Var]bool{}}
	ir.Inspect(body, func(n ir.Node) bool {
		switch s := n.(type) {
		case *ir.Decl:
			if _, temp := c.isTemp(s.Var); !temp && s.Var != nil && !u.local[s.Var] {
				u.local[s.Var] = true
				u.decls = append(u.decls, s.Var)
			}
		case *ir.Assign:
			u.assigned[s.Var] = true
		}
		return true
	})
	if b := c.task.Blocks; b != nil {
		// Per-thread locals hold one value per thread (lane) by definition.
		for _, v := range b.PerThread {
			u.varying[v] = true
		}
	}
	for u.changed = true; u.changed; {
		u.changed = false
		u.block(body, true)
	}
	return u
}

// vars lists the uniform locals in declaration order.
func (u *uniformity) vars() []*ir.Var {
	var out []*ir.Var
	for _, v := range u.decls {
		if !u.varying[v] {
			out = append(out, v)
		}
	}
	return out
}

func (u *uniformity) block(list []ir.Stmt, ctx bool) {
	for _, s := range list {
		switch s := s.(type) {
		case *ir.Decl:
			u.assign(s.Var, s.Init, ctx)
		case *ir.Assign:
			u.assign(s.Var, s.Value, ctx)
		case *ir.If:
			c := ctx && u.expr(s.Cond)
			u.block(s.Then, c)
			u.block(s.Else, c)
		case *ir.For:
			u.block(s.Init, ctx)
			c := ctx && u.loopUniform(s)
			u.block(s.Body, c)
			u.block(s.Post, c)
		case *ir.Threads:
			// Its lanes are the block's threads, as a parallel loop's are
			// its iterations: the body's context is the enclosing one.
			u.block(s.Body, ctx)
		}
	}
}

func (u *uniformity) assign(v *ir.Var, e ir.Expr, ctx bool) {
	if !u.local[v] || u.varying[v] {
		return
	}
	if !ctx || e != nil && !u.expr(e) {
		u.varying[v] = true
		u.changed = true
	}
}

// loopUniform reports whether every lane that enters l runs the same
// iterations: a uniform condition, and no early exit out of l under a
// varying condition.
func (u *uniformity) loopUniform(l *ir.For) bool {
	if l.Cond != nil && !u.expr(l.Cond) {
		return false
	}
	return !u.divergentExit(l, l.Body, false, nil) && !u.divergentExit(l, l.Post, false, nil)
}

// divergentExit reports whether list, inside loop l, holds a break or
// continue that leaves l (or a loop around it) in a varying context
// (div). inner are the loops inside l that enclose list.
func (u *uniformity) divergentExit(l *ir.For, list []ir.Stmt, div bool, inner []*ir.For) bool {
	for _, s := range list {
		var target *ir.For
		switch s := s.(type) {
		case *ir.Break:
			target = s.Loop
		case *ir.Continue:
			target = s.Loop
		case *ir.If:
			d := div || !u.expr(s.Cond)
			if u.divergentExit(l, s.Then, d, inner) || u.divergentExit(l, s.Else, d, inner) {
				return true
			}
			continue
		case *ir.For:
			d := div || !u.loopUniform(s)
			in := append(inner[:len(inner):len(inner)], s)
			if u.divergentExit(l, s.Init, div, inner) || u.divergentExit(l, s.Body, d, in) || u.divergentExit(l, s.Post, d, in) {
				return true
			}
			continue
		default:
			continue
		}
		if target == nil && len(inner) > 0 {
			target = inner[len(inner)-1]
		}
		internal := false
		for _, x := range inner {
			internal = internal || x == target
		}
		if div && !internal {
			return true
		}
	}
	return false
}

// expr reports whether e is uniform, as the compiler will compile it.
func (u *uniformity) expr(e ir.Expr) bool {
	switch e := e.(type) {
	case nil:
		return true
	case *ir.Const, *ir.ParamRef, *ir.Len:
		return true
	case *ir.VarRef:
		return u.varRef(e.Var)
	case *ir.Atomic:
		return false
	case *ir.Unary:
		return u.expr(e.X)
	case *ir.Binary:
		return u.expr(e.X) && u.expr(e.Y)
	case *ir.Convert:
		return u.expr(e.X)
	case *ir.Bitcast:
		return u.expr(e.X)
	case *ir.Select:
		return u.expr(e.Cond) && u.expr(e.X) && u.expr(e.Y)
	case *ir.Call:
		for _, a := range e.Args {
			if !u.expr(a) {
				return false
			}
		}
		return true
	case *ir.Load:
		for _, x := range e.Index {
			if !u.expr(x) {
				return false
			}
		}
		return true
	}
	return false
}

func (u *uniformity) varRef(v *ir.Var) bool {
	c := u.c
	if _, temp := c.isTemp(v); temp {
		return true
	}
	if b := c.task.Blocks; b != nil {
		if v == b.Var {
			return true // the block index: one value for the whole block
		}
		if _, thread := c.index[v]; thread {
			return false // a thread index: lane k is thread k
		}
	}
	if c.task.Loop != nil && c.mode != modeSerial {
		vars := c.task.Loop.Vars
		for d, x := range vars {
			if x == v {
				// The outer indices of a row batch are uniform; assigned
				// indices are per-lane variables.
				return c.mode == modeRow && d < len(vars)-1 && !u.assigned[v]
			}
		}
	}
	return u.local[v] && !u.varying[v]
}
