package ptx

import "github.com/quadrants-go/qd/internal/ir"

// Bounds checks (Options.Debug, qd.WithDebug).
//
// Each array access compares every index, as an unsigned 64-bit number (so
// a negative one is out of range too), with its extent. An access out of
// range does not happen — a load gives zero, a store or an atomic does
// nothing — and the first one of the launch is recorded in the launch's
// violation record (kabi.DebugWords words after the temporaries): a
// compare-and-swap of word 0 from 0 to the access's site number + 1 elects
// it, and its writer stores the index, the extent and the dimension. The
// launcher copies the record back and reports the violation, with the
// site's array and position, at the stream's next synchronization. The
// vector and unrolled loops are off in this mode: every access is its own.

// bounds reports whether the module checks indices.
func (f *fnWriter) bounds() bool { return f.m.layout != nil && f.m.layout.Bounds }

// checked returns the address of a[index...] and, when indices are
// checked, the predicate that holds when they are all in range ("" when
// they are not checked).
func (f *fnWriter) checked(a *ir.Param, index []ir.Expr) (addr, ok string) {
	if !f.bounds() {
		return f.address(a, index), ""
	}
	if !a.IsArray() || len(index) != a.Dims {
		f.fail("array %s (%d dims) indexed with %d indices", a.Name, a.Dims, len(index))
	}
	site := f.m.layout.AddSite(a, index, f.pos)
	idx := make([]string, len(index))
	okd := make([]string, len(index))
	ok = f.reg(ir.Bool)
	for d, e := range index {
		idx[d] = f.index64(e)
		okd[d] = f.reg(ir.Bool)
		f.emit("setp.lt.u64 %s, %s, %s", okd[d], idx[d], f.dim(a, d))
		if d == 0 {
			f.emit("mov.pred %s, %s", ok, okd[0])
		} else {
			f.emit("and.pred %s, %s, %s", ok, ok, okd[d])
		}
	}
	fine := f.label()
	f.braIf(ok, false, fine)
	f.recordViolation(site, idx, okd, a)
	f.place(fine)
	// The address from the checked indices, row-major.
	off := idx[0]
	for d := 1; d < len(idx); d++ {
		n := f.reg(ir.I64)
		f.emit("mad.lo.s64 %s, %s, %s, %s", n, off, f.dim(a, d), idx[d])
		off = n
	}
	addr = f.reg(ir.I64)
	f.emit("mad.lo.s64 %s, %s, %d, %s", addr, off, a.ElemSize(), f.array(a))
	return addr, ok
}

// recordViolation writes the record of site if it is the launch's first.
func (f *fnWriter) recordViolation(site int, idx, okd []string, a *ir.Param) {
	rec := f.debugRecord()
	old := f.reg(ir.U64)
	f.emit("atom.global.cas.b64 %s, [%s], 0, %d", old, rec, site+1)
	taken, done := f.reg(ir.Bool), f.label()
	f.emit("setp.ne.u64 %s, %s, 0", taken, old)
	f.braIf(taken, false, done)
	for d := range idx {
		next := f.label()
		f.braIf(okd[d], false, next)
		f.emit("st.global.u64 [%s+8], %s", rec, idx[d])
		f.emit("st.global.u64 [%s+16], %s", rec, f.dim(a, d))
		f.emit("st.global.u64 [%s+24], %d", rec, d)
		f.bra(done)
		f.place(next)
	}
	f.place(done)
}

// debugRecord is the register holding the violation record's address.
func (f *fnWriter) debugRecord() string {
	if f.temps == "" {
		f.temps = f.reg(ir.I64)
	}
	r := f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %d", r, f.temps, 8*f.m.layout.NumTemps)
	return r
}

// guarded writes access under ok (when not ""): skipped when an index is
// out of range.
func (f *fnWriter) guarded(ok string, access func()) {
	if ok == "" {
		access()
		return
	}
	skip := f.label()
	f.braIf(ok, true, skip)
	access()
	f.place(skip)
}

// zeroOf is the zero of type t as a register, for a load out of range.
func (f *fnWriter) zeroOf(t ir.Type, r string) {
	f.emit("mov.%s %s, %s", movType(t), r, literal(t, 0))
}
