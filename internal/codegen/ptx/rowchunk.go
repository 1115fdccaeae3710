package ptx

import "github.com/quadrants-go/qd/internal/ir"

// Row-chunked 2-D parallel loops.
//
// The flat grid-stride loop gives a block 256 consecutive points of the
// row-major flattening: one row segment. A stencil then reads the rows
// above and below through L2, since other blocks, on other
// multiprocessors, hold those rows: on an H100 a 5-point stencil made L2
// 84% busy, hit L1 46% of the time, and reached 0.6 of its byte floor.
// Here a thread walks down a column instead, chunkRows rows at a time:
// what it reads of row i+1 for point i it reads again, as row i, for point
// i+1, and of row i-1 two points later, from its own multiprocessor's L1.
// A block keeps B consecutive columns, so each warp's loads stay one
// coalesced row segment.
//
//	units: (row chunk rc, column block cb) over ceil(n0/K) × ceil(n1/B)
//	       (rc, cb) = ctaid split over the column blocks; (sr, sc) = nctaid split
//	loop:  if rc >= row chunks goto done
//	       j = cb·B + tid; i = rc·K; end = min(i + K, n0)
//	       if j >= n1 goto next
//	       if end - i == K { the chunk with its loads first; goto next }
//	row:   if i >= end goto next; body at (i, j); i++; goto row
//	next:  cb += sc; rc += sr; if cb >= column blocks { cb -= column blocks; rc++ }
//	       goto loop
//
// A whole chunk of a straight-line body issues the loads of all its rows
// before its first store (chunkloads.go); a chunk cut short runs row by
// row. Rows shorter than a block, or fewer rows than a chunk, keep the
// flat loop, chosen when the launch's extents are known; all three are in
// the entry.
//
// Measured on the H100 (5-point stencil, 16384² float32, byte floor 0.71
// ms): flat 1.21 ms; row by row in chunks of 4 rows 1.14, of 8 1.11, of
// 16 1.10; tiles of 8 × 32 (each warp one row segment of 32) 1.69; each
// block walking a contiguous band of units instead of striding 1.3–1.6.
// With the loads first (8 rows, 8 waves) 1.02; with the 32-bit splits
// below and bases stepped by a row, 1.09 at 8 waves and 0.87 at 24;
// chunks of 12 rows at 24 waves 0.855, of 16 0.858 (80 registers against
// 66). On an H200 (byte floor 0.503 ms), at 32 waves, chunks of 8, 12,
// 16, 20 and 24 rows ran 0.67, 0.70, 0.655, 0.72 and 0.84 ms (16 rows at
// 24 waves: 0.655): chunks of 16 rows serve both.

// chunkRows is the number of consecutive rows a thread walks per unit.
const chunkRows = 16

// rowChunkWaves is the grid, in waves of the device (kabi.MaxBlocks), of a
// task with a row-chunked loop, more than the default: measured on the
// H100 (the stencil above, loads first, chunks of 8), 8 waves 1.09 ms, 16
// 0.98, 24 0.87, 32 0.88, 48 0.99 (with 24, a block walks about three
// units).
const rowChunkWaves = 24

// rowChunkable reports whether the row-chunked loop is written for l.
func (f *fnWriter) rowChunkable(l *ir.ParallelFor) bool {
	return len(l.Vars) == 2 && f.info.BlockDim >= 32
}

