package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// Kernels over values beyond the scalars: arrays of records (Go structs
// and fixed arrays, in Go's layout), the 8- and 16-bit integers, bit
// casts and 4-D arrays. Each comment gives the Go types the host passes
// and what the kernel leaves in them.

// ParticleRecord is the layout of
//
//	type Particle struct {
//		Pos  [2]float32 // leaves 0, 1 at bytes 0, 4
//		Mass float64    // leaf 2 at 8
//		ID   int32      // leaf 3 at 16
//		Tag  uint8      // leaf 4 at 20, then 3 bytes of padding
//	}
func ParticleRecord() *ir.Record {
	return &ir.Record{Name: "Particle", Size: 24, Align: 8, Leaves: []ir.Leaf{
		{Path: ".Pos[0]", Type: ir.F32, Offset: 0}, {Path: ".Pos[1]", Type: ir.F32, Offset: 4},
		{Path: ".Mass", Type: ir.F64, Offset: 8}, {Path: ".ID", Type: ir.I32, Offset: 16},
		{Path: ".Tag", Type: ir.U8, Offset: 20},
	}}
}

// CellRecord is the layout of
//
//	type Cell struct {
//		V [2]float32 // leaves 0, 1 at bytes 0, 4: a Vec2[float32]
//		M float32    // leaf 2 at 8
//		N int32      // leaf 3 at 12
//	}
func CellRecord() *ir.Record {
	return &ir.Record{Name: "Cell", Size: 16, Align: 4, Leaves: []ir.Leaf{
		{Path: ".V[0]", Type: ir.F32, Offset: 0}, {Path: ".V[1]", Type: ir.F32, Offset: 4},
		{Path: ".M", Type: ir.F32, Offset: 8}, {Path: ".N", Type: ir.I32, Offset: 12},
	}}
}

// Vec4Record is the layout of [4]float32 (qd.Vec4[float32]).
func Vec4Record() *ir.Record {
	r := &ir.Record{Name: "[4]float32", Size: 16, Align: 4}
	for k := range 4 {
		r.Leaves = append(r.Leaves, ir.Leaf{Path: "[" + string(rune('0'+k)) + "]", Type: ir.F32, Offset: 4 * k})
	}
	return r
}

// StatsRecord is the layout of
//
//	type Stats struct {
//		N   int64   // leaf 0 at 0
//		Sum float64 // leaf 1 at 8
//		Max int32   // leaf 2 at 16, then 4 bytes of padding
//	}
func StatsRecord() *ir.Record {
	return &ir.Record{Name: "Stats", Size: 24, Align: 8, Leaves: []ir.Leaf{
		{Path: ".N", Type: ir.I64, Offset: 0}, {Path: ".Sum", Type: ir.F64, Offset: 8},
		{Path: ".Max", Type: ir.I32, Offset: 16},
	}}
}

// NodeRecord is the layout of
//
//	type Node struct {
//		V [2]float32 // leaves 0, 1 at bytes 0, 4
//		M float32    // leaf 2 at 8
//	}
func NodeRecord() *ir.Record {
	return &ir.Record{Name: "Node", Size: 12, Align: 4, Leaves: []ir.Leaf{
		{Path: ".V[0]", Type: ir.F32, Offset: 0}, {Path: ".V[1]", Type: ir.F32, Offset: 4},
		{Path: ".M", Type: ir.F32, Offset: 8},
	}}
}

// RecordUpdate ("recupdate", p []Particle): for every i,
// p[i].Pos[0] += p[i].Pos[1]; p[i].Mass *= 2; p[i].ID = 3*int32(i);
// p[i].Tag = uint8(3*int32(i)). Pos[1] and the padding stay as they were.
func RecordUpdate() *ir.Kernel {
	b := ir.NewBuilder("recupdate")
	p := b.Records("p", ParticleRecord(), 1)
	b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) {
		at := ir.Ref(i)
		b.StoreLeaf(p, 0, ir.Op(ir.Add, ir.LdLeaf(p, 0, at), ir.LdLeaf(p, 1, at)), at)
		b.StoreLeaf(p, 2, ir.Op(ir.Mul, ir.LdLeaf(p, 2, at), ir.F64c(2)), at)
		id := b.Decl("id", ir.Op(ir.Mul, ir.Conv(ir.I32, at), ir.I32c(3)))
		b.StoreLeaf(p, 3, ir.Ref(id), at)
		b.StoreLeaf(p, 4, ir.Conv(ir.U8, ir.Ref(id)), at)
	})
	return b.Kernel()
}

