package qd

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
)

// Aliased slice arguments.
//
// qd copies Go slice arguments in before a kernel and back after it
// (packing a multi-dimensional slice into one block), or on the CPU uses a
// one-dimensional slice's memory directly. Two slices of one launch that
// share memory, say m [][]float32 and m[0], would then not see each other's
// writes as they do when the kernel runs natively, and the copy back of
// one would overwrite the writes to the other. So the rule is: slices of
// one launch (and the rows of one multi-dimensional slice) must not
// overlap in memory when the kernel writes (stores to, or applies an
// atomic to) either of them. Slices the kernel only reads may overlap;
// whether it writes a parameter is read off its code, so the check is
// exact, not a guess. A launch that breaks the rule fails with an
// *ArgumentError naming both slices, and runs nothing.

// span is the memory of one Go slice argument, or of one row of a
// multi-dimensional one.
type span struct {
	lo, hi uintptr
	param  int
	row    [2]int // the row's indices in the argument; -1 where unused
}

// addSpan notes the memory of s (row r of parameter param) for the check.
func addSpan[T any](spans *[]span, param int, r [2]int, s []T) {
	if len(s) == 0 {
		return // no memory, no overlap
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	*spans = append(*spans, span{lo: lo, hi: lo + uintptr(len(s))*unsafe.Sizeof(s[0]), param: param, row: r})
}

// writtenParams marks the parameters k stores to or applies atomics to.
func writtenParams(k *ir.Kernel) []bool {
	w := make([]bool, len(k.Params))
	mark := func(p *ir.Param) {
		if p != nil && p.Index >= 0 && p.Index < len(w) {
			w[p.Index] = true
		}
	}
	ir.Inspect(k.Body, func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.Store:
			mark(n.Array)
		case *ir.Atomic:
			mark(n.Array)
		}
		return true
	})
	return w
}

// checkAliases refuses overlapping spans of which one is written. It
// sorts spans by address (stably, so rows keep their order) and sweeps
// them, keeping the span that reaches furthest: any span overlapping an
// earlier one overlaps that one too, and if either of an overlapping pair
// is written, the sweep meets a written overlapping pair.
func (kc *kernelCore) checkAliases(spans []span) error {
	if len(spans) < 2 {
		return nil
	}
	byAddr := func(a, b span) int { return cmp.Compare(a.lo, b.lo) }
	if !slices.IsSortedFunc(spans, byAddr) {
		slices.SortStableFunc(spans, byAddr)
	}
	far := 0
	for i := 1; i < len(spans); i++ {
		prev, cur := spans[far], spans[i]
		if cur.lo < prev.hi && (kc.written[prev.param] || kc.written[cur.param]) {
			w := prev
			if kc.written[cur.param] {
				w = cur
			}
			params := kc.plan.Kernel.Params
			return kc.argErr(cur.param, "%s overlaps %s (parameter %d) in memory, and the kernel writes %s: "+
				"pass slices that do not overlap (qd copies slices in and back, so writes through one would not show through the other)",
				kc.spanName(cur), kc.spanName(prev), prev.param+1, params[w.param].Name)
		}
		if cur.hi > prev.hi {
			far = i
		}
	}
	return nil
}

// spanName names a span as the user wrote it: m, m[2] or m[2][1].
func (kc *kernelCore) spanName(s span) string {
	name := kc.plan.Kernel.Params[s.param].Name
	for _, r := range s.row {
		if r >= 0 {
			name += fmt.Sprintf("[%d]", r)
		}
	}
	return name
}
