package ptx

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower/analysis"
)

// Unrolling of counted serial loops.
//
// A serial loop inside a kernel (the inner loop of an all-pairs n-body, a
// polynomial's Horner loop) runs one body per compare-and-branch, and
// ptxas schedules instructions within a basic block only, so the loads of
// one iteration cannot start while the previous one computes. nvcc's front
// end unrolls such loops by 4; ptxas does not. So a counted loop
// (analysis.Counted)
//
//	for v := a; v < e; v++ { body }
//
// whose bound e does not change in the body, and whose body neither sets v
// nor breaks, continues or loops, first runs trips of serialUnroll bodies
// (fastUnroll with fast math) while at least that many iterations remain,
// then the ordinary loop for the rest:
//
//	quad: if !(v < e) goto rest; if uint(e - v) < 4 goto rest
//	      body; v++; body; v++; body; v++; body; v++
//	      goto quad
//	rest: the ordinary loop
//
// The bodies run in the same order as before, so the result is the same
// bit for bit. e - v is exact in unsigned arithmetic of v's width whenever
// v < e, so no value of v or e overflows the check.

// serialUnroll is nvcc's factor for such loops; fastUnroll is the factor
// with fast math, whose short trips gain from more loads in flight: on the
// H100 the fast n-body took 4.68 ms with 8, 4.72 with 4 (nvcc 4.23).
const (
	serialUnroll = 4
	fastUnroll   = 8
)

// unrolledCTAs is the .minnctapersm of a parallel task's entry with an
// unrolled serial loop (a serial task runs one thread): ptxas may then give a thread up to 65536/(4·block) registers. It
// otherwise schedules such entries for full occupancy (32 registers at
// 256 threads), which keeps one trip's loads and its rsqrt in sequence; a
// grid of one thread per body gives a multiprocessor a few warps only, so
// the trip's own parallelism is what hides latency. Measured on the H100
// (n-body, 2^16 bodies, in one process): fast math 4.70 -> 4.00 ms with 4
// (3.90 with 2; nvcc --use_fast_math 4.24), exact 10.65 -> 10.46 ms
// (nvcc -fmad=false 10.35). 4 keeps half the occupancy for kernels whose
// grids are larger.
const unrolledCTAs = 4

// maxSerialUnrollNodes bounds the size of a body that is unrolled (the
// code grows by the factor).
const maxSerialUnrollNodes = 160

// countedLoop returns v and e of a loop that may be unrolled: a counted
// loop (analysis.Counted) small enough.
func (f *fnWriter) countedLoop(s *ir.For) (v *ir.Var, e ir.Expr, ok bool) {
	c := analysis.Counted(f.m.plan, s)
	if c == nil || c.Nodes > maxSerialUnrollNodes {
		return nil, nil, false
	}
	return c.Var, c.Bound, true
}

// unrolledTrips writes the unrolled trips of a counted loop; the ordinary
// loop written after them does the rest.
func (f *fnWriter) unrolledTrips(s *ir.For, v *ir.Var, e ir.Expr) {
	f.unrolled = true
	t := v.Type
	quad, rest := f.label(), f.label()
	// Without fast math the bases are computed once, from v on entry, and
	// advance by a trip's worth of elements at its end (nvcc's strength
	// reduction); with it, at the top of each trip (see serialPlan).
	stepped := !f.m.opts.FastMath
	var sp *serialPlan
	if stepped {
		sp = f.planSerial(s, v)
	}
	f.place(quad)
	vr := f.varReg(v)
	er := f.expr(e)
	lt := f.reg(ir.Bool)
	f.emit("setp.lt.%s %s, %s, %s", opType(t), lt, vr, er)
	f.braIf(lt, true, rest)
	left, few := f.reg(t), f.reg(ir.Bool)
	f.emit("sub.%s %s, %s, %s", opType(t), left, er, vr)
	factor := serialUnroll
	if !stepped {
		factor = fastUnroll
	}
	f.emit("setp.lt.u%d %s, %s, %d", 8*t.Size(), few, left, factor)
	f.braIf(few, false, rest)
	if !stepped {
		sp = f.planSerial(s, v)
	}
	for k := range factor {
		if sp != nil {
			sp.copy = int64(k)
		}
		f.ser = sp
		f.stmts(s.Body)
		f.ser = nil
		f.stmts(s.Post)
	}
	if stepped && sp != nil {
		for _, a := range sp.order {
			f.emit("add.s64 %s, %s, %d", sp.bases[a.Index], sp.bases[a.Index], serialUnroll*a.ElemSize())
		}
	}
	f.bra(quad)
	f.place(rest)
}

// Within a trip the counter is v0+k in body k, so an access a[v+c] of a
// 1-D array is a + (v0+k+c)·size: one base per array, a + v0·size, then
// an immediate offset per access, as nvcc addresses the unrolled loads.
// Without fast math the bases are set before the first trip and stepped
// at the end of each (v grows by exactly serialUnroll a trip: the body
// does not set it), which saves a trip the uniform arithmetic of one base
// per array: the H100's n-body went from 10.93 to 10.60 ms (nvcc 10.33).
// With fast math a trip is short and has no calls, and bases computed
// from v at its top stay in uniform registers, which leaves ptxas the
// vector registers to issue every load of the trip at once; stepped
// bases took 5.41 ms against 4.72. Loads and stores only; not with index
// checks.

// serialPlan is the trip's bases and the body copy being written.
type serialPlan struct {
	aff   *analysis.Affine // the counter (variable 0) and locals derived from it
	bases map[int]string   // array parameter → a + v0·size
	order []*ir.Param      // the arrays of bases, in the order they were made
	copy  int64
}

// planSerial writes the bases of a trip (the first, when they are
// stepped); nil when no access uses them (analysis.SerialAffine).
func (f *fnWriter) planSerial(s *ir.For, v *ir.Var) *serialPlan {
	if f.bounds() {
		return nil
	}
	aff, arrays := analysis.SerialAffine(s, v)
	if aff == nil {
		return nil
	}
	sp := &serialPlan{aff: aff, bases: map[int]string{}}
	vr := f.varReg(v)
	for _, a := range arrays {
		base := f.reg(ir.I64)
		f.emit("mad.lo.s64 %s, %s, %d, %s", base, vr, a.ElemSize(), f.array(a))
		sp.bases[a.Index] = base
		sp.order = append(sp.order, a)
	}
	return sp
}

// serialAddress is the address operand of a[index...] in the trip, or ""
// when the plan does not cover it.
func (f *fnWriter) serialAddress(a *ir.Param, index []ir.Expr) string {
	sp := f.ser
	if sp == nil || a.Dims != 1 || len(index) != 1 {
		return ""
	}
	base, ok := sp.bases[a.Index]
	if !ok {
		return ""
	}
	form, ok := sp.aff.Form(index[0])
	if !ok {
		return ""
	}
	off := (sp.copy + form.C) * int64(a.ElemSize())
	if off == 0 {
		return base
	}
	if off > 1<<24 || off < -(1<<24) {
		return ""
	}
	return fmt.Sprintf("%s+%d", base, off)
}