// Scatter2 ("scatter2", grid []Cell, idx []int32, w []float32): for every
// i, with c = idx[i], atomically grid[c].V[0] += w[i], grid[c].V[1] +=
// 2*w[i], grid[c].M += 1 and grid[c].N += 1 (an atomic add of a Vec2
// field as the front end writes it, leaf by leaf: on sm_90 the PTX adds V
// with one red.global.add.v2.f32). So each cell's V holds the sums of the
// weights scattered to it (and twice that), M and N their count.
func Scatter2() *ir.Kernel {
	b := ir.NewBuilder("scatter2")
	grid := b.Records("grid", CellRecord(), 1)
	idx, w := b.Array("idx", ir.I32, 1), b.Array("w", ir.F32, 1)
	b.Parallel(ir.LenOf(idx, 0), func(i *ir.Var) {
		c := b.Decl("c", ir.Conv(ir.I64, ir.Ld(idx, ir.Ref(i))))
		wi := b.Decl("wi", ir.Ld(w, ir.Ref(i)))
		at := ir.Ref(c)
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, 0, ir.Ref(wi), at))
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, 1, ir.Op(ir.Mul, ir.Ref(wi), ir.F32c(2)), at))
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, 2, ir.F32c(1), at))
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, 3, ir.I32c(1), at))
	})
	return b.Kernel()
}

// Scatter4 ("scatter4", grid [][4]float32, idx []int32, w []float32): for
// every i, with c = idx[i], atomically grid[c][k] += w[i]*(k+1) for k = 0
// .. 3 (one red.global.add.v4.f32 on sm_90). Each cell holds the sum of
// its weights times 1, 2, 3 and 4.
func Scatter4() *ir.Kernel {
	b := ir.NewBuilder("scatter4")
	grid := b.Records("grid", Vec4Record(), 1)
	idx, w := b.Array("idx", ir.I32, 1), b.Array("w", ir.F32, 1)
	b.Parallel(ir.LenOf(idx, 0), func(i *ir.Var) {
		c := b.Decl("c", ir.Conv(ir.I64, ir.Ld(idx, ir.Ref(i))))
		wi := b.Decl("wi", ir.Ld(w, ir.Ref(i)))
		for k := range 4 {
			b.Do(ir.AtomicLeaf(ir.AtomicAdd, grid, k, ir.Op(ir.Mul, ir.Ref(wi), ir.F32c(float32(k+1))), ir.Ref(c)))
		}
	})
	return b.Kernel()
}

// RecordStats ("recstats", p []Particle, s []Stats): for every i,
// atomically s[0].N += 1, s[0].Sum += p[i].Mass and s[0].Max =
// max(s[0].Max, p[i].ID): reductions on the leaves of one record, which
// combine per block. So s[0].N grows by len(p), Sum by the masses' sum
// and Max is the largest of its old value and the IDs.
func RecordStats() *ir.Kernel {
	b := ir.NewBuilder("recstats")
	p := b.Records("p", ParticleRecord(), 1)
	s := b.Records("s", StatsRecord(), 1)
	b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) {
		zero := ir.I64c(0)
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, s, 0, ir.I64c(1), zero))
		b.Do(ir.AtomicLeaf(ir.AtomicAdd, s, 1, ir.LdLeaf(p, 2, ir.Ref(i)), zero))
		b.Do(ir.AtomicLeaf(ir.AtomicMax, s, 2, ir.LdLeaf(p, 3, ir.Ref(i)), zero))
	})
	return b.Kernel()
}

// RecordGrid ("recgrid", in, out [][]Node, of one shape n×m): for i < n,
// j < m-1, out[i][j].M = in[i][j].V[0] + in[i][j].V[1] + in[i][j+1].V[0]
// and out[i][j].V[0] = in[i][j].M; out's last column and its V[1] leaves
// stay as they were. A 2-D loop over a record array, whose leaves of one
// element and of its neighbour are distinct values.
func RecordGrid() *ir.Kernel {
	b := ir.NewBuilder("recgrid")
	in := b.Records("in", NodeRecord(), 2)
	out := b.Records("out", NodeRecord(), 2)
	b.Parallel2(ir.LenOf(in, 0), ir.Op(ir.Sub, ir.LenOf(in, 1), ir.I64c(1)), func(i, j *ir.Var) {
		at := []ir.Expr{ir.Ref(i), ir.Ref(j)}
		right := []ir.Expr{ir.Ref(i), ir.Op(ir.Add, ir.Ref(j), ir.I64c(1))}
		sum := ir.Op(ir.Add, ir.Op(ir.Add, ir.LdLeaf(in, 0, at...), ir.LdLeaf(in, 1, at...)), ir.LdLeaf(in, 0, right...))
		b.StoreLeaf(out, 2, sum, at...)
		b.StoreLeaf(out, 0, ir.LdLeaf(in, 2, at...), at...)
	})
	return b.Kernel()
}

