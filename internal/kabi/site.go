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

// Violation is the error a launch's violation record reports for kernel,
// whose entries registered sites; nil when the record is clear. Every GPU
// launcher reports through it, so that a violation reads the same on
// every backend.
func Violation(kernel string, sites []Site, rec [DebugWords]uint64) error {
	if rec[0] == 0 {
		return nil
	}
	site := int(rec[0] - 1)
	if site >= len(sites) {
		return ir.Errorf(ir.Pos{}, kernel, "index out of range at an unknown access (site %d of %d)", site, len(sites))
	}
	st := sites[site]
	dim := int(rec[3])
	if dim < 32 && st.U64&(1<<dim) != 0 {
		return ir.Errorf(st.Pos, kernel, "index %d out of range [0:%d) in dimension %d of %s", rec[1], int64(rec[2]), dim, st.Array)
	}
	return ir.Errorf(st.Pos, kernel, "index %d out of range [0:%d) in dimension %d of %s", int64(rec[1]), int64(rec[2]), dim, st.Array)
}
