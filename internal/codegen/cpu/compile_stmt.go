package cpu

import (
	"slices"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Control flow. Statements run on the active lanes f.m. A construct that
// narrows the mask (an if branch, a loop, a block after a break) keeps the
// narrowed list in a mask slot of its own and restores f.m when it is done.
//
// break and continue write, for each lane that runs them, an exit code
// naming the loop and the kind into the per-lane register exitR. Every
// block drops lanes with an exit code after a statement that may have set
// one, so they skip the rest of the body; at the end of its body a loop
// takes back its own lanes: those that continued rejoin for Post, those that
// broke leave the loop, and those leaving an outer loop leave this one too,
// keeping their code until that loop sees it.

// exits lists the loops that a statement may leave early (by break or
// continue) and that enclose it.
type exits []*ir.For

func (e exits) union(o exits) exits {
	for _, l := range o {
		if !slices.Contains(e, l) {
			e = append(e, l)
		}
	}
	return e
}

func (e exits) without(l *ir.For) exits {
	return slices.DeleteFunc(slices.Clone(e), func(x *ir.For) bool { return x == l })
}

func (c *compiler) exitCodes(l *ir.For) (brk, cont int32) {
	id := c.loopIDs[l]
	return 2 * id, 2*id + 1
}

// block compiles a list of statements. Temporary registers of a statement
// are free again once it is compiled: statements run one after another.
func (c *compiler) block(list []ir.Stmt) (func(*frame), exits) {
	var fns []func(*frame)
	var ex exits
	slot := -1
	for i, s := range list {
		if d, ok := s.(*ir.Decl); ok && d.Init == nil && d.Var != nil {
			if _, temp := c.isTemp(d.Var); !temp && assignedBeforeRead(d.Var, list[i+1:]) {
				continue // the zero value is never read (deadinit.go)
			}
		}
		mark := c.cur
		fn, sx := c.stmt(s)
		c.cur = mark
		if fn == nil {
			continue
		}
		if len(sx) > 0 {
			if slot < 0 {
				slot = c.maskSlot()
			}
			fn = dropExitedAfter(fn, slot, c.exitR)
			ex = ex.union(sx)
		}
		fns = append(fns, fn)
	}
	switch len(fns) {
	case 0:
		return func(*frame) {}, ex
	case 1:
		return fns[0], ex
	}
	return func(f *frame) {
		for _, s := range fns {
			s(f)
			if f.err != nil || f.m.empty() {
				return
			}
		}
	}, ex
}

func dropExitedAfter(fn func(*frame), slot, exitR int) func(*frame) {
	return func(f *frame) {
		fn(f)
		f.m = dropExited(f.slot(slot), f.m, reg[int32](f, exitR))
	}
}

func (c *compiler) stmt(s ir.Stmt) (func(*frame), exits) {
	c.pos = s.Position()
	c.noAlias = hasAtomic(s)
	if c.task.Blocks != nil {
		if fn, ok := c.blockStmt(s); ok {
			return fn, nil
		}
	}
	switch s := s.(type) {
	case *ir.Decl:
		if s.Init == nil {
			return c.assign(s.Var, &ir.Const{T: s.Var.Type}), nil
		}
		return c.declare(s), nil
	case *ir.Assign:
		return c.assign(s.Var, s.Value), nil
	case *ir.Store:
		return c.store(s), nil
	case *ir.ExprStmt:
		return c.exprStmt(s), nil
	case *ir.If:
		return c.ifStmt(s)
	case *ir.For:
		return c.forStmt(s)
	case *ir.Break:
		return c.jump(s.Loop, true)
	case *ir.Continue:
		return c.jump(s.Loop, false)
	case *ir.ParallelFor:
		c.failf("a parallel loop may appear only at the top level of a kernel or of a stream-parallel group")
	case *ir.StreamParallel:
		c.failf("a stream-parallel group may appear only at the top level of a kernel")
	case *ir.Blocks:
		c.failf("a block loop may appear only at the top level of a kernel or of a stream-parallel group")
	case *ir.Threads, *ir.BlockReduce, *ir.BlockScan:
		c.failf("%T outside a block loop", s)
	case nil:
		c.failf("missing statement")
	}
	c.failf("unsupported statement %T", s)
	return nil, nil
}

// hasAtomic reports whether the expressions of a simple statement contain
// an atomic, which writes memory that a zero-copy load could be reading.
func hasAtomic(s ir.Stmt) bool {
	var es []ir.Expr
	switch s := s.(type) {
	case *ir.Decl:
		es = []ir.Expr{s.Init}
	case *ir.Assign:
		es = []ir.Expr{s.Value}
	case *ir.Store:
		es = append([]ir.Expr{s.Value}, s.Index...)
	case *ir.ExprStmt:
		es = []ir.Expr{s.X}
	case *ir.If:
		es = []ir.Expr{s.Cond}
	case *ir.For:
		es = []ir.Expr{s.Cond}
	}
	for _, e := range es {
		if exprHasAtomic(e) {
			return true
		}
	}
	return false
}

func exprHasAtomic(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Atomic:
		return true
	case *ir.Unary:
		return exprHasAtomic(e.X)
	case *ir.Binary:
		return exprHasAtomic(e.X) || exprHasAtomic(e.Y)
	case *ir.Convert:
		return exprHasAtomic(e.X)
	case *ir.Bitcast:
		return exprHasAtomic(e.X)
	case *ir.Select:
		return exprHasAtomic(e.Cond) || exprHasAtomic(e.X) || exprHasAtomic(e.Y)
	case *ir.Call:
		return slices.ContainsFunc(e.Args, exprHasAtomic)
	case *ir.Load:
		return slices.ContainsFunc(e.Index, exprHasAtomic)
	}
	return false
}

