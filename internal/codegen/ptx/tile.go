package ptx

import "github.com/quadrants-go/qd/internal/ir"

// Tiled 2-D parallel loops.
//
// The grid-stride loop gives a block 256 consecutive points of the
// row-major flattening: one row segment. A stencil then reads the rows
// above and below through L2, since other blocks, on other
// multiprocessors, hold those rows: on an H100 a 5-point stencil made L2
// 84% busy, hit L1 46% of the time, and reached 0.6 of its byte floor. So
// a 2-D loop whose rows are long enough is walked by tiles instead: a
// block of B threads covers a tile of B/32 rows × 32 columns (each warp one
// row segment, so loads stay coalesced), and blocks stride over the tiles.
// The neighbours of most points are then in the same block's L1.
//
//	tiles: R = B/32 rows × 32 columns; ty = tid/32, tx = tid%32
//	      (tr, tc) = ctaid split over the tiles' columns; (sr, sc) = nctaid split
//	loop: if tr >= tile rows goto done
//	      i = tr·R + ty; j = tc·32 + tx; if i < n0 && j < n1 { body }
//	next: tc += sc; tr += sr; if tc >= tile columns { tc -= tile columns; tr++ }
//	      goto loop
//
// Every thread of a block walks the same tiles, so the reductions' block
// epilogue after the loop sees them all. Rows shorter than tileMinCols
// keep the flat loop, chosen when the launch's extents are known; both
// loops are in the entry.

// tileMinCols is the shortest row the tiled loop takes: below it most of
// a tile's columns would be idle.
const tileMinCols = 64

// tileable reports whether the tiled loop is written for l.
func (f *fnWriter) tileable(l *ir.ParallelFor) bool {
	b := f.info.BlockDim
	return len(l.Vars) == 2 && b >= 32 && b%32 == 0
}

// tiledLoop writes the tiled loop of a 2-D parallel task over extents ext
// (int64 registers), entered when the rows are long enough; it goes to flat
// otherwise and to done when finished.
func (f *fnWriter) tiledLoop(l *ir.ParallelFor, ext []string, vars []string, aff *affinePlan, flat, done string) {
	short := f.reg(ir.Bool)
	f.emit("setp.lt.s64 %s, %s, %d", short, ext[1], tileMinCols)
	f.braIf(short, false, flat)

	rows := int64(f.info.BlockDim / 32)
	tid, ctaid, nctaid := f.reg(ir.U32), f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ctaid.x", ctaid)
	f.emit("mov.u32 %s, %%nctaid.x", nctaid)
	ty, tx := f.reg(ir.I64), f.reg(ir.I64)
	t32 := f.reg(ir.U32)
	f.emit("shr.u32 %s, %s, 5", t32, tid)
	f.emit("cvt.u64.u32 %s, %s", ty, t32)
	f.emit("and.b32 %s, %s, 31", t32, tid)
	f.emit("cvt.u64.u32 %s, %s", tx, t32)
	// Tile rows and columns, rounded up.
	trows, tcols := f.reg(ir.I64), f.reg(ir.I64)
	f.emit("add.s64 %s, %s, %d", trows, ext[0], rows-1)
	f.emit("div.u64 %s, %s, %d", trows, trows, rows)
	f.emit("add.s64 %s, %s, 31", tcols, ext[1])
	f.emit("shr.u64 %s, %s, 5", tcols, tcols)
	// The block's first tile and the grid's stride, split into (row, col).
	split := func(v string) (r, c string) {
		w := f.reg(ir.I64)
		f.emit("cvt.u64.u32 %s, %s", w, v)
		r, c = f.reg(ir.I64), f.reg(ir.I64)
		f.emit("div.u64 %s, %s, %s", r, w, tcols)
		f.emit("mul.lo.s64 %s, %s, %s", c, r, tcols)
		f.emit("sub.s64 %s, %s, %s", c, w, c)
		return r, c
	}
	tr, tc := split(ctaid)
	sr, sc := split(nctaid)

	loop, next := f.label(), f.label()
	stop, in, ok := f.reg(ir.Bool), f.reg(ir.Bool), f.reg(ir.Bool)
	i, j := f.reg(ir.I64), f.reg(ir.I64)
	f.place(loop)
	f.emit("setp.ge.s64 %s, %s, %s", stop, tr, trows)
	f.braIf(stop, false, done)
	f.emit("mad.lo.s64 %s, %s, %d, %s", i, tr, rows, ty)
	f.emit("shl.b64 %s, %s, 5", j, tc)
	f.emit("add.s64 %s, %s, %s", j, j, tx)
	f.emit("setp.lt.s64 %s, %s, %s", in, i, ext[0])
	f.emit("setp.lt.s64 %s, %s, %s", ok, j, ext[1])
	f.emit("and.pred %s, %s, %s", in, in, ok)
	f.braIf(in, true, next)
	f.setIndexVar(l.Vars[0].Type, vars[0], ir.I64, i)
	f.setIndexVar(l.Vars[1].Type, vars[1], ir.I64, j)
	if aff != nil {
		f.affineBases(aff, vars)
	}
	f.parNext, f.aff = next, aff
	f.stmts(l.Body)
	f.parNext, f.aff = "", nil

	f.place(next)
	carry := f.reg(ir.Bool)
	f.emit("add.s64 %s, %s, %s", tc, tc, sc)
	f.emit("add.s64 %s, %s, %s", tr, tr, sr)
	f.emit("setp.ge.s64 %s, %s, %s", carry, tc, tcols)
	f.emit("@%s sub.s64 %s, %s, %s", carry, tc, tc, tcols)
	f.emit("@%s add.s64 %s, %s, 1", carry, tr, tr)
	f.bra(loop)
}
