package cpu

import (
	"slices"

	"github.com/quadrants-go/qd/internal/ir"
)

// Converted ifs. An if on a varying condition (not a lane set) whose
// branches only assign locals from a few cheap operations that cannot fail,
// such as the piecewise v = v*v / v = 0.5 - v of a clamp, runs both
// branches over every lane and then picks each lane's result, instead of
// narrowing the mask to a list of lanes for each branch. Each branch works
// on shadow registers of the locals it assigns (copies of their values
// when it may read them first), so both see the values from before the if;
// a select per local then keeps, lane by lane, the branch the condition
// chose. Nothing can fail or write memory on a lane the condition did not
// choose: loads, atomics, calls, integer division and shifts (but by a
// constant, which cannot fail) are not converted.

// convMax bounds the expression nodes of a converted if: both branches
// run on every lane, so a long branch costs more than the mask it saves.
const convMax = 24

// convertible reports whether s may run as selects.
func (c *compiler) convertible(s *ir.If) bool {
	n := 0
	return c.mode != modeSerial && c.convOK(s, &n) && n <= convMax
}

func (c *compiler) convOK(s *ir.If, n *int) bool {
	if !cheapExpr(s.Cond, n) {
		return false
	}
	for _, st := range slices.Concat(s.Then, s.Else) {
		switch st := st.(type) {
		case *ir.Assign:
			if _, ok := c.vars[st.Var]; !ok || !cheapExpr(st.Value, n) {
				return false
			}
		case *ir.If:
			if !c.convOK(st, n) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// cheapExpr reports whether e cannot fail and costs a few vector passes,
// counting its nodes in n.
func cheapExpr(e ir.Expr, n *int) bool {
	ok := true
	ir.InspectExpr(e, func(x ir.Node) bool {
		*n++
		switch x := x.(type) {
		case *ir.Const, *ir.ParamRef, *ir.VarRef, *ir.Len, *ir.Unary, *ir.Convert, *ir.Select:
		case *ir.Binary:
			// Integer division fails on a zero divisor, a shift on a
			// negative count; with a constant that cannot happen.
			k, isConst := x.Y.(*ir.Const)
			switch {
			case (x.Op == ir.Div || x.Op == ir.Rem) && x.X.Type().IsInteger():
				ok = isConst && k.Bits != 0
			case x.Op.IsShift():
				ok = isConst && (k.T.IsUnsigned() || int64(k.Bits) >= 0)
			}
		default:
			ok = false // loads, atomics, calls
		}
		return ok
	})
	return ok
}

// assignedIn lists the locals that list assigns, nested ifs included.
func assignedIn(list []ir.Stmt) []*ir.Var {
	var out []*ir.Var
	ir.Inspect(list, func(x ir.Node) bool {
		if a, ok := x.(*ir.Assign); ok && !slices.Contains(out, a.Var) {
			out = append(out, a.Var)
		}
		return true
	})
	return out
}

// convertedIf compiles s, convertible, whose condition cond (varying) was
// compiled right after register condR was reserved.
func (c *compiler) convertedIf(s *ir.If, cond *ev[bool], condR int) func(*frame) {
	cv := cond.v
	steps := []func(*frame){func(f *frame) {
		b := cv(f)
		if f.err == nil {
			copy(reg[bool](f, condR), b)
		}
	}}
	thenSteps, thenMap := c.shadowed(s.Then)
	elseSteps, elseMap := c.shadowed(s.Else)
	steps = slices.Concat(steps, thenSteps, elseSteps)
	vars := assignedIn(s.Then)
	for _, v := range assignedIn(s.Else) {
		if !slices.Contains(vars, v) {
			vars = append(vars, v)
		}
	}
	for _, v := range vars {
		cur := c.regOf(c.shadow, v)
		t, e := cur, cur
		if sh, ok := thenMap[v]; ok {
			t = sh
		}
		if sh, ok := elseMap[v]; ok {
			e = sh
		}
		steps = append(steps, selectRegs(v.Type, condR, t, e, cur))
		if before, after := c.linearSelected(v); before != nil {
			steps = append([]func(*frame){before}, append(steps, after)...)
		}
	}
	return runSteps(steps)
}

// shadowed compiles list to run on every lane with shadow registers for
// the locals it assigns (m), leaving the locals themselves untouched: the
// steps copy a local into its shadow first when list may read it before
// assigning all of it.
func (c *compiler) shadowed(list []ir.Stmt) (steps []func(*frame), m map[*ir.Var]int) {
	// A nested converted if compiles inside list: keep the shadows of the
	// enclosing list, the pending ones included, and give them back after.
	outer, outerPending := c.shadow, c.pending
	m, early := map[*ir.Var]int{}, map[*ir.Var]int{}
	c.pending = map[*ir.Var]int{}
	for _, v := range assignedIn(list) {
		m[v] = c.tmp()
		if firstAssigns(v, list) {
			// The first statement to touch v assigns all of it: until
			// then list reads v itself, no copy needed.
			c.pending[v] = m[v]
			continue
		}
		early[v] = m[v]
		steps = append(steps, copyReg(v.Type, c.regOf(outer, v), m[v]))
	}
	c.shadow = merged(outer, early)
	fn, _ := c.block(list)
	steps = append(steps, fn)
	c.shadow, c.pending = outer, outerPending
	return steps, m
}

// runSteps runs steps in order, stopping at a runtime error.
func runSteps(steps []func(*frame)) func(*frame) {
	return func(f *frame) {
		for _, st := range steps {
			if st(f); f.err != nil {
				return
			}
		}
	}
}

// firstAssigns reports whether the first statement of list that touches v
// is an assignment to it (at the top level of list, so on every lane).
func firstAssigns(v *ir.Var, list []ir.Stmt) bool {
	for _, s := range list {
		if a, ok := s.(*ir.Assign); ok && a.Var == v {
			return true
		}
		if stmtReads(s, v) || slices.Contains(assignedIn([]ir.Stmt{s}), v) {
			return false
		}
	}
	return false
}

// merged is outer with m's entries added.
func merged(outer, m map[*ir.Var]int) map[*ir.Var]int {
	out := make(map[*ir.Var]int, len(outer)+len(m))
	for v, r := range outer {
		out[v] = r
	}
	for v, r := range m {
		out[v] = r
	}
	return out
}

// regOf is the register that holds local v under the shadows of shadow.
func (c *compiler) regOf(shadow map[*ir.Var]int, v *ir.Var) int {
	if r, ok := shadow[v]; ok {
		return r
	}
	return c.vars[v]
}

// copyReg copies register src to dst, every lane.
func copyReg(t ir.Type, src, dst int) func(*frame) {
	switch t.Size() {
	case 1:
		return func(f *frame) { copy(reg[bool](f, dst), reg[bool](f, src)) }
	case 2:
		return func(f *frame) { copy(reg[uint16](f, dst), reg[uint16](f, src)) }
	case 4:
		return func(f *frame) { copy(reg[uint32](f, dst), reg[uint32](f, src)) }
	}
	return func(f *frame) { copy(reg[uint64](f, dst), reg[uint64](f, src)) }
}

// selectRegs writes, on the active lanes, register t where register cond
// holds and register e elsewhere, to register d.
func selectRegs(t ir.Type, cond, tr, er, d int) func(*frame) {
	switch t.Size() {
	case 1:
		return selectT[uint8](cond, tr, er, d)
	case 2:
		return selectT[uint16](cond, tr, er, d)
	case 4:
		return selectT[uint32](cond, tr, er, d)
	}
	return selectT[uint64](cond, tr, er, d)
}

// selectT is selectRegs on the bits of the values. It does not branch on
// the condition, which in a converted if is as good as random.
func selectT[T uint8 | uint16 | uint32 | uint64](cond, tr, er, d int) func(*frame) {
	var z T
	simd, _ := any(simdSel32).(func(d []T, c []bool, t, e []T))
	if _, ok := any(z).(uint64); ok {
		simd, _ = any(simdSel64).(func(d []T, c []bool, t, e []T))
	}
	return func(f *frame) {
		c, t, e, out := reg[uint8](f, cond), reg[T](f, tr), reg[T](f, er), reg[T](f, d)
		if f.m.all && simd != nil {
			simd(out, reg[bool](f, cond), t, e)
			return
		}
		if f.m.all {
			t, e, out = t[:len(c)], e[:len(c)], out[:len(c)]
			for k, b := range c {
				out[k] = e[k] ^ (t[k]^e[k])&-T(b) // a bool is 0 or 1
			}
			return
		}
		for _, k := range f.m.idx {
			out[k] = e[k] ^ (t[k]^e[k])&-T(c[k])
		}
	}
}
