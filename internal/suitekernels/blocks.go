package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// Block-level kernels (ir.Blocks): shared memory, barriers, per-thread
// values and the block collectives.

// BlockTreeSum: out[b] = the sum of block b's 128 elements of x (int32;
// those past its end count 0, the shared array's zero), by a tree in
// shared memory: a uniform serial loop of thread loops
// ("blockTreeSum").
func BlockTreeSum() *ir.Kernel {
	const size = 128
	b := ir.NewBuilder("blockTreeSum")
	x := b.Array("x", ir.I32, 1)
	out := b.Array("out", ir.I32, 1)
	n := ir.LenOf(x, 0)
	b.Blocks(ir.LenOf(out, 0), ir.I64c(size), func(blk *ir.Var) {
		sh := b.Shared("sh", ir.I32, size)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(size)), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() { b.Store(sh, ir.Ld(x, ir.Ref(i)), ir.Ref(t)) }, nil)
		})
		stride := b.Decl("stride", ir.I64c(size/2))
		b.While(ir.Op(ir.Gt, ir.Ref(stride), ir.I64c(0)), func() {
			b.Threads(func(t *ir.Var) {
				b.If(ir.Op(ir.Lt, ir.Ref(t), ir.Ref(stride)), func() {
					b.Store(sh, ir.Op(ir.Add, ir.Ld(sh, ir.Ref(t)), ir.Ld(sh, ir.Op(ir.Add, ir.Ref(t), ir.Ref(stride)))), ir.Ref(t))
				}, nil)
			})
			b.Assign(stride, ir.Op(ir.Div, ir.Ref(stride), ir.I64c(2)))
		})
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() { b.Store(out, ir.Ld(sh, ir.I64c(0)), ir.Ref(blk)) }, nil)
		})
	})
	return b.Kernel()
}

// BlockCollectives: blocks of bs threads (a parameter) over x, of elem;
// per block sums[b], mins[b], maxs[b] of its elements, and per element
// ex[i] and in[i], the exclusive and inclusive prefix sums within its
// block. Threads past len(x) contribute 0 to sums and scans, and x[0] to
// mins and maxs ("blockCollectives").
func BlockCollectives(elem ir.Type) *ir.Kernel {
	b := ir.NewBuilder("blockCollectives")
	x := b.Array("x", elem, 1)
	sums, mins, maxs := b.Array("sums", elem, 1), b.Array("mins", elem, 1), b.Array("maxs", elem, 1)
	ex, in := b.Array("ex", elem, 1), b.Array("in", elem, 1)
	bs := b.Scalar("bs", ir.I64)
	n := ir.LenOf(x, 0)
	b.Blocks(ir.LenOf(sums, 0), ir.P(bs), func(blk *ir.Var) {
		v := b.PerThread("v", elem)
		w := b.PerThread("w", elem)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.P(bs)), ir.Ref(t)))
			b.Assign(w, ir.Ld(x, ir.I64c(0)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() {
				b.Assign(v, ir.Ld(x, ir.Ref(i)))
				b.Assign(w, ir.Ref(v))
			}, nil)
		})
		sum := b.BlockReduce(ir.Add, v)
		lo := b.BlockReduce(ir.Min, w)
		hi := b.BlockReduce(ir.Max, w)
		e := b.BlockScan(false, v)
		c := b.BlockScan(true, v)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.P(bs)), ir.Ref(t)))
			b.If(ir.Op(ir.Lt, ir.Ref(i), n), func() {
				b.Store(ex, ir.Ref(e), ir.Ref(i))
				b.Store(in, ir.Ref(c), ir.Ref(i))
			}, nil)
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() {
				b.Store(sums, ir.Ref(sum), ir.Ref(blk))
				b.Store(mins, ir.Ref(lo), ir.Ref(blk))
				b.Store(maxs, ir.Ref(hi), ir.Ref(blk))
			}, nil)
		})
	})
	return b.Kernel()
}