// assign writes a value to a local (per active lane) or, in a serial task,
// to a per-launch temporary.
func (c *compiler) assign(v *ir.Var, e ir.Expr) func(*frame) {
	return c.assignValue(v, c.expr(e))
}

// assignValue is assign of the compiled value x.
func (c *compiler) assignValue(v *ir.Var, x value) func(*frame) {
	if x.typ() != v.Type {
		c.failf("assignment of %v to %s of type %v", x.typ(), v.Name, v.Type)
	}
	if slot, ok := c.isTemp(v); ok {
		if c.task.Kind != lower.Serial {
			c.failf("temporary %s is written in a parallel loop; parallel tasks may only read temporaries", v.Name)
		}
		return assignWord(c, x, scalarWord{slot: slot, temp: true})
	}
	if _, ok := c.index[v]; ok && !c.assigned[v] {
		c.failf("assignment to parallel index %s", v.Name)
	}
	if s, ok := c.uvars[v]; ok && c.declared[v] {
		return assignWord(c, x, scalarWord{slot: s})
	}
	if _, ok := c.vars[v]; !ok {
		c.failf("variable %s is assigned but not declared in this task", v.Name)
	}
	if sh, ok := c.pending[v]; ok {
		// The value above read v; from here on its shadow stands in.
		c.shadow = merged(c.shadow, map[*ir.Var]int{v: sh})
		delete(c.pending, v)
	}
	r := c.regOf(c.shadow, v)
	if r == c.vars[v] {
		return c.linearAssign(v, x, assignTo(x, r))
	}
	return assignTo(x, r)
}

// assignTo writes x to the active lanes of register r.
func assignTo(x value, r int) func(*frame) {
	switch x := x.(type) {
	case *ev[bool]:
		return assignReg(x, r)
	case *ev[int32]:
		return assignReg(x, r)
	case *ev[int64]:
		return assignReg(x, r)
	case *ev[uint32]:
		return assignReg(x, r)
	case *ev[uint64]:
		return assignReg(x, r)
	case *ev[float32]:
		return assignReg(x, r)
	case *ev[float64]:
		return assignReg(x, r)
	case *ev[int8]:
		return assignReg(x, r)
	case *ev[int16]:
		return assignReg(x, r)
	case *ev[uint8]:
		return assignReg(x, r)
	case *ev[uint16]:
		return assignReg(x, r)
	}
	return nil
}

func assignReg[T scalar](x *ev[T], r int) func(*frame) {
	if x.u != nil {
		xu := x.u
		return func(f *frame) {
			v := xu(f)
			if f.err == nil {
				assignUni(reg[T](f, r), v, f.m)
			}
		}
	}
	xv, into := x.v, x.into
	return func(f *frame) {
		if into != nil && f.m.all {
			// Every lane is written: compute straight into the variable.
			into(f, reg[T](f, r))
			return
		}
		v := xv(f)
		if f.err == nil {
			assignVec(reg[T](f, r), v, f.m)
		}
	}
}

// assignWord writes x to a word: a per-launch temporary, in a serial task,
// or a uniform local's scalar slot, whose value is always uniform.
func assignWord(c *compiler, x value, w scalarWord) func(*frame) {
	switch x := x.(type) {
	case *ev[bool]:
		return assignWordT(c, x, w)
	case *ev[int32]:
		return assignWordT(c, x, w)
	case *ev[int64]:
		return assignWordT(c, x, w)
	case *ev[uint32]:
		return assignWordT(c, x, w)
	case *ev[uint64]:
		return assignWordT(c, x, w)
	case *ev[float32]:
		return assignWordT(c, x, w)
	case *ev[float64]:
		return assignWordT(c, x, w)
	case *ev[int8]:
		return assignWordT(c, x, w)
	case *ev[int16]:
		return assignWordT(c, x, w)
	case *ev[uint8]:
		return assignWordT(c, x, w)
	case *ev[uint16]:
		return assignWordT(c, x, w)
	}
	return nil
}

