package lower

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
)

// Lower verifies k (ir.Verify), checks where parallel loops and
// stream-parallel groups appear, and splits k into tasks. Every error it
// returns is an *ir.Error, or an errors.Join of several in source order (use
// errors.As to get the first); k is not modified.
func Lower(k *ir.Kernel) (*Plan, error) {
	if err := ir.Verify(k); err != nil {
		return nil, err
	}
	l := &lowerer{k: k}
	l.checkPlacement()
	if err := l.err(); err != nil {
		return nil, err
	}
	p := &Plan{Kernel: k, TempSlot: map[*ir.Var]int{}, Hash: ir.HashKernel(k)}
	l.plan = p
	if hasGroups(k.Body) {
		for _, s := range k.Body {
			p.Groups++
			l.split(s.(*ir.StreamParallel).Body, p.Groups)
		}
	} else {
		l.split(k.Body, 0)
	}
	l.temps()
	if err := l.err(); err != nil {
		return nil, err
	}
	l.reductions()
	return p, nil
}

type lowerer struct {
	k    *ir.Kernel
	plan *Plan
	errs []error
	// decls maps each direct top-level Decl's Var (of the kernel body or of a
	// group body) to its Decl, in declaration order through declOrder: the
	// candidates for temps.
	decls     map[*ir.Var]*ir.Decl
	declOrder []*ir.Var
}

func (l *lowerer) errorf(pos ir.Pos, format string, args ...any) {
	l.errs = append(l.errs, ir.Errorf(pos, l.k.Name, format, args...))
}

func (l *lowerer) err() error {
	switch len(l.errs) {
	case 0:
		return nil
	case 1:
		return l.errs[0]
	}
	return errors.Join(l.errs...)
}

func hasGroups(body []ir.Stmt) bool {
	for _, s := range body {
		if _, ok := s.(*ir.StreamParallel); ok {
			return true
		}
	}
	return false
}

// place is what encloses a statement, for placement checks and messages.
type place uint8

const (
	atKernelTop place = iota // a direct statement of the kernel body
	atGroupTop               // a direct statement of a group body
	inIf                     // inside an if statement
	inFor                    // inside a serial for loop
	inParallel               // inside a parallel loop
)

func (p place) phrase() string {
	switch p {
	case inIf:
		return "inside an if statement"
	case inFor:
		return "inside a serial for loop"
	case inParallel:
		return "inside a parallel loop"
	}
	return "here"
}

// checkPlacement enforces the rules the IR's types cannot: parallel loops
// only at the top level of the kernel or of a group; groups only as top-level
// statements, not nested, and either all top-level statements or none.
func (l *lowerer) checkPlacement() {
	groups := hasGroups(l.k.Body)
	mixed := false
	for _, s := range l.k.Body {
		// Only the first stray statement is reported: the fix is the same
		// for all of them.
		if _, ok := s.(*ir.StreamParallel); groups && !ok && !mixed {
			mixed = true
			l.errorf(s.Position(), "when a kernel uses qd.StreamParallel, all of its top-level statements must be qd.StreamParallel blocks, but this %s is not in one; move the other statements into a block or into a separate kernel", describe(s))
		}
		l.placeStmt(s, atKernelTop, false)
	}
}

func (l *lowerer) placeList(list []ir.Stmt, where place, inGroup bool) {
	for _, s := range list {
		l.placeStmt(s, where, inGroup)
	}
}

func (l *lowerer) placeStmt(s ir.Stmt, where place, inGroup bool) {
	switch s := s.(type) {
	case *ir.ParallelFor:
		switch where {
		case inIf:
			l.errorf(s.Pos, "parallel loop inside an if statement runs serially on one thread in Quadrants; qd rejects it: move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the condition inside the loop body")
		case inFor:
			l.errorf(s.Pos, "parallel loop inside a serial for loop runs serially on one thread in Quadrants; qd rejects it: move the loop to the top level of the kernel (or of a qd.StreamParallel block), making the outer loop one more dimension of a qd.NDRange loop, or launch the kernel once per outer iteration")
		case inParallel:
			l.errorf(s.Pos, "parallel loop inside a parallel loop: only top-level loops run in parallel; use one qd.NDRange loop over both ranges, or write the inner loop as a serial 3-clause for loop")
		}
		l.placeList(s.Body, inParallel, inGroup)
	case *ir.Blocks:
		if where != atKernelTop && where != atGroupTop {
			l.errorf(s.Pos, "block loop %s: a qd.Blocks loop runs in parallel only at the top level of the kernel (or of a qd.StreamParallel block); move it there and put the condition inside the block body", where.phrase())
		}
		l.checkBlocks(s)
	case *ir.StreamParallel:
		switch {
		case inGroup:
			l.errorf(s.Pos, "qd.StreamParallel blocks cannot be nested; move the inner block's statements into the outer block (they run in order on its stream) or make the inner block a top-level block of its own")
		case where != atKernelTop:
			l.errorf(s.Pos, "qd.StreamParallel block %s: a qd.StreamParallel block must be a top-level statement of the kernel; move it to the top level and put the condition or loop inside it, or choose in host code which kernel to launch", where.phrase())
		}
		l.placeList(s.Body, atGroupTop, true)
	case *ir.If:
		l.placeList(s.Then, inIf, inGroup)
		l.placeList(s.Else, inIf, inGroup)
	case *ir.For:
		l.placeList(s.Init, inFor, inGroup)
		l.placeList(s.Post, inFor, inGroup)
		l.placeList(s.Body, inFor, inGroup)
	}
}

