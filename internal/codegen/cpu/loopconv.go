package cpu

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Converted loops. A loop on a varying condition whose body and post only
// assign locals from cheap operations (what converted ifs allow, ifconv.go)
// runs SIMT style without lists of lanes: each trip evaluates the condition
// on every lane, folds it into an "active" bool vector, runs the body on
// every lane into shadow registers, and keeps the shadows only where a lane
// is still active. The loop ends when no lane is. A Collatz step count,
// whose lanes leave after different trip counts, is the model: the general
// path narrowed the mask to a new list of lanes on every trip and walked
// it in every assignment.

// loopConvertible reports whether s may run converted: a condition and a
// body and post as converted ifs allow, no break or continue.
func (c *compiler) loopConvertible(s *ir.For) bool {
	if c.mode == modeSerial || s.Cond == nil {
		return false
	}
	n := 0
	if !cheapExpr(s.Cond, &n) {
		return false
	}
	// A converted if of the same statements: its test is the one wanted.
	return c.convOK(&ir.If{Cond: &ir.Const{T: ir.Bool}, Then: slices.Concat(s.Body, s.Post)}, &n) && n <= 2*convMax
}

// convertedLoop compiles s, convertible; init is its compiled Init, cond
// its compiled (varying) condition, compiled right after register activeR
// was reserved.
func (c *compiler) convertedLoop(s *ir.For, init func(*frame), cond *ev[bool], activeR int) func(*frame) {
	list := slices.Concat(s.Body, s.Post)
	steps, m := c.shadowed(list)
	for _, v := range assignedIn(list) {
		cur := c.regOf(c.shadow, v)
		steps = append(steps, selectRegs(v.Type, activeR, m[v], cur, cur))
		if before, after := c.linearSelected(v); before != nil {
			steps = append([]func(*frame){before}, append(steps, after)...)
		}
	}
	trip, cv := runSteps(steps), cond.v
	return func(f *frame) {
		if init(f); f.err != nil {
			return
		}
		act := reg[bool](f, activeR)
		if f.m.all {
			fill(act, true)
		} else {
			clear(act)
			for _, k := range f.m.idx {
				act[k] = true
			}
		}
		for {
			// The same check as forStmt's (Args.Stop): a converted loop
			// that never ends must stop too.
			if st := f.a.Stop; st != nil && st.Load() {
				f.err = ErrStopped
				return
			}
			b := cv(f)
			if f.err != nil {
				return
			}
			logicVec(act, act, b, true)
			if !anyTrue(act) {
				return
			}
			if trip(f); f.err != nil {
				return
			}
		}
	}
}

// anyTrue reports whether a bool of v is true, eight at a time.
func anyTrue(v []bool) bool {
	b := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return true
		}
	}
	return false
}