func assignWordT[T scalar](c *compiler, x *ev[T], w scalarWord) func(*frame) {
	s := w.slot
	if !w.temp {
		if x.u == nil {
			c.failf("cpu code generator: a varying value assigned to a uniform variable")
		}
		xu := x.u
		return func(f *frame) {
			if v := xu(f); f.err == nil {
				*scal[T](f, s) = v
			}
		}
	}
	if x.u != nil {
		xu := x.u
		return func(f *frame) {
			if v := xu(f); f.err == nil {
				f.a.Temps[s] = toBits(v)
			}
		}
	}
	// A serial task's single lane is lane 0.
	xv := x.v
	return func(f *frame) {
		if v := xv(f); f.err == nil {
			f.a.Temps[s] = toBits(v[0])
		}
	}
}

func (c *compiler) exprStmt(s *ir.ExprStmt) func(*frame) {
	var x value
	if a, ok := s.X.(*ir.Atomic); ok {
		x = c.atomic(a, true) // the old value is unused: maybe a reduction
	} else {
		x = c.expr(s.X)
	}
	switch x := x.(type) {
	case *ev[bool]:
		return discard(x)
	case *ev[int32]:
		return discard(x)
	case *ev[int64]:
		return discard(x)
	case *ev[uint32]:
		return discard(x)
	case *ev[uint64]:
		return discard(x)
	case *ev[float32]:
		return discard(x)
	case *ev[float64]:
		return discard(x)
	case *ev[int8]:
		return discard(x)
	case *ev[int16]:
		return discard(x)
	case *ev[uint8]:
		return discard(x)
	case *ev[uint16]:
		return discard(x)
	}
	return nil
}

func discard[T scalar](x *ev[T]) func(*frame) {
	if x.u != nil {
		xu := x.u
		return func(f *frame) { xu(f) }
	}
	xv := x.v
	return func(f *frame) { xv(f) }
}

func (c *compiler) cond(e ir.Expr) *ev[bool] {
	x := c.expr(e)
	if x.typ() != ir.Bool {
		c.failf("condition has type %v, want bool", x.typ())
	}
	return as[bool](c, x)
}

func (c *compiler) ifStmt(s *ir.If) (func(*frame), exits) {
	mark := c.cur
	conv, condR := c.convertible(s), -1
	if conv {
		condR = c.tmp()
	}
	cond := c.cond(s.Cond)
	if conv && cond.u == nil && cond.rng == nil {
		return c.convertedIf(s, cond, condR), nil
	}
	// The condition is consumed (as masks) before either branch runs, so
	// the branches may reuse its registers.
	c.cur = mark
	thenFn, tx := c.block(s.Then)
	var elseFn func(*frame)
	var ex exits
	if len(s.Else) > 0 {
		elseFn, ex = c.block(s.Else)
	}
	ex = tx.union(ex)
	if cond.u != nil {
		cu := cond.u
		return func(f *frame) {
			b := cu(f)
			if f.err != nil {
				return
			}
			if b {
				thenFn(f)
			} else if elseFn != nil {
				elseFn(f)
			}
		}, ex
	}
	cv, rng, ts := cond.v, cond.rng, c.maskSlot()
	es := -1
	if elseFn != nil {
		es = c.maskSlot()
	}
	split := c.mode == modeRow
	return func(f *frame) {
		m := f.m
		if rng != nil {
			if s, ok := rng(f); ok {
				if f.err != nil {
					return
				}
				if onSet(f, s, thenFn, ts, split); f.err == nil && elseFn != nil {
					onSet(f, s.not(), elseFn, es, split)
				}
				return
			}
		}
		var tm, em mask
		b := cv(f)
		if f.err != nil {
			return
		}
		tm = narrow(f.slot(ts), m, b, true)
		if es >= 0 && len(tm.idx) < len(m.idx) {
			em = narrow(f.slot(es), m, b, false)
		}
		if !tm.empty() {
			f.m = tm
			thenFn(f)
			f.m = m
			if f.err != nil {
				return
			}
		}
		if !em.empty() {
			f.m = em
			elseFn(f)
			f.m = m
		}
	}, ex
}

