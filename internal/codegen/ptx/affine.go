package ptx

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower/analysis"
)

// Strength-reduced addresses in multi-dimensional parallel loops.
//
// An access a[i+c0][j+c1] of a 2-D array in a 2-D loop over (i, j) costs,
// written plainly, two 64-bit multiply-adds for the row-major offset and one
// for the address: a 5-point stencil pays ten of them per element, which on
// an H100 makes it bound by integer instructions, not by memory (it reached
// 0.59 of its byte floor). But every such access of one array differs from
// its element base a + (i·d1 + j)·size by a constant of the loop:
// (c0·d1 + c1)·size. So a parallel loop of 2 or 3 dimensions computes, per
// trip, one base per array (and per order in which the loop variables
// index it), and before the loop one offset register per distinct constant
// tuple; each access is then the base plus that register, or plus an
// immediate when only the last index has a constant.
//
// An index qualifies when it is affine (package lower/analysis): a loop
// variable of type int64, or a local declared (never assigned) as one plus
// or minus an integer constant, directly or through other such locals. The
// arithmetic is the same ring arithmetic modulo 2^64 as the plain address,
// so the address is the same bit for bit, overflow included. Loads and
// stores use it; atomics, and every access when indices are checked
// (WithDebug), keep the plain form.

// affinePlan is what a parallel loop's body uses of the scheme: the
// affine forms of its indices (analysis.ParallelAffine) and the registers
// written for them.
type affinePlan struct {
	*analysis.Affine
	bases map[analysis.Key]string // per-trip element bases
	offs  map[[4]int64]string     // (array, c0, c1, c2) → invariant byte offset register
	keys  []analysis.Key          // bases, in first-use order
	arrs  map[analysis.Key]*ir.Param
}

// planAffine writes the invariant offsets of the accesses of l's body that
// the scheme serves; nil when there are none.
func (f *fnWriter) planAffine(l *ir.ParallelFor) *affinePlan {
	if f.bounds() {
		return nil
	}
	aff, accs := analysis.ParallelAffine(l)
	if aff == nil {
		return nil
	}
	p := &affinePlan{Affine: aff, bases: map[analysis.Key]string{}, offs: map[[4]int64]string{}, arrs: map[analysis.Key]*ir.Param{}}
	for _, acc := range accs {
		f.affineOffset(p, acc.Array, acc.Key, acc.Consts)
	}
	return p
}

// affineOffset writes, once, the byte offset of the constants of an
// access, and registers its key for a base.
func (f *fnWriter) affineOffset(p *affinePlan, a *ir.Param, key analysis.Key, consts [3]int64) {
	if _, ok := p.arrs[key]; !ok {
		p.arrs[key] = a
		p.keys = append(p.keys, key)
	}
	id := [4]int64{int64(a.Index), consts[0], consts[1], consts[2]}
	if _, ok := p.offs[id]; ok || !needsOffsetReg(a, consts) {
		return
	}
	// Σ c_d · stride_d, then times the element size.
	off := f.reg(ir.I64)
	f.emit("mov.b64 %s, %d", off, consts[a.Dims-1])
	stride := ""
	for d := a.Dims - 2; d >= 0; d-- {
		if stride == "" {
			stride = f.dim(a, d+1)
		} else {
			s := f.reg(ir.I64)
			f.emit("mul.lo.s64 %s, %s, %s", s, stride, f.dim(a, d+1))
			stride = s
		}
		if consts[d] != 0 {
			f.emit("mad.lo.s64 %s, %s, %d, %s", off, stride, consts[d], off)
		}
	}
	f.emit("mul.lo.s64 %s, %s, %d", off, off, a.ElemSize())
	p.offs[id] = off
}

// needsOffsetReg reports whether the constants reach beyond the last
// dimension, or that one is too large for an immediate (else the offset
// is an immediate of the load or store).
func needsOffsetReg(a *ir.Param, consts [3]int64) bool {
	for d := 0; d < a.Dims-1; d++ {
		if consts[d] != 0 {
			return true
		}
	}
	c := consts[a.Dims-1]
	return c > 1<<24 || c < -(1<<24)
}

// affineBases writes, at the top of a trip, the element base of every key:
// a + (Σ var_d · stride_d) · size.
func (f *fnWriter) affineBases(p *affinePlan, vars []string) {
	for _, key := range p.keys {
		f.affineBase(p, key, vars)
	}
}

// affineBase writes the element base of key.
func (f *fnWriter) affineBase(p *affinePlan, key analysis.Key, vars []string) {
	a := p.arrs[key]
	off := f.reg(ir.I64)
	f.mov(ir.I64, off, vars[key.Vars[0]])
	for d := 1; d < a.Dims; d++ {
		f.emit("mad.lo.s64 %s, %s, %s, %s", off, off, f.dim(a, d), vars[key.Vars[d]])
	}
	base := f.reg(ir.I64)
	f.emit("mad.lo.s64 %s, %s, %d, %s", base, off, a.ElemSize(), f.array(a))
	p.bases[key] = base
}

// memAddr is the address operand of a load or store of leaf of
// a[index...] and its in-range predicate ("" when indices are not
// checked): through the scheme when it applies, else checked's; a
// record's leaf is the element's address plus its offset.
func (f *fnWriter) memAddr(a *ir.Param, index []ir.Expr, leaf int) (addr, ok string) {
	off := leafOffset(a, leaf)
	if addr := f.serialAddress(a, index); addr != "" {
		return plus(addr, off), ""
	}
	if addr := f.affineAddress(a, index); addr != "" {
		return plus(addr, off), ""
	}
	addr, ok = f.checked(a, index)
	return plus(addr, off), ok
}

// affineAddress is the address operand of a[index...] under the scheme
// ("%rd9", "%rd9+4"), or "" when it does not apply.
func (f *fnWriter) affineAddress(a *ir.Param, index []ir.Expr) string {
	p := f.aff
	if p == nil {
		return ""
	}
	key, consts, ok := p.Access(a, index)
	if !ok {
		return ""
	}
	base, ok := p.bases[key]
	if !ok {
		return ""
	}
	if !needsOffsetReg(a, consts) {
		c := consts[a.Dims-1] * int64(a.ElemSize())
		if c == 0 {
			return base
		}
		return fmt.Sprintf("%s+%d", base, c) // PTX writes a negative one +-4
	}
	off, ok := p.offs[[4]int64{int64(a.Index), consts[0], consts[1], consts[2]}]
	if !ok {
		return ""
	}
	addr := f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %s", addr, base, off)
	return addr
}