// rowChunkLoop writes the row-chunked loop of a 2-D parallel task over
// extents ext (int64 registers), entered when the extents are large
// enough; it goes to flat otherwise and to done when finished.
func (f *fnWriter) rowChunkLoop(l *ir.ParallelFor, ext []string, vars []string, aff *affinePlan, flat, done string) {
	b := int64(f.info.BlockDim)
	if f.info.HostTotal != nil {
		// A grid the extents size; without them it is the cap whatever
		// the range, where more waves would only add idle blocks.
		f.info.Waves = rowChunkWaves
		// One block per unit: a grid sized by points launched chunkRows
		// times as many blocks as there are units, the rest idle. On the
		// H200 a 2-D copy went from 0.23, 0.08, 0.25 and 0.75 of a
		// device copy at 1024², 2048², 4096² and 8192² to 1.28 (the copy
		// there is mostly launch), 0.62 (the copy is L2-resident), 0.94
		// and 0.98; the 5-point stencil did not move.
		f.info.PointsPerThread = chunkRows
	}
	small := f.reg(ir.Bool)
	f.emit("setp.lt.s64 %s, %s, %d", small, ext[1], b)
	f.braIf(small, false, flat)
	f.emit("setp.lt.s64 %s, %s, %d", small, ext[0], chunkRows)
	f.braIf(small, false, flat)

	tid, ctaid, nctaid := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ctaid.x", ctaid)
	f.emit("mov.u32 %s, %%nctaid.x", nctaid)
	tx := f.reg(ir.I64)
	f.emit("cvt.u64.u32 %s, %s", tx, tid)
	// Row chunks and column blocks, rounded up.
	rchunks, cblocks := f.reg(ir.I64), f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %d", rchunks, ext[0], chunkRows-1)
	f.emit("div.u64 %s, %s, %d", rchunks, rchunks, chunkRows)
	f.emit("add.s64 %s, %s, %d", cblocks, ext[1], b-1)
	f.emit("div.u64 %s, %s, %d", cblocks, cblocks, b)
	// The block's first unit and the grid's stride, split into (row
	// chunk, column block). The dividend is a 32-bit block number, so a
	// 32-bit division does:
	// with the divisor clamped to 2^32-1 the quotient is still exact,
	// since a block number never reaches it (grids stop below 2^31). A
	// 64-bit division by a register is a long subroutine.
	cb32 := f.reg(ir.U32)
	wide := f.reg(ir.I64)
	f.emit("min.u64 %s, %s, 4294967295", wide, cblocks)
	f.emit("cvt.u32.u64 %s, %s", cb32, wide)
	split := func(v string) (r, c string) {
		q, m := f.reg(ir.U32), f.reg(ir.U32)
		f.emit("div.u32 %s, %s, %s", q, v, cb32)
		f.emit("rem.u32 %s, %s, %s", m, v, cb32)
		r, c = f.reg(ir.I64), f.reg(ir.I64)
		f.emit("cvt.u64.u32 %s, %s", r, q)
		f.emit("cvt.u64.u32 %s, %s", c, m)
		return r, c
	}
	rc, cb := split(ctaid)
	sr, sc := split(nctaid)

	loop, row, rowNext, next := f.label(), f.label(), f.label(), f.label()
	stop := f.reg(ir.Bool)
	i, j, end := f.reg(ir.I64), f.reg(ir.I64), f.reg(ir.I64)
	f.place(loop)
	f.emit("setp.ge.s64 %s, %s, %s", stop, rc, rchunks)
	f.braIf(stop, false, done)
	f.emit("mad.lo.s64 %s, %s, %d, %s", j, cb, b, tx)
	f.emit("mul.lo.s64 %s, %s, %d", i, rc, chunkRows)
	f.emit("add.s64 %s, %s, %d", end, i, chunkRows)
	f.emit("min.s64 %s, %s, %s", end, end, ext[0])
	f.emit("setp.ge.s64 %s, %s, %s", stop, j, ext[1])
	f.braIf(stop, false, next)
	if loads := f.hoistableLoads(l, aff); len(loads) > 0 {
		// A full chunk loads first (chunkloads.go).
		part := f.reg(ir.I64)
		f.emit("sub.s64 %s, %s, %s", part, end, i)
		f.emit("setp.lt.s64 %s, %s, %d", stop, part, chunkRows)
		f.braIf(stop, false, row)
		f.hoistedChunk(l, vars, aff, loads, i, j, next)
	}
	f.place(row)
	f.emit("setp.ge.s64 %s, %s, %s", stop, i, end)
	f.braIf(stop, false, next)
	f.setIndexVar(l.Vars[0].Type, vars[0], ir.I64, i)
	f.setIndexVar(l.Vars[1].Type, vars[1], ir.I64, j)
	if aff != nil {
		f.affineBases(aff, vars)
	}
	f.parNext, f.aff = rowNext, aff
	f.stmts(l.Body)
	f.parNext, f.aff = "", nil
	f.place(rowNext)
	f.emit("add.s64 %s, %s, 1", i, i)
	f.bra(row)

	f.place(next)
	carry := f.reg(ir.Bool)
	f.emit("add.s64 %s, %s, %s", cb, cb, sc)
	f.emit("add.s64 %s, %s, %s", rc, rc, sr)
	f.emit("setp.ge.s64 %s, %s, %s", carry, cb, cblocks)
	f.emit("@%s sub.s64 %s, %s, %s", carry, cb, cb, cblocks)
	f.emit("@%s add.s64 %s, %s, 1", carry, rc, rc)
	f.bra(loop)
}