// onSet runs fn on the active lanes in lane set s. When every lane is
// active and split allows (row batches), each run of s is a batch of its
// own, every lane of it active, so fn keeps its all-lanes fast paths;
// otherwise the mask narrows, to a subslice of the list or to a list in
// mask slot ms.
func onSet(f *frame, s laneSet, fn func(*frame), ms int, split bool) {
	m := f.m
	if m.all && split {
		r, k := s.runs(f.n)
		for _, r := range r[:k] {
			if f.sub(r.lo, r.hi, fn); f.err != nil {
				return
			}
		}
		return
	}
	sub := restrict(f, m, s, ms)
	if sub.empty() {
		return
	}
	f.m = sub
	fn(f)
	f.m = m
}

// jump compiles break (brk) or continue to loop l, the innermost loop when
// nil.
func (c *compiler) jump(l *ir.For, brk bool) (func(*frame), exits) {
	what := "continue"
	if brk {
		what = "break"
	}
	if l == nil {
		if len(c.loops) == 0 {
			c.failf("%s outside a loop", what)
		}
		l = c.loops[len(c.loops)-1]
	} else if !slices.Contains(c.loops, l) {
		c.failf("%s to a loop that does not enclose it", what)
	}
	b, k := c.exitCodes(l)
	code := k
	if brk {
		code = b
	}
	r := c.exitR
	return func(f *frame) {
		x := reg[int32](f, r)
		for _, k := range f.m.idx {
			x[k] = code
		}
	}, exits{l}
}

func (c *compiler) forStmt(s *ir.For) (func(*frame), exits) {
	initFn, ix := c.block(s.Init)
	if len(ix) > 0 {
		c.failf("break or continue in a loop's init statement")
	}
	c.pos = s.Pos
	c.noAlias = s.Cond != nil && exprHasAtomic(s.Cond)
	mark := c.cur
	conv, activeR := c.loopConvertible(s), -1
	if conv {
		activeR = c.tmp()
	}
	var cond *ev[bool]
	if s.Cond != nil {
		cond = c.cond(s.Cond)
	}
	if conv && cond.u == nil {
		return c.convertedLoop(s, initFn, cond, activeR), nil
	}
	c.cur = mark // the condition is consumed before the body runs
	c.loops = append(c.loops, s)
	bodyFn, bx := c.block(s.Body)
	c.loops = c.loops[:len(c.loops)-1]
	postFn, px := c.block(s.Post)
	if len(px) > 0 {
		c.failf("break or continue in a loop's post statement")
	}
	outer := bx.without(s)
	ls := c.maskSlot()
	brk, cont := int32(0), int32(0)
	if len(bx) > 0 {
		brk, cont = c.exitCodes(s)
	}
	exitR := c.exitR
	var cu func(*frame) bool
	var cv func(*frame) []bool
	var rng rangeFn
	if cond != nil {
		cu, cv, rng = cond.u, cond.v, cond.rng
	}
	return func(f *frame) {
		m := f.m
		initFn(f)
		if f.err != nil {
			return
		}
		l := m
		for {
			if st := f.a.Stop; st != nil && st.Load() {
				f.err = ErrStopped
				f.m = m
				return
			}
			f.m = l
			switch {
			case cu != nil:
				b := cu(f)
				if f.err != nil || !b {
					f.m = m
					return
				}
			case cv != nil:
				// A lane set (i < n of a contiguous i) narrows the lanes
				// by slicing, with no vector of the condition.
				if s, ok := laneSetOf(f, rng); ok {
					l = restrict(f, l, s, ls)
				} else {
					b := cv(f)
					if f.err != nil {
						f.m = m
						return
					}
					l = narrow(f.slot(ls), l, b, true)
				}
				if f.err != nil {
					f.m = m
					return
				}
				if l.empty() {
					f.m = m
					return
				}
				f.m = l
			}
			bodyFn(f)
			if f.err != nil {
				f.m = m
				return
			}
			if brk != 0 {
				l = loopExits(f.slot(ls), l, reg[int32](f, exitR), brk, cont)
				if l.empty() {
					f.m = m
					return
				}
			}
			f.m = l
			postFn(f)
			if f.err != nil {
				f.m = m
				return
			}
		}
	}, outer
}

// loopExits ends an iteration for the lanes of l: those that continued
// rejoin, those that broke leave, and those leaving an outer loop leave
// this one too, keeping their code.
func loopExits(dst []int32, l mask, x []int32, brk, cont int32) mask {
	c := 0
	for _, k := range l.idx {
		dst[c] = k
		switch x[k] {
		case 0:
			c++
		case cont:
			x[k] = 0
			c++
		case brk:
			x[k] = 0
		}
	}
	if c == len(l.idx) {
		return l
	}
	return mask{idx: dst[:c]}
}

// laneSetOf is rng's lane set, ok=false where rng is nil or gives none.
func laneSetOf(f *frame, rng rangeFn) (laneSet, bool) {
	if rng == nil {
		return laneSet{}, false
	}
	return rng(f)
}
