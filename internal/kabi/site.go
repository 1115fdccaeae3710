package kabi

import "github.com/quadrants-go/qd/internal/ir"

// Site is one checked array access (Module.Bounds).
type Site struct {
	Array string // the array parameter's name
	Pos   ir.Pos // the statement's position
	// U64 has bit d set when the index in dimension d is a uint64: a
	// recorded index is then shown unsigned, else as a signed number.
	U64 uint32
}

// DebugWords is the size, in 8-byte words, of the violation record of a
// module with Bounds.
const DebugWords = 4

// AddSite registers a checked access of array a with the given indices,
// in the statement at pos, and returns its site number, its position in
// Sites: an entry that finds an index out of range records the number + 1
// in word 0 of the violation record (0 means none). Every code generator
// registers its checks here, in the order it writes them, so that the
// launcher reads the record with the sites the entries number.
func (m *Module) AddSite(a *ir.Param, index []ir.Expr, pos ir.Pos) int {
	st := Site{Array: a.Name, Pos: pos}
	for d, e := range index {
		if e.Type() == ir.U64 && d < 32 {
			st.U64 |= 1 << d
		}
	}
	m.Sites = append(m.Sites, st)
	return len(m.Sites) - 1
}
