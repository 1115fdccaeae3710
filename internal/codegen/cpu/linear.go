package cpu

import (
	"slices"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Contiguous locals. In a row batch the innermost parallel index (a
// thread loop's index, in a block task) is contiguous, lane k holding
// base+k, and so is a uniform offset from it (ev.lin): loads and stores
// by it are a bounds check of the end lanes and a copy, and comparisons
// of it lane sets. A local that names such an index, i := b*bs + t or
// k := j + 1, declared with it and never assigned again, keeps that: its
// declaration notes the offset of its lane 0 from the contiguous index in
// a scalar slot, and reading it gives lin from there. The offset, not
// lane 0's value, is kept because an if on a lane set runs a branch as a
// batch of its own from a later lane (frame.sub), which moves the index
// and lane 0 together. A read sees the lanes the declaration wrote, as
// any read of a local in its scope does: the declaration ran on every
// lane active there.

//
// A local assigned after its declaration, such as the i of
// for i := b*bs + t; i < n; i += stride, stays contiguous as long as
// each assignment gives it a contiguous value on every lane that can read
// it (linearCandidates finds the locals whose every assignment has that
// form). Whether an assignment did is known only at run time: one under
// a narrower mask than the declaration's (a lane that left the loop
// keeps its old i) leaves the lanes apart, and a flag slot then says so,
// until an assignment on all of them again; ev.lin reports it, and the
// users of lin take the vector meanwhile.

// A local declared with a quasi-affine value (quasi.go), tx := t%32 or
// ty := t/32, keeps its form the same way: the declaration notes the
// form's base in the offset slot.
//
// Declarations and assignments of such locals do not write their
// registers while the lanes hold the form: a register is stale until a
// use of the vector, or an assignment on some lanes only, writes it from
// the form (materialize): a pass saved per declaration, and per trip of
// for i := ...; ...; i += stride.

// linSlot are the scalar slots of a contiguous or quasi-affine local:
// off, its lane 0's offset from the contiguous index (the form's base);
// st, its state (linApart, linHeld or linStale); n, the number of lanes
// active at its declaration; lo and w, the lanes of the registers the
// declaration's batch viewed (frame.off, frame.n). form is the local's
// form with no base (lin: b + t).
type linSlot struct {
	off, st, n, lo, w int
	assigned          bool
	form              quasi
}

// The states of a contiguous local.
const (
	linApart int64 = iota // the lanes hold no form: the register holds them
	linHeld               // the form holds, and the register holds the lanes
	linStale              // the form holds; the register is stale
)

// linForm is b + t, the form of a contiguous value.
var linForm = quasi{s: 1}

// linOf is x's lin, nil for a value without one.
func linOf(x value) func(*frame) (int64, bool) {
	switch x := x.(type) {
	case *ev[int32]:
		return x.lin
	case *ev[int64]:
		return x.lin
	case *ev[uint32]:
		return x.lin
	case *ev[uint64]:
		return x.lin
	}
	return nil
}

// baseOf is the base of x's form, form: for lin, b + t; else x's quasi
// form (an i64 without lin). nil when x has neither.
func (c *compiler) baseOf(x value) (base func(*frame) (int64, bool), form quasi) {
	if lin, last := linOf(x), c.lastDim(); lin != nil {
		return func(f *frame) (int64, bool) {
			b, ok := lin(f)
			return b - f.ix[last], ok
		}, linForm
	}
	if x, ok := x.(*ev[int64]); ok && x.qa != nil {
		q := *x.qa
		q.base = nil
		return x.qa.base, q
	}
	return nil, quasi{}
}

// declare compiles a declaration with a value.
func (c *compiler) declare(s *ir.Decl) func(*frame) {
	x := c.expr(s.Init)
	fn := c.assignValue(s.Var, x)
	if c.mode != modeRow || c.uni == nil {
		return fn
	}
	if _, reg := c.vars[s.Var]; !reg {
		return fn // a uniform local or a temporary
	}
	assigned := c.uni.assigned[s.Var]
	base, form := c.baseOf(x)
	if assigned && (!c.linCand[s.Var] || !form.isLin()) {
		base, form = nil, linForm // contiguous values only
		if !c.linCand[s.Var] {
			return fn
		}
	}
	if !assigned && base == nil {
		return fn
	}
	ls := linSlot{off: c.nscal, st: c.nscal + 1, n: c.nscal + 2, lo: c.nscal + 3, w: c.nscal + 4, assigned: assigned, form: form}
	c.nscal += 5
	c.lins[s.Var] = ls
	return func(f *frame) {
		*scal[int64](f, ls.n) = int64(len(f.m.idx))
		*scal[int64](f, ls.lo), *scal[int64](f, ls.w) = int64(f.off), int64(f.n)
		if base != nil {
			b, ok := base(f)
			if f.err != nil {
				return
			}
			if ok {
				*scal[int64](f, ls.off) = b
				*scal[int64](f, ls.st) = linStale
				return
			}
		}
		if fn(f); f.err == nil {
			*scal[int64](f, ls.st) = linApart
		}
	}
}

// linearAssign wraps fn, the assignment of x to contiguous local v (not
// through a shadow), to keep v's slots: contiguous again when x is and
// every lane active at the declaration is active here, and then not
// written to the register.
func (c *compiler) linearAssign(v *ir.Var, x value, fn func(*frame)) func(*frame) {
	ls, ok := c.lins[v]
	if !ok || !ls.assigned {
		return fn
	}
	lin, last, mat := linOf(x), c.lastDim(), c.materializer(v)
	return func(f *frame) {
		if lin != nil && int64(len(f.m.idx)) == *scal[int64](f, ls.n) {
			b, ok := lin(f)
			if f.err != nil {
				return
			}
			if ok {
				*scal[int64](f, ls.off) = b - f.ix[last]
				*scal[int64](f, ls.st) = linStale
				return
			}
		}
		// Some lanes only, or lanes apart: the others keep their values,
		// which must be in the register first.
		mat(f)
		if fn(f); f.err == nil {
			*scal[int64](f, ls.st) = linApart
		}
	}
}

// materializer writes the register of local v from its form when it is
// stale, every lane its declaration's batch viewed.
func (c *compiler) materializer(v *ir.Var) func(*frame) {
	r, ls, last := c.vars[v], c.lins[v], c.lastDim()
	switch v.Type {
	case ir.I32:
		return materializeT[int32](r, ls, last)
	case ir.I64:
		return materializeT[int64](r, ls, last)
	case ir.U32:
		return materializeT[uint32](r, ls, last)
	}
	return materializeT[uint64](r, ls, last)
}

func materializeT[T integer](r int, ls linSlot, last int) func(*frame) {
	q := ls.form
	return func(f *frame) {
		if *scal[int64](f, ls.st) != linStale {
			return
		}
		// Register lane L of the batch is lane L - f.off of its view, of
		// index t = f.ix[last] + L - f.off.
		b, t0 := *scal[int64](f, ls.off), f.ix[last]-int64(f.off)
		lo, w := int(*scal[int64](f, ls.lo)), int(*scal[int64](f, ls.w))
		d := unsafe.Slice((*T)(unsafe.Pointer(&f.regs[r*Batch])), lo+w)[lo:]
		if q.isLin() {
			for k := range d {
				d[k] = T(b + t0 + int64(lo+k))
			}
		} else {
			for k := range d {
				d[k] = T(quasiAt(&q, b, t0+int64(lo+k)))
			}
		}
		*scal[int64](f, ls.st) = linHeld
	}
}

// linearSelected are the steps before and after a converted if or loop
// writes v's register with selects, nil for a local that is not an
// assigned contiguous one: the register must hold the lanes first, and
// they are not contiguous after.
func (c *compiler) linearSelected(v *ir.Var) (before, after func(*frame)) {
	ls, ok := c.lins[v]
	if !ok || !ls.assigned {
		return nil, nil
	}
	return c.materializer(v), func(f *frame) { *scal[int64](f, ls.st) = linApart }
}

// linearRef is a read of contiguous or quasi-affine local v, nil if v is
// not one (or is being stood in for by a shadow register, ifconv.go).
func (c *compiler) linearRef(v *ir.Var) value {
	ls, ok := c.lins[v]
	if !ok {
		return nil
	}
	r, last := c.regOf(c.shadow, v), c.lastDim()
	if r != c.vars[v] {
		return nil
	}
	mat := c.materializer(v)
	base := func(f *frame) (int64, bool) {
		return *scal[int64](f, ls.off), *scal[int64](f, ls.st) != linApart
	}
	if !ls.form.isLin() {
		q := ls.form
		q.base = base
		return &ev[int64]{v: func(f *frame) []int64 { mat(f); return reg[int64](f, r) }, qa: &q}
	}
	lin := func(f *frame) (int64, bool) {
		b, ok := base(f)
		return b + f.ix[last], ok
	}
	switch v.Type {
	case ir.I32:
		return linearT[int32](r, lin, mat)
	case ir.I64:
		return linearT[int64](r, lin, mat)
	case ir.U32:
		return linearT[uint32](r, lin, mat)
	case ir.U64:
		return linearT[uint64](r, lin, mat)
	}
	return nil
}

func linearT[T integer](r int, lin func(*frame) (int64, bool), mat func(*frame)) value {
	return &ev[T]{v: func(f *frame) []T { mat(f); return reg[T](f, r) }, lin: lin}
}

// linearCandidates finds the assigned locals that may stay contiguous:
// integer lane registers declared with a value, whose declaration and
// every assignment give a contiguous form, the contiguous index or such
// a local (assigned or not) plus or minus a uniform value.
func (c *compiler) linearCandidates(body []ir.Stmt) {
	c.linCand = map[*ir.Var]bool{}
	if c.mode != modeRow || c.uni == nil {
		return
	}
	inits := map[*ir.Var]ir.Expr{}
	var values []*ir.Assign
	ir.Inspect(body, func(n ir.Node) bool {
		switch s := n.(type) {
		case *ir.Decl:
			if _, reg := c.vars[s.Var]; reg && s.Init != nil && s.Var.Type.IsInteger() {
				inits[s.Var] = s.Init
				if c.uni.assigned[s.Var] && !c.perThread(s.Var) {
					c.linCand[s.Var] = true
				}
			}
		case *ir.Assign:
			values = append(values, s)
		}
		return true
	})
	for changed := true; changed; {
		changed = false
		drop := func(v *ir.Var) {
			if c.linCand[v] {
				delete(c.linCand, v)
				changed = true
			}
		}
		for v := range c.linCand {
			if !c.linShaped(inits[v], inits) {
				drop(v)
			}
		}
		for _, a := range values {
			if c.linCand[a.Var] && !c.linShaped(a.Value, inits) {
				drop(a.Var)
			}
		}
	}
}

// linShaped reports whether e has the contiguous form of linearCandidates.
func (c *compiler) linShaped(e ir.Expr, inits map[*ir.Var]ir.Expr) bool {
	switch e := e.(type) {
	case *ir.VarRef:
		v := e.Var
		if d, ok := c.index[v]; ok {
			return d == c.lastDim() && !c.assigned[v]
		}
		if c.linCand[v] {
			return true
		}
		init, ok := inits[v]
		return ok && !c.uni.assigned[v] && c.linShaped(init, inits)
	case *ir.Binary:
		if !e.Type().IsInteger() {
			return false
		}
		switch e.Op {
		case ir.Add:
			return c.linShaped(e.X, inits) && c.uni.expr(e.Y) || c.uni.expr(e.X) && c.linShaped(e.Y, inits)
		case ir.Sub:
			return c.linShaped(e.X, inits) && c.uni.expr(e.Y)
		}
	}
	return false
}

// perThread reports whether v is a per-thread local of the block loop.
func (c *compiler) perThread(v *ir.Var) bool {
	return c.task.Blocks != nil && slices.Contains(c.task.Blocks.PerThread, v)
}

// lastDim is the dimension of the contiguous index of a row batch.
func (c *compiler) lastDim() int {
	if c.task.Loop != nil {
		return len(c.task.Loop.Vars) - 1
	}
	return 0 // a thread loop's index: the one dimension of a block
}

// isLin reports whether q is b + t.
func (q *quasi) isLin() bool { return q.w == 0 && q.s == 1 && q.d == 0 }
