package ptx

import (
	"maps"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower/analysis"
)

// Loads of a row chunk, issued together.
//
// In the row-chunked loop (rowchunk.go) a thread runs a chunk's trips one
// after another, and a trip's loads cannot pass the stores of the trip
// before it, which may alias them. So each thread keeps one miss to DRAM
// in flight at a time (a stencil's other rows hit L1), too few to cover
// DRAM's latency: on an H100 the 5-point stencil's warps spent 74% of
// their cycles waiting on loads, and the kernel reached 0.64 of its byte
// floor.
//
// The iterations of a parallel loop are not ordered: they run at once on
// many threads, and one that reads what another writes races with it. So
// the loads of trip k+1 may be issued before the stores of trip k; only
// within a trip must a load that follows a store stay after it. A full
// chunk whose body is straight-line (declarations, assignments and stores,
// no atomics) therefore first loads, for every trip, every element that
// the trip reads before its first store through the affine scheme
// (affine.go), each distinct element once (the rows a stencil shares
// between trips are loaded once), and then runs the trips' bodies on the
// loaded values. A chunk cut short by the end of the range runs trip by
// trip as before. (Prefetching the chunk's rows into L1 or L2 instead, and
// keeping the trips as they were, made the stencil slower: 1.15 ms
// against 1.11.)

// hoistableLoads lists the loads of l's body that a full chunk issues
// first, in evaluation order (analysis.HoistableLoads), when their values
// fit the budget; nil when the body does not qualify.
func (f *fnWriter) hoistableLoads(l *ir.ParallelFor, aff *affinePlan) []*ir.Load {
	if aff == nil {
		return nil
	}
	loads := analysis.HoistableLoads(l.Body, aff.Affine)
	if loads == nil {
		return nil
	}
	if chunkWords(aff, loads) > f.hoistBudget() {
		return nil // the values would not fit in registers: row by row
	}
	return loads
}

// hoistBudget is the most 32-bit words a whole chunk may load first: few
// enough that they stay in registers beside the loop's own at the entry's
// block size (a 1024-thread block leaves each thread 64 registers). A
// 5-point stencil's chunk of 16 rows loads 50 words.
func (f *fnWriter) hoistBudget() int {
	return min(56, 16384/max(f.info.BlockDim, 1))
}

// chunkWords is the number of 32-bit words of the distinct elements a
// whole chunk loads first (hoistedChunk's count).
func chunkWords(aff *affinePlan, loads []*ir.Load) int {
	seen := map[element]bool{}
	words := 0
	for k := range chunkRows {
		for _, ld := range loads {
			el := chunkElement(aff, ld, k)
			if !seen[el] {
				seen[el] = true
				words += max(ld.Type().Size()/4, 1)
			}
		}
	}
	return words
}

// chunkElement is the element ld reads in trip k of a chunk.
func chunkElement(aff *affinePlan, ld *ir.Load, k int) element {
	key, consts, _ := aff.Access(ld.Array, ld.Index)
	for d := range ld.Array.Dims {
		if key.Vars[d] == 0 {
			consts[d] += int64(k)
		}
	}
	return element{key, consts, ld.Leaf}
}

// element identifies the element a load of trip k reads: its array, the
// loop variable of each index, and each index's constant, with k added
// where the index is the row variable, and the leaf of a record element
// (two leaves of one element are two values).
type element struct {
	key    analysis.Key
	consts [3]int64
	leaf   int
}

// chunkTrip sets the loop variables of trip k of the chunk at rows i..,
// column j.
func (f *fnWriter) chunkTrip(l *ir.ParallelFor, vars []string, i, j string, k int) {
	row := f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %d", row, i, k)
	f.setIndexVar(l.Vars[0].Type, vars[0], ir.I64, row)
	f.setIndexVar(l.Vars[1].Type, vars[1], ir.I64, j)
}

// chunkBases writes the affine bases of trip k, given those of trip k-1
// (nil for trip 0): a base indexed [row][column] by the loop's variables
// moves by one row, the others are computed afresh.
func (f *fnWriter) chunkBases(aff *affinePlan, vars []string, prev map[analysis.Key]string, rowBytes map[analysis.Key]string) {
	for _, key := range aff.keys {
		a := aff.arrs[key]
		if prev == nil || a.Dims != 2 || key.Vars[0] != 0 || key.Vars[1] != 1 {
			f.affineBase(aff, key, vars)
			continue
		}
		rb, ok := rowBytes[key]
		if !ok {
			rb = f.reg(ir.I64)
			f.emit("mul.lo.s64 %s, %s, %d", rb, f.dim(a, 1), a.ElemSize())
			rowBytes[key] = rb
		}
		base := f.reg(ir.I64)
		f.emit("add.s64 %s, %s, %s", base, prev[key], rb)
		aff.bases[key] = base
	}
}

// hoistedChunk writes a full chunk at rows i.. and column j: the loads of
// every trip, then every trip's body, then a branch to next.
func (f *fnWriter) hoistedChunk(l *ir.ParallelFor, vars []string, aff *affinePlan, loads []*ir.Load, i, j, next string) {
	loaded := map[element]string{}
	regs := make([]map[*ir.Load]string, chunkRows)
	bases := make([]map[analysis.Key]string, chunkRows)
	rowBytes := map[analysis.Key]string{}
	f.aff = aff
	var prev map[analysis.Key]string
	for k := range chunkRows {
		f.chunkTrip(l, vars, i, j, k)
		f.chunkBases(aff, vars, prev, rowBytes)
		bases[k] = maps.Clone(aff.bases)
		prev = bases[k]
		regs[k] = map[*ir.Load]string{}
		if f.m.target.l2Prefetch() {
			f.ldHint = ".L2::256B"
		}
		for _, ld := range loads {
			el := chunkElement(aff, ld, k)
			r, ok := loaded[el]
			if !ok {
				r = f.expr(ld)
				loaded[el] = r
			}
			regs[k][ld] = r
		}
		f.ldHint = ""
	}
	for k := range chunkRows {
		f.chunkTrip(l, vars, i, j, k)
		maps.Copy(aff.bases, bases[k])
		after := f.label()
		f.parNext, f.hoisted = after, regs[k]
		f.stmts(l.Body)
		f.place(after)
	}
	f.parNext, f.aff, f.hoisted = "", nil, nil
	f.bra(next)
}