// SmallInts ("smallints", a8 []int8, b16 []int16, c8 []uint8, d16
// []uint16, f []float32, s8 int8, u16 uint16, out []int32, all arrays of
// one length): first t := int8(2*int32(s8)), a local the parallel loop
// reads from the launch's temporaries; then for every i, with x :=
// int32(a8[i]) + int32(t):
//
//	a8[i] = int8(x)
//	b16[i] = int16(f[i])              // through int32, as Go converts
//	c8[i] = uint8(x) if x >= 0, else c8[i] unchanged
//	d16[i] = uint16(3*int32(d16[i]) + int32(u16))
//	out[i] = int32(b16[i]) + int32(d16[i])
func SmallInts() *ir.Kernel {
	b := ir.NewBuilder("smallints")
	a8, b16 := b.Array("a8", ir.I8, 1), b.Array("b16", ir.I16, 1)
	c8, d16 := b.Array("c8", ir.U8, 1), b.Array("d16", ir.U16, 1)
	f := b.Array("f", ir.F32, 1)
	s8, u16 := b.Scalar("s8", ir.I8), b.Scalar("u16", ir.U16)
	out := b.Array("out", ir.I32, 1)
	t := b.Decl("t", ir.Conv(ir.I8, ir.Op(ir.Mul, ir.Conv(ir.I32, ir.P(s8)), ir.I32c(2))))
	b.Parallel(ir.LenOf(a8, 0), func(i *ir.Var) {
		at := ir.Ref(i)
		x := b.Decl("x", ir.Op(ir.Add, ir.Conv(ir.I32, ir.Ld(a8, at)), ir.Conv(ir.I32, ir.Ref(t))))
		b.Store(a8, ir.Conv(ir.I8, ir.Ref(x)), at)
		b.Store(b16, ir.Conv(ir.I16, ir.Ld(f, at)), at)
		b.Store(c8, ir.Sel(ir.Op(ir.Ge, ir.Ref(x), ir.I32c(0)), ir.Conv(ir.U8, ir.Ref(x)), ir.Ld(c8, at)), at)
		d := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Conv(ir.I32, ir.Ld(d16, at)), ir.I32c(3)), ir.Conv(ir.I32, ir.P(u16)))
		b.Store(d16, ir.Conv(ir.U16, d), at)
		b.Store(out, ir.Op(ir.Add, ir.Conv(ir.I32, ir.Ld(b16, at)), ir.Conv(ir.I32, ir.Ld(d16, at))), at)
	})
	return b.Kernel()
}

// Bitcasts ("bitcast", x []float32, u []uint32, y []float32, d []float64,
// k []int64, all of one length): for every i, u[i] = math.Float32bits(x[i]),
// y[i] = math.Float32frombits(u[i] ^ 1<<31) (x[i] with its sign flipped,
// NaNs and zeros too), k[i] = int64(math.Float64bits(d[i])), then d[i] =
// math.Float64frombits(math.Float64bits(d[i]) &^ (1<<63)) (|d[i]|, by the
// bits).
func Bitcasts() *ir.Kernel {
	b := ir.NewBuilder("bitcast")
	x, u, y := b.Array("x", ir.F32, 1), b.Array("u", ir.U32, 1), b.Array("y", ir.F32, 1)
	d, k := b.Array("d", ir.F64, 1), b.Array("k", ir.I64, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		at := ir.Ref(i)
		b.Store(u, ir.Bits(ir.U32, ir.Ld(x, at)), at)
		b.Store(y, ir.Bits(ir.F32, ir.Op(ir.Xor, ir.Ld(u, at), ir.U32c(1<<31))), at)
		b.Store(k, ir.Bits(ir.I64, ir.Ld(d, at)), at)
		b.Store(d, ir.Bits(ir.F64, ir.Op(ir.AndNot, ir.Bits(ir.U64, ir.Ld(d, at)), ir.U64c(1<<63))), at)
	})
	return b.Kernel()
}

// Fill4 ("fill4", x [][][][]float32): x[i][j][k][l] = float32 of the
// element's row-major position, ((i·n1 + j)·n2 + k)·n3 + l: a 3-D
// parallel loop over the first three dimensions, each iteration a serial
// loop over the fourth (len(x, 3)). So x's flat element e holds e.
func Fill4() *ir.Kernel {
	b := ir.NewBuilder("fill4")
	x := b.Array("x", ir.F32, 4)
	b.ParallelN([]ir.Expr{ir.LenOf(x, 0), ir.LenOf(x, 1), ir.LenOf(x, 2)}, func(v []*ir.Var) {
		row := ir.Op(ir.Add, ir.Op(ir.Mul, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(v[0]), ir.LenOf(x, 1)), ir.Ref(v[1])), ir.LenOf(x, 2)), ir.Ref(v[2]))
		base := b.Decl("base", ir.Op(ir.Mul, row, ir.LenOf(x, 3)))
		b.ForRange("l", ir.LenOf(x, 3), func(l *ir.Var) {
			b.Store(x, ir.Conv(ir.F32, ir.Op(ir.Add, ir.Ref(base), ir.Ref(l))), ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2]), ir.Ref(l))
		})
	})
	return b.Kernel()
}