// BlockTranspose: out[j][i] = in[i][j] for an n×m float32 array, through
// an 8×9 shared tile (the ninth column keeps the reads of a column off
// one bank), one 8×8 tile per block of 64 threads ("blockTranspose").
func BlockTranspose() *ir.Kernel {
	const tile = 8
	b := ir.NewBuilder("blockTranspose")
	in := b.Array("in", ir.F32, 2)
	out := b.Array("out", ir.F32, 2)
	rows, cols := ir.LenOf(in, 0), ir.LenOf(in, 1)
	tilesX := ir.Op(ir.Div, ir.Op(ir.Add, cols, ir.I64c(tile-1)), ir.I64c(tile))
	tilesY := ir.Op(ir.Div, ir.Op(ir.Add, rows, ir.I64c(tile-1)), ir.I64c(tile))
	b.Blocks(ir.Op(ir.Mul, tilesX, tilesY), ir.I64c(tile*tile), func(blk *ir.Var) {
		sh := b.Shared("tile", ir.F32, tile, tile+1)
		bx := b.Decl("bx", ir.Op(ir.Rem, ir.Ref(blk), tilesX))
		by := b.Decl("by", ir.Op(ir.Div, ir.Ref(blk), tilesX))
		b.Threads(func(t *ir.Var) {
			ty, tx := ir.Op(ir.Div, ir.Ref(t), ir.I64c(tile)), ir.Op(ir.Rem, ir.Ref(t), ir.I64c(tile))
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(by), ir.I64c(tile)), ty))
			j := b.Decl("j", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(bx), ir.I64c(tile)), tx))
			b.If(ir.Op(ir.LAnd, ir.Op(ir.Lt, ir.Ref(i), rows), ir.Op(ir.Lt, ir.Ref(j), cols)), func() {
				b.Store(sh, ir.Ld(in, ir.Ref(i), ir.Ref(j)), ty, tx)
			}, nil)
		})
		b.Threads(func(t *ir.Var) {
			ty, tx := ir.Op(ir.Div, ir.Ref(t), ir.I64c(tile)), ir.Op(ir.Rem, ir.Ref(t), ir.I64c(tile))
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(by), ir.I64c(tile)), tx))
			j := b.Decl("j", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(bx), ir.I64c(tile)), ty))
			b.If(ir.Op(ir.LAnd, ir.Op(ir.Lt, ir.Ref(i), rows), ir.Op(ir.Lt, ir.Ref(j), cols)), func() {
				b.Store(out, ir.Ld(sh, tx, ty), ir.Ref(j), ir.Ref(i))
			}, nil)
		})
	})
	return b.Kernel()
}

// BlockHistogram: hist[v] counts the values v of x (int32, 0 ≤ v < 16)
// through bins privatised per block in shared memory: nb blocks of 128
// threads stride over x, count with shared atomics, then add their bins
// to hist with one atomic per bin ("blockHistogram").
func BlockHistogram() *ir.Kernel {
	const size, bins = 128, 16
	b := ir.NewBuilder("blockHistogram")
	x := b.Array("x", ir.I32, 1)
	hist := b.Array("hist", ir.I32, 1)
	nb := b.Scalar("nb", ir.I64)
	b.Blocks(ir.P(nb), ir.I64c(size), func(blk *ir.Var) {
		sh := b.Shared("bins", ir.I32, bins)
		b.Threads(func(t *ir.Var) {
			i := b.Decl("i", ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(size)), ir.Ref(t)))
			b.While(ir.Op(ir.Lt, ir.Ref(i), ir.LenOf(x, 0)), func() {
				b.Do(ir.AtomicE(ir.AtomicAdd, sh, ir.I32c(1), ir.Ld(x, ir.Ref(i))))
				b.Assign(i, ir.Op(ir.Add, ir.Ref(i), ir.Op(ir.Mul, ir.P(nb), ir.I64c(size))))
			})
		})
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Lt, ir.Ref(t), ir.I64c(bins)), func() {
				b.Do(ir.AtomicE(ir.AtomicAdd, hist, ir.Ld(sh, ir.Ref(t)), ir.Ref(t)))
			}, nil)
		})
	})
	return b.Kernel()
}

// BlockRecords: per block of 32 threads, a shared array of records
// {A f32; B i32} is written by thread t at element 31-t and read back at
// t: out[b*32+t] = float32(B) + A of the element thread 31-t wrote
// ("blockRecords").
func BlockRecords() *ir.Kernel {
	const size = 32
	b := ir.NewBuilder("blockRecords")
	out := b.Array("out", ir.F32, 1)
	b.Blocks(ir.Op(ir.Div, ir.LenOf(out, 0), ir.I64c(size)), ir.I64c(size), func(blk *ir.Var) {
		sh := b.Shared("recs", ir.Invalid, size)
		sh.Rec = &ir.Record{Name: "rec", Size: 8, Align: 4, Leaves: []ir.Leaf{{Path: ".A", Type: ir.F32, Offset: 0}, {Path: ".B", Type: ir.I32, Offset: 4}}}
		b.Threads(func(t *ir.Var) {
			k := ir.Op(ir.Sub, ir.I64c(size-1), ir.Ref(t))
			b.StoreLeaf(sh, 0, ir.Conv(ir.F32, ir.Ref(t)), k)
			b.StoreLeaf(sh, 1, ir.Conv(ir.I32, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(100))), k)
		})
		b.Threads(func(t *ir.Var) {
			v := ir.Op(ir.Add, ir.Conv(ir.F32, ir.LdLeaf(sh, 1, ir.Ref(t))), ir.LdLeaf(sh, 0, ir.Ref(t)))
			b.Store(out, v, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(blk), ir.I64c(size)), ir.Ref(t)))
		})
	})
	return b.Kernel()
}

// BlockKernels are the block-level kernels, for the generators' checks.
func BlockKernels() []*ir.Kernel {
	return []*ir.Kernel{BlockTreeSum(), BlockCollectives(ir.I32), BlockCollectives(ir.F32), BlockCollectives(ir.F64),
		BlockCollectives(ir.I64), BlockCollectives(ir.U32), BlockTranspose(), BlockHistogram(), BlockRecords()}
}
