package analysis

import "github.com/quadrants-go/qd/internal/ir"

// ElementwiseBody is a 1-D parallel loop's body that touches every array
// only at [i], i being the loop variable, with elements of one size: the
// iterations i .. i+w-1 may then read each array's w elements with one
// wide load before the body and write them with one wide store after it.
// That keeps every element's order of reads and writes: the body reads an
// array's element before its one store to it, which is a top-level
// statement, and different elements belong to different iterations, whose
// order is free.
type ElementwiseBody struct {
	Size   int                // the elements' size in bytes (not bool's)
	Arrays map[*ir.Param]bool // every array the body reads or stores
	Read   map[*ir.Param]bool // those it reads
}

// Elementwise returns l's body as an elementwise body, or nil when it is
// not one: l has more than one variable, the body assigns the variable,
// indexes an array otherwise than at [i] or reads it after storing it,
// stores an array twice, touches no array, mixes element sizes, or
// touches an array of records or of 8- or 16-bit integers. A
// generator asks only of bodies that are Unrollable: an atomic's array is
// not looked at here.
func Elementwise(l *ir.ParallelFor) *ElementwiseBody {
	if len(l.Vars) != 1 {
		return nil
	}
	read := map[*ir.Param]bool{}
	iv := l.Vars[0]
	size := 0
	ok := true
	stored := map[*ir.Param]bool{}
	arrays := map[*ir.Param]bool{}
	atI := func(a *ir.Param, index []ir.Expr) {
		// Records (whose elements are not one scalar wide) and the 8-
		// and 16-bit types (too many per vector) are never elementwise.
		if a.Dims != 1 || len(index) != 1 || a.Elem == ir.Bool || a.Rec != nil || a.Elem.IsSmall() {
			ok = false
			return
		}
		if r, isRef := index[0].(*ir.VarRef); !isRef || r.Var != iv {
			ok = false
			return
		}
		if size == 0 {
			size = a.Elem.Size()
		} else if size != a.Elem.Size() {
			ok = false
		}
		arrays[a] = true
	}
	visit := func(n ir.Node) bool {
		if as, isAssign := n.(*ir.Assign); isAssign && as.Var == iv {
			ok = false // the index would no longer be the element's
		}
		switch acc, _ := ir.AccessOf(n); acc.Kind {
		case ir.AccessRead:
			atI(acc.Array, acc.Index)
			read[acc.Array] = true
			if stored[acc.Array] {
				ok = false // read after the store: the preloaded value would be stale
			}
		case ir.AccessWrite:
			if stored[acc.Array] {
				ok = false // one wide store per array
			}
		}
		return ok
	}
	for _, s := range l.Body {
		ir.Inspect([]ir.Stmt{s}, visit)
		if st, isStore := s.(*ir.Store); isStore {
			atI(st.Array, st.Index)
			stored[st.Array] = true
		}
	}
	if !ok || size == 0 || len(arrays) == 0 {
		return nil
	}
	return &ElementwiseBody{Size: size, Arrays: arrays, Read: read}
}
