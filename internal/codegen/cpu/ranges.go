package cpu

import (
	"math"
	"sort"

	"github.com/quadrants-go/qd/internal/ir"
)

// Lane ranges. Comparing the contiguous innermost index with a uniform
// value (j > 0, j < m-1) is true on one run of consecutive lanes, so such a
// condition, and && of such conditions, is computed as a lane range [lo, hi)
// in O(1) instead of a vector, and an if on it narrows the mask by slicing.
// This is what keeps a guarded stencil free of per-lane mask work.

// rangeFn gives the lanes [lo, hi) on which a bool value is true, or
// ok=false when that is not a single run in this batch (the caller then uses
// the vector).
type rangeFn func(f *frame) (lo, hi int, ok bool)

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

// cmpRange adds a lane range to the comparison res = x op y when one side
// is contiguous and the other uniform.
func cmpRange[T integer](res *ev[bool], op ir.BinOp, x, y *ev[T]) {
	minT, maxT, ok := intBounds[T]()
	if !ok || res.v == nil {
		return
	}
	var lin func(*frame) int64
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
	case ir.Lt, ir.Le, ir.Gt, ir.Ge, ir.Eq:
	default:
		return
	}
	res.rng = func(f *frame) (int, int, bool) {
		b, n := lin(f), int64(f.n)
		// Lane k holds b+k exactly only if no lane wraps around T.
		if b < minT || b > maxT-(n-1) {
			return 0, 0, false
		}
		uv := int64(u(f))
		d := uv - b // lane k compares k with d
		if (uv^b)&(uv^d) < 0 {
			return 0, 0, false // overflow
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
		case ir.Eq:
			lo, hi = clamp(d, 0, n), clamp(d, -1, n)+1
		}
		hi = min(hi, n)
		return int(lo), int(max(hi, lo)), true
	}
}

// andRange is the range of x && y when both have one (or are uniform).
func andRange(x, y *ev[bool]) rangeFn {
	xr, yr := boolRange(x), boolRange(y)
	if xr == nil || yr == nil {
		return nil
	}
	return func(f *frame) (int, int, bool) {
		lo, hi, ok := xr(f)
		if !ok {
			return 0, 0, false
		}
		// Y only matters on active lanes where X holds.
		if !anyIn(f.m, lo, hi) {
			return lo, lo, true
		}
		m := f.m
		f.m = rangeMask(m, lo, hi)
		lo2, hi2, ok := yr(f)
		f.m = m
		if !ok {
			return 0, 0, false
		}
		lo, hi = max(lo, lo2), min(hi, hi2)
		return lo, max(lo, hi), true
	}
}

// boolRange is the range form of a uniform or ranged bool, nil otherwise.
func boolRange(x *ev[bool]) rangeFn {
	if x.rng != nil {
		return x.rng
	}
	if x.u != nil {
		u := x.u
		return func(f *frame) (int, int, bool) {
			if u(f) {
				return 0, f.n, true
			}
			return 0, 0, true
		}
	}
	return nil
}

// anyIn reports whether an active lane lies in [lo, hi).
func anyIn(m mask, lo, hi int) bool {
	if lo >= hi {
		return false
	}
	if m.all {
		return lo < len(m.idx)
	}
	i := sort.Search(len(m.idx), func(i int) bool { return int(m.idx[i]) >= lo })
	return i < len(m.idx) && int(m.idx[i]) < hi
}

// rangeMask is m restricted to lanes [lo, hi): a subslice of m's list, so
// it costs no copy.
func rangeMask(m mask, lo, hi int) mask {
	if lo >= hi {
		return mask{}
	}
	if m.all {
		if lo == 0 && hi == len(m.idx) {
			return m
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