// describe names a statement's kind for messages.
func describe(s ir.Stmt) string {
	switch s.(type) {
	case *ir.ParallelFor:
		return "parallel loop"
	case *ir.For:
		return "serial for loop"
	case *ir.If:
		return "if statement"
	case *ir.Decl:
		return "variable declaration"
	case *ir.Assign:
		return "assignment"
	case *ir.Store:
		return "array store"
	case *ir.ExprStmt:
		return "expression statement"
	}
	return fmt.Sprintf("%T statement", s)
}

// split appends the tasks of one body (the kernel's or a group's): one
// Parallel task per ParallelFor and one Serial task per maximal run of other
// statements. It also records the body's direct Decls as temp candidates.
func (l *lowerer) split(body []ir.Stmt, group int) {
	start := -1
	flush := func(end int) {
		if start >= 0 {
			l.add(&Task{Kind: Serial, Group: group, Body: body[start:end:end], Pos: body[start].Position()})
			start = -1
		}
	}
	for i, s := range body {
		if d, ok := s.(*ir.Decl); ok {
			if l.decls == nil {
				l.decls = map[*ir.Var]*ir.Decl{}
			}
			l.decls[d.Var] = d
			l.declOrder = append(l.declOrder, d.Var)
		}
		if pf, ok := s.(*ir.ParallelFor); ok {
			flush(i)
			l.add(&Task{Kind: Parallel, Group: group, Loop: pf, Pos: pf.Pos})
			continue
		}
		if bl, ok := s.(*ir.Blocks); ok {
			flush(i)
			l.add(&Task{Kind: Block, Group: group, Blocks: bl, Pos: bl.Pos})
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(body))
}

func (l *lowerer) add(t *Task) {
	t.Index = len(l.plan.Tasks)
	l.plan.Tasks = append(l.plan.Tasks, t)
}

// temps finds the top-level locals that more than one task uses and gives
// them slots in declaration order; a parallel task may read them but not
// assign them, since its iterations would race on the one slot.
func (l *lowerer) temps() {
	if len(l.decls) == 0 {
		return
	}
	users := map[*ir.Var]int{}
	for _, t := range l.plan.Tasks {
		seen := map[*ir.Var]bool{}
		ir.VarsUsed(t.Stmts(), func(v *ir.Var, _ bool) {
			if _, ok := l.decls[v]; ok && !seen[v] {
				seen[v] = true
				users[v]++
			}
		})
	}
	for _, v := range l.declOrder {
		if users[v] > 1 {
			l.plan.TempSlot[v] = len(l.plan.Temps)
			l.plan.Temps = append(l.plan.Temps, v)
		}
	}
	for _, t := range l.plan.Tasks {
		if t.Kind == Serial {
			continue
		}
		what := map[TaskKind]string{Parallel: "parallel loop", Block: "block loop"}[t.Kind]
		ir.Inspect(t.Stmts(), func(n ir.Node) bool {
			if a, ok := n.(*ir.Assign); ok {
				if _, temp := l.plan.TempSlot[a.Var]; temp {
					d := l.decls[a.Var]
					l.errorf(a.Pos, "%s assigns kernel-level variable %q (declared at %s): iterations would race; write to an array element instead (or use qd.AtomicAdd on one)", what, a.Var.Name, posText(d.Pos))
				}
			}
			return true
		})
	}
}

func posText(p ir.Pos) string {
	if p.IsKnown() {
		return p.String()
	}
	return "an unknown position"
}
