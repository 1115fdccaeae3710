package csrc

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
)

// Index checks (a layout with Bounds, qd.WithDebug), as the PTX generator
// writes them: each access compares every index, as an unsigned 64-bit
// number (so a negative one is out of range too), with its extent. An
// access out of range does not happen (a load gives zero, a store or an
// atomic is skipped), and the first one of the launch is recorded in the
// violation record kabi.DebugWords words after the temporaries: qd_bounds
// elects it with a compare-and-swap of word 0 from 0 to its site number + 1
// and stores the index, the extent and the dimension.

// boundsFunc records a violation; it is added to a unit that checks.
const boundsFunc = `QD_DEV void qd_bounds(unsigned char *rec, qd_u64 site, qd_u64 index, qd_u64 extent, qd_u64 dim)
{
	qd_u64 *w = (qd_u64 *)rec;
	if (qd_atomic_cas_u64(w, 0, site) == 0) {
		w[1] = index;
		w[2] = extent;
		w[3] = dim;
	}
}
`

// bounds reports whether the entry checks indices.
func (f *fn) bounds() bool { return f.layout != nil && f.layout.Bounds }

// checked returns the C lvalue of leaf of a[index...] and, when indices
// are checked, the name of the bool that holds when they are all in range
// ("" when they are not checked).
func (f *fn) checked(a *ir.Param, index []ir.Expr, leaf int) (elem, ok string) {
	if !f.bounds() {
		return f.element(a, index, leaf), ""
	}
	if !a.IsArray() || len(index) != a.Dims {
		f.fail("array %s (%d dims) indexed with %d indices", a.Name, a.Dims, len(index))
	}
	site := f.layout.AddSite(a, index, f.pos)
	f.u.funcs["qd_bounds"] = boundsFunc

	idx := make([]string, len(index))
	for d, e := range index {
		idx[d] = f.index64(e)
	}
	ok = f.tmp(ir.Bool, "true")
	rec := fmt.Sprintf("%s + %d", f.temps(), 8*f.layout.NumTemps)
	for d := range idx {
		else_ := ""
		if d > 0 {
			else_ = "else "
		}
		f.line("%sif ((qd_u64)%s >= (qd_u64)%s) {", else_, idx[d], f.dim(a, d))
		f.line("\tqd_bounds(%s, %d, (qd_u64)%s, (qd_u64)%s, %d);", rec, site+1, idx[d], f.dim(a, d), d)
		f.line("\t%s = false;", ok)
		f.line("}")
	}
	off := idx[0]
	for d := 1; d < len(idx); d++ {
		off = f.tmp(ir.I64, "(qd_i64)((qd_u64)%s * (qd_u64)%s + (qd_u64)%s)", off, f.dim(a, d), idx[d])
	}
	return f.at(a, off, leaf), ok
}

// temps is the temporaries' pointer.
func (f *fn) temps() string { return f.slot(kabi.Slot{Kind: kabi.TempsSlot}, "the temporaries") }

// guarded writes the lines of access under ok (when not ""): skipped when
// an index is out of range.
func (f *fn) guarded(ok string, access func()) {
	if ok == "" {
		access()
		return
	}
	f.line("if (%s) {", ok)
	f.indent++
	access()
	f.indent--
	f.line("}")
}
