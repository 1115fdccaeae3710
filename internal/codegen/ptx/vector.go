package ptx

import (
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower/analysis"
)

// Vector loads and stores of 1-D elementwise loops.
//
// A thread that moves one 4-byte element per load issues many small
// transactions; 128-bit loads and stores (ld.global.v4 / st.global.v4, or
// v2 of 8-byte elements) move four elements each. A 1-D parallel task whose
// body is simple (unrollable) and elementwise (analysis.Elementwise: it
// touches every array only at [i], i being the loop variable, with one
// element size among them) first runs a vector loop: thread k handles elements w·k .. w·k+w-1 (w = 16 bytes / element
// size) with one vector load per array read and one vector store per array
// written, the body written w times for the w elements. The ordinary loops
// then handle what is left (fewer than w elements past the last whole
// vector).
//
// Vector accesses need 16-byte-aligned addresses: the vector loop runs
// only when every array's start is (a uniform test at the top; device
// allocations are, views of them may not be), else the ordinary loops do
// everything. Reading an array's elements before the body and writing them
// after it keeps each element's order of reads and writes (a store to a[i]
// in the body comes after every read of a[i], which the check below
// requires), and different elements belong to different iterations, whose
// order is free.

// vectorPlan is the vector loop of a task: its width and the arrays the
// body touches.
type vectorPlan struct {
	width  int                    // elements per vector: 4 (4-byte) or 2 (8-byte)
	arrays map[*ir.Param]bool     // every array the body touches
	read   map[*ir.Param]bool     // the arrays it reads
	loaded map[*ir.Param][]string // registers of the elements read, per array
	pend   map[*ir.Param][]string // values stored, per array (one store each)
}

// vectorize decides whether l gets a vector loop, and its width: when its
// body is unrolled and elementwise (analysis.Elementwise).
func (f *fnWriter) vectorize(l *ir.ParallelFor) *vectorPlan {
	if f.m.opts.noVector || len(l.Vars) != 1 || !f.unrollable(l) || f.bounds() {
		return nil
	}
	el := analysis.Elementwise(l)
	if el == nil {
		return nil
	}
	return &vectorPlan{width: 16 / el.Size, arrays: el.Arrays, read: el.Read}
}

// vecUnroll is how many vectors a thread handles per trip of the main
// vector loop: their loads all issue before the body, for more memory in
// flight (a remainder loop handles one vector per trip).
const vecUnroll = 2

// vectorLoop writes the vector loops before the ordinary ones and moves the
// thread's flat index past the vectors:
//
//	       if any array's start is not 16-byte aligned goto scalar
//	       nv := total / w; k := global thread index
//	main:  if k + stride >= nv goto one
//	       vectors k and k+stride: loads; body ×2w; stores
//	       k += 2·stride; goto main
//	one:   if k >= nv goto last
//	       vector k: loads; body ×w; stores
//	       k += stride; goto one
//	last:  i += w·nv (both widths)
//	scalar:
func (f *fnWriter) vectorLoop(l *ir.ParallelFor, g gridIndex, v *vectorPlan) {
	w := v.width
	scalar, main, one, last := f.label(), f.label(), f.label(), f.label()
	// Alignment: OR every start address, test the low four bits.
	var orr string
	for _, p := range f.k.Params {
		if !v.arrays[p] {
			continue
		}
		a := f.array(p)
		if orr == "" {
			orr = f.reg(ir.U64)
			f.mov(ir.U64, orr, a)
			continue
		}
		f.emit("or.b64 %s, %s, %s", orr, orr, a)
	}
	low, mis := f.reg(ir.U64), f.reg(ir.Bool)
	f.emit("and.b64 %s, %s, 15", low, orr)
	f.emit("setp.ne.u64 %s, %s, 0", mis, low)
	f.braIf(mis, false, scalar)

	nv, k, stop := f.reg(ir.I64), f.reg(ir.I64), f.reg(ir.Bool)
	f.emit("div.s64 %s, %s, %d", nv, g.total, w)
	f.mov(ir.I64, k, g.i64)

	f.place(main)
	next := f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %s", next, k, g.stride64)
	f.emit("setp.ge.s64 %s, %s, %s", stop, next, nv)
	f.braIf(stop, false, one)
	f.vectorTrip(l, v, []string{k, next})
	f.emit("add.s64 %s, %s, %s", k, next, g.stride64)
	f.bra(main)

	f.place(one)
	f.emit("setp.ge.s64 %s, %s, %s", stop, k, nv)
	f.braIf(stop, false, last)
	f.vectorTrip(l, v, []string{k})
	f.emit("add.s64 %s, %s, %s", k, k, g.stride64)
	f.bra(one)

	f.place(last)
	done := f.reg(ir.I64)
	f.emit("mul.lo.s64 %s, %s, %d", done, nv, w)
	f.emit("add.s64 %s, %s, %s", g.i64, g.i64, done)
	done32 := f.reg(ir.U32)
	f.emit("cvt.u32.u64 %s, %s", done32, done)
	f.emit("add.u32 %s, %s, %s", g.i32, g.i32, done32)
	f.place(scalar)
}

