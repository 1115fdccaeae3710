package cpu

import (
	"math"
	"sort"

	"github.com/quadrants-go/qd/internal/ir"
)

// Lane sets. Comparing the contiguous innermost index with a uniform value
// (j > 0, j < m-1, j == 0, j != m-1) is true on one run of consecutive
// lanes, or on all lanes but one run, so such a condition, and !, && and ||
// of such conditions, is computed as a lane set in O(1) instead of a
// vector. An if on it narrows the mask by slicing, or, when every lane is
// active, runs each branch over its runs as batches of their own (see
// frame.sub), so that the loads, stores and assignments inside keep their
// all-lanes fast paths. This is what keeps a guarded stencil, and a border
// test such as the heat step's i == 0 || j == 0 || i == n-1 || j == m-1,
// free of per-lane mask work.

// laneSet is the lanes [lo, hi) of a batch when inv is false, and every
// lane but those when it is true.
type laneSet struct {
	lo, hi int
	inv    bool
}

// run is the lanes [lo, hi).
type run struct{ lo, hi int }

// runs lists the lane set's non-empty runs in a batch of n lanes, in order:
// at most two.
func (s laneSet) runs(n int) (r [2]run, k int) {
	lo, hi := min(max(s.lo, 0), n), min(max(s.hi, 0), n)
	if !s.inv {
		if lo < hi {
			r[0], k = run{lo, hi}, 1
		}
		return r, k
	}
	if lo >= hi {
		r[0] = run{0, n}
		return r, boolInt(n > 0)
	}
	if lo > 0 {
		r[k] = run{0, lo}
		k++
	}
	if hi < n {
		r[k] = run{hi, n}
		k++
	}
	return r, k
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// norm clamps s to a batch of n lanes; an empty run becomes [0, 0).
func (s laneSet) norm(n int) laneSet {
	s.lo, s.hi = min(max(s.lo, 0), n), min(max(s.hi, 0), n)
	if s.lo >= s.hi {
		s.lo, s.hi = 0, 0
	}
	return s
}

// intersect is a ∩ b in a batch of n lanes, ok=false when that is not a
// lane set. It runs for every && and || of lane sets in every batch, so it
// works on the two forms directly rather than on lists of runs.
func intersect(a, b laneSet, n int) (laneSet, bool) {
	a, b = a.norm(n), b.norm(n)
	switch {
	case !a.inv && a.lo == a.hi, b.inv && b.lo == b.hi: // a empty, or b all
		return a, true
	case !b.inv && b.lo == b.hi, a.inv && a.lo == a.hi:
		return b, true
	case !a.inv && !b.inv:
		return laneSet{lo: max(a.lo, b.lo), hi: max(min(a.hi, b.hi), max(a.lo, b.lo))}.norm(n), true
	case a.inv && b.inv:
		// All lanes but two holes.
		if max(a.lo, b.lo) <= min(a.hi, b.hi) {
			return laneSet{lo: min(a.lo, b.lo), hi: max(a.hi, b.hi), inv: true}, true
		}
		if a.lo > b.lo {
			a, b = b, a
		}
		if a.lo == 0 && b.hi == n { // the holes cover both ends
			return laneSet{lo: a.hi, hi: b.lo}, true
		}
		return laneSet{}, false
	}
	// One run r less one hole h.
	r, h := a, b
	if r.inv {
		r, h = b, a
	}
	switch {
	case h.hi <= r.lo || h.lo >= r.hi:
		return r, true
	case h.lo <= r.lo && h.hi >= r.hi:
		return laneSet{}, true
	case h.lo <= r.lo:
		return laneSet{lo: h.hi, hi: r.hi}, true
	case h.hi >= r.hi:
		return laneSet{lo: r.lo, hi: h.lo}, true
	case r.lo == 0 && r.hi == n:
		return h, true
	}
	return laneSet{}, false
}

func (s laneSet) not() laneSet { s.inv = !s.inv; return s }

// rangeFn gives the lane set on which a bool value is true, or ok=false
// when that is no lane set in this batch (the caller then uses the vector).
type rangeFn func(f *frame) (s laneSet, ok bool)

// intBounds are the smallest and largest values of an integer type as
// int64; ok is false for U64, whose values do not all fit.
func intBounds[T integer]() (lo, hi int64, ok bool) {
	switch irType[T]() {
	case ir.I32:
		return math.MinInt32, math.MaxInt32, true
	case ir.I64:
		return math.MinInt64, math.MaxInt64, true
	case ir.U32:
		return 0, math.MaxUint32, true
	}
	return 0, 0, false
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// cmpRange adds a lane set to the comparison res = x op y when one side is
// contiguous and the other uniform.
func cmpRange[T integer](res *ev[bool], op ir.BinOp, x, y *ev[T]) {
	minT, maxT, ok := intBounds[T]()
	if !ok || res.v == nil {
		return
	}
	var lin func(*frame) (int64, bool)
	var u func(*frame) T
	switch {
	case x.lin != nil && y.u != nil:
		lin, u = x.lin, y.u
	case y.lin != nil && x.u != nil:
		// u op lin  ⇔  lin op' u
		lin, u = y.lin, x.u
		switch op {
		case ir.Lt:
			op = ir.Gt
		case ir.Le:
			op = ir.Ge
		case ir.Gt:
			op = ir.Lt
		case ir.Ge:
			op = ir.Le
		}
	default:
		return
	}
	switch op {
	case ir.Lt, ir.Le, ir.Gt, ir.Ge, ir.Eq, ir.Ne:
	default:
		return
	}
	res.rng = func(f *frame) (laneSet, bool) {
		b, ok := lin(f)
		if !ok {
			return laneSet{}, false
		}
		n := int64(f.n)
		// Lane k holds b+k exactly only if no lane wraps around T.
		if b < minT || b > maxT-(n-1) {
			return laneSet{}, false
		}
		uv := int64(u(f))
		d := uv - b // lane k compares k with d
		if (uv^b)&(uv^d) < 0 {
			return laneSet{}, false // overflow
		}
		var lo, hi int64
		switch op {
		case ir.Lt: // k < d
			lo, hi = 0, clamp(d, 0, n)
		case ir.Le: // k <= d
			lo, hi = 0, clamp(d, -1, n)+1
		case ir.Gt: // k > d
			lo, hi = clamp(d, -1, n)+1, n
		case ir.Ge: // k >= d
			lo, hi = clamp(d, 0, n), n
		case ir.Eq, ir.Ne:
			lo, hi = clamp(d, 0, n), clamp(d, -1, n)+1
		}
		hi = min(hi, n)
		return laneSet{lo: int(lo), hi: int(max(hi, lo)), inv: op == ir.Ne}, true
	}
}

// notRange is the lane set of !x.
func notRange(x *ev[bool]) rangeFn {
	xr := boolRange(x)
	if xr == nil {
		return nil
	}
	return func(f *frame) (laneSet, bool) {
		s, ok := xr(f)
		return s.not(), ok
	}
}

// logicRange is the lane set of x && y, or of x || y (the same with
// x, y and the result negated: De Morgan). Y is evaluated only when an
// active lane needs it, with the mask narrowed to those lanes, as && and ||
// do with vectors.
func logicRange(x, y *ev[bool], and bool, scratch int) rangeFn {
	xr, yr := boolRange(x), boolRange(y)
	if xr == nil || yr == nil {
		return nil
	}
	return func(f *frame) (laneSet, bool) {
		sx, ok := xr(f)
		if !ok {
			return laneSet{}, false
		}
		if !and {
			sx = sx.not()
		}
		// sx: where Y decides. Y only matters on active lanes there; a
		// nested && or || in Y needs those lanes as its mask, a comparison
		// only needs to know that there are some.
		m := f.m
		if !y.rngMasked {
			if !activeIn(m, sx, f.n) {
				return fromAnd(sx, and), true
			}
		} else if f.m = restrict(f, m, sx, scratch); f.m.empty() {
			f.m = m
			return fromAnd(sx, and), true
		}
		sy, ok := yr(f)
		f.m = m
		if !ok {
			return laneSet{}, false
		}
		if !and {
			sy = sy.not()
		}
		s, ok := intersect(sx, sy, f.n)
		return fromAnd(s, and), ok
	}
}

// fromAnd turns the set of an && back into the set of the operation.
func fromAnd(s laneSet, and bool) laneSet {
	if and {
		return s
	}
	return s.not()
}

// boolRange is the lane-set form of a uniform or ranged bool, nil
// otherwise.
func boolRange(x *ev[bool]) rangeFn {
	if x.rng != nil {
		return x.rng
	}
	if x.u != nil {
		u := x.u
		return func(f *frame) (laneSet, bool) {
			if u(f) {
				return laneSet{lo: 0, hi: f.n}, true
			}
			return laneSet{}, true
		}
	}
	return nil
}

// activeIn reports whether a lane of mask m lies in lane set s.
func activeIn(m mask, s laneSet, n int) bool {
	s = s.norm(n)
	if len(m.idx) == 0 {
		return false
	}
	if m.all {
		if !s.inv {
			return s.lo < s.hi
		}
		return s.lo > 0 || s.hi < n || s.lo == s.hi // a lane outside the hole
	}
	if s.inv {
		return int(m.idx[0]) < s.lo || int(m.idx[len(m.idx)-1]) >= s.hi || s.lo == s.hi
	}
	i := sort.Search(len(m.idx), func(i int) bool { return int(m.idx[i]) >= s.lo })
	return i < len(m.idx) && int(m.idx[i]) < s.hi
}

// restrict is mask m narrowed to lane set s: a subslice of m's list when s
// is one run, else a list written to mask slot dst. dst may hold m itself:
// the list is filtered in place, entries moving only backwards, so nested
// restrictions can share one scratch slot.
func restrict(f *frame, m mask, s laneSet, dst int) mask {
	if !s.inv {
		return rangeMask(m, s.lo, s.hi)
	}
	r, k := s.runs(f.n)
	switch {
	case k == 0:
		return mask{}
	case k == 1:
		return rangeMask(m, r[0].lo, r[0].hi)
	}
	return rangeElse(f.slot(dst), m, s.lo, s.hi)
}

// rangeMask is m restricted to lanes [lo, hi): a subslice of m's list, so
// it costs no copy.
func rangeMask(m mask, lo, hi int) mask {
	if lo >= hi {
		return mask{}
	}
	if m.all {
		lo, hi = max(lo, 0), min(hi, len(m.idx))
		if lo == 0 && hi == len(m.idx) {
			return m
		}
		if lo >= hi {
			return mask{}
		}
		return mask{idx: m.idx[lo:hi]}
	}
	i := sort.Search(len(m.idx), func(i int) bool { return int(m.idx[i]) >= lo })
	j := sort.Search(len(m.idx), func(i int) bool { return int(m.idx[i]) >= hi })
	return mask{idx: m.idx[i:j]}
}

// rangeElse is m without lanes [lo, hi), written to dst.
func rangeElse(dst []int32, m mask, lo, hi int) mask {
	c := 0
	for _, k := range m.idx {
		dst[c] = k
		if int(k) < lo || int(k) >= hi {
			c++
		}
	}
	if c == len(m.idx) {
		return m
	}
	return mask{idx: dst[:c]}
}