// vectorTrip writes one trip over the vectors ks (vector indices): every
// vector load first, the body once per element, the vector stores last.
func (f *fnWriter) vectorTrip(l *ir.ParallelFor, v *vectorPlan, ks []string) {
	w := v.width
	copies := w * len(ks)
	iv := l.Vars[0]
	private := map[*ir.Var][]string{iv: make([]string, copies)}
	bases := make([]string, len(ks))
	for b, k := range ks {
		bases[b] = f.reg(ir.I64)
		f.emit("mul.lo.s64 %s, %s, %d", bases[b], k, w)
		for c := range w {
			idx := bases[b]
			if c > 0 {
				idx = f.reg(ir.I64)
				f.emit("add.s64 %s, %s, %d", idx, bases[b], c)
			}
			r := f.reg(iv.Type)
			f.setIndexVar(iv.Type, r, ir.I64, idx)
			private[iv][b*w+c] = r
		}
	}
	f.vars[iv] = private[iv][0]
	v.loaded, v.pend = map[*ir.Param][]string{}, map[*ir.Param][]string{}
	for _, p := range f.k.Params {
		if !v.read[p] {
			continue
		}
		regs := make([]string, copies)
		for c := range regs {
			regs[c] = f.reg(p.Elem)
		}
		for b, base := range bases {
			f.emit("ld.global.v%d.%s {%s}, [%s]", w, memType(p.Elem), joinRegs(regs[b*w:(b+1)*w]), f.vectorAddr(p, base))
		}
		v.loaded[p] = regs
	}
	f.vec = v
	f.unrolledStmts(l.Body, private, copies)
	f.vec = nil
	for _, p := range f.k.Params {
		vals, ok := v.pend[p]
		if !ok {
			continue
		}
		for b, base := range bases {
			f.emit("st.global.v%d.%s [%s], {%s}", w, memType(p.Elem), f.vectorAddr(p, base), joinRegs(vals[b*w:(b+1)*w]))
		}
	}
}

// vectorAddr is the address of element base of array p.
func (f *fnWriter) vectorAddr(p *ir.Param, base string) string {
	addr := f.reg(ir.I64)
	f.emit("mad.lo.s64 %s, %s, %d, %s", addr, base, p.Elem.Size(), f.array(p))
	return addr
}

// vectorLoaded returns the register of the current copy's element of a
// read in the vector loop, or "" outside it.
func (f *fnWriter) vectorLoaded(e *ir.Load) string {
	if f.vec == nil {
		return ""
	}
	if regs, ok := f.vec.loaded[e.Array]; ok {
		return regs[f.vecCopy]
	}
	return ""
}

// vectorStore keeps the values of a store for the vector store after the
// body.
func (f *fnWriter) vectorStore(a *ir.Param, vals []string) {
	out := make([]string, len(vals))
	for c, v := range vals {
		out[c] = v
		if a.Elem == ir.Bool {
			f.fail("vector store of bool")
		}
	}
	f.vec.pend[a] = out
}

// joinRegs is a vector operand's register list: "%f1, %f2".
func joinRegs(regs []string) string { return strings.Join(regs, ", ") }
