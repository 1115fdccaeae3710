package cpu

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// The Go types of the suite's records (suitekernels' layouts).
type (
	particle struct {
		Pos  [2]float32
		Mass float64
		ID   int32
		Tag  uint8
	}
	cell struct {
		V [2]float32
		M float32
		N int32
	}
	stats struct {
		N   int64
		Sum float64
		Max int32
	}
	node struct {
		V [2]float32
		M float32
	}
)

// recArr wraps a slice of records as an array argument of the given shape
// (default: 1-D).
func recArr[T any](s []T, shape ...int) Array {
	a := Array{Shape: [4]int{len(s), 1, 1, 1}}
	if len(shape) > 0 {
		a.Shape = [4]int{1, 1, 1, 1}
		copy(a.Shape[:], shape)
	}
	if len(s) > 0 {
		a.Data = unsafe.Pointer(unsafe.SliceData(s))
	}
	return a
}

// suiteKernel is the suite's kernel of that name.
func suiteKernel(t *testing.T, name string) *ir.Kernel {
	t.Helper()
	for _, k := range suitekernels.All() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no suite kernel %s", name)
	return nil
}

// The records' layouts are Go's.
func TestRecordLayouts(t *testing.T) {
	for _, c := range []struct {
		rec *ir.Record
		typ reflect.Type
	}{
		{suitekernels.ParticleRecord(), reflect.TypeFor[particle]()},
		{suitekernels.CellRecord(), reflect.TypeFor[cell]()},
		{suitekernels.Vec4Record(), reflect.TypeFor[[4]float32]()},
		{suitekernels.StatsRecord(), reflect.TypeFor[stats]()},
		{suitekernels.NodeRecord(), reflect.TypeFor[node]()},
	} {
		if c.rec.Size != int(c.typ.Size()) || c.rec.Align != c.typ.Align() {
			t.Errorf("%s: size %d align %d, Go's %d, %d", c.rec.Name, c.rec.Size, c.rec.Align, c.typ.Size(), c.typ.Align())
		}
	}
	p := particle{}
	if off := []uintptr{unsafe.Offsetof(p.Pos), unsafe.Offsetof(p.Pos) + 4, unsafe.Offsetof(p.Mass), unsafe.Offsetof(p.ID), unsafe.Offsetof(p.Tag)}; true {
		for i, l := range suitekernels.ParticleRecord().Leaves {
			if uintptr(l.Offset) != off[i] {
				t.Errorf("Particle%s at %d, Go's %d", l.Path, l.Offset, off[i])
			}
		}
	}
}

func TestRecordUpdate(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "recupdate"))
	for _, ch := range chunkings {
		n := 3*Batch + 5
		ps := make([]particle, n)
		want := make([]particle, n)
		for i := range ps {
			ps[i] = particle{Pos: [2]float32{float32(i), 0.5}, Mass: float64(i) + 0.25, ID: -1, Tag: 9}
			w := ps[i]
			w.Pos[0] += w.Pos[1]
			w.Mass *= 2
			w.ID = 3 * int32(i)
			w.Tag = uint8(3 * int32(i))
			want[i] = w
		}
		if err := launch(p, &Args{Arrays: []Array{recArr(ps)}}, ch.chunk, ch.workers); err != nil {
			t.Fatal(err)
		}
		for i := range ps {
			if ps[i] != want[i] {
				t.Fatalf("chunks of %d: p[%d] = %+v, want %+v", ch.chunk, i, ps[i], want[i])
			}
		}
	}
}

func TestScatter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, cells = 5000, 37
	idx, w := make([]int32, n), make([]float32, n)
	for i := range idx {
		idx[i], w[i] = int32(r.IntN(cells)), float32(r.IntN(9)) // exact sums in any order
	}
	var sum, count [cells]float32
	for i := range idx {
		sum[idx[i]] += w[i]
		count[idx[i]]++
	}
	p2, p4 := compileKernel(t, suiteKernel(t, "scatter2")), compileKernel(t, suiteKernel(t, "scatter4"))
	for _, ch := range chunkings {
		g2 := make([]cell, cells)
		g4 := make([][4]float32, cells)
		if err := launch(p2, &Args{Arrays: []Array{recArr(g2), arr(idx), arr(w)}}, ch.chunk, ch.workers); err != nil {
			t.Fatal(err)
		}
		if err := launch(p4, &Args{Arrays: []Array{recArr(g4), arr(idx), arr(w)}}, ch.chunk, ch.workers); err != nil {
			t.Fatal(err)
		}
		for c := range cells {
			if want := (cell{V: [2]float32{sum[c], 2 * sum[c]}, M: count[c], N: int32(count[c])}); g2[c] != want {
				t.Fatalf("scatter2, chunks of %d: cell %d = %+v, want %+v", ch.chunk, c, g2[c], want)
			}
			if want := [4]float32{sum[c], 2 * sum[c], 3 * sum[c], 4 * sum[c]}; g4[c] != want {
				t.Fatalf("scatter4, chunks of %d: cell %d = %v, want %v", ch.chunk, c, g4[c], want)
			}
		}
	}
}

func TestRecordStats(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "recstats"))
	const n = 2*Batch + 77
	ps := make([]particle, n)
	for i := range ps {
		ps[i] = particle{Mass: float64(i % 13), ID: int32((i * 7919) % 1000)}
	}
	for _, ch := range chunkings {
		s := []stats{{N: 5, Sum: 0.5, Max: -3}}
		if err := launch(p, &Args{Arrays: []Array{recArr(ps), recArr(s)}}, ch.chunk, ch.workers); err != nil {
			t.Fatal(err)
		}
		want := stats{N: 5 + n, Sum: 0.5, Max: -3}
		for _, q := range ps {
			want.Sum += q.Mass
			want.Max = max(want.Max, q.ID)
		}
		if s[0] != want {
			t.Fatalf("chunks of %d: %+v, want %+v", ch.chunk, s[0], want)
		}
	}
}

func TestRecordGrid(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "recgrid"))
	for _, shape := range [][2]int{{3, 700}, {40, 5}, {1, 2}, {4, 1}} {
		n, m := shape[0], shape[1]
		in, out := make([]node, n*m), make([]node, n*m)
		for e := range in {
			in[e] = node{V: [2]float32{float32(e), float32(2 * e)}, M: float32(-e)}
			out[e] = node{V: [2]float32{7, 8}, M: 9}
		}
		if err := launch(p, &Args{Arrays: []Array{recArr(in, n, m), recArr(out, n, m)}}, 0, 1); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			for j := range m {
				e := i*m + j
				want := node{V: [2]float32{7, 8}, M: 9}
				if j < m-1 {
					want = node{V: [2]float32{in[e].M, 8}, M: in[e].V[0] + in[e].V[1] + in[e+1].V[0]}
				}
				if out[e] != want {
					t.Fatalf("%d×%d: out[%d][%d] = %+v, want %+v", n, m, i, j, out[e], want)
				}
			}
		}
	}
}

func TestSmallInts(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "smallints"))
	r := rand.New(rand.NewPCG(3, 4))
	const n = Batch + 9
	for _, s := range []struct {
		s8  int8
		u16 uint16
	}{{-3, 1}, {100, 65535}, {-128, 0}} {
		a8, b16, c8, d16 := make([]int8, n), make([]int16, n), make([]uint8, n), make([]uint16, n)
		f, out := make([]float32, n), make([]int32, n)
		for i := range n {
			a8[i], c8[i], d16[i] = int8(r.Uint32()), uint8(r.Uint32()), uint16(r.Uint32())
			f[i] = float32(r.NormFloat64() * 40000)
		}
		f[0], f[1], f[2] = float32(math.NaN()), 1e10, -200.5
		wa8, wb16, wc8, wd16, wout := make([]int8, n), make([]int16, n), make([]uint8, n), make([]uint16, n), make([]int32, n)
		tt := int8(2 * int32(s.s8))
		for i := range n {
			x := int32(a8[i]) + int32(tt)
			wa8[i] = int8(x)
			wb16[i] = int16(int32(f[i])) // gosem.FloatToInt through int32 (in int32's range, as Go)
			if f[i] != f[i] || f[i] > math.MaxInt32 {
				wb16[i] = int16(convInt32(f[i]))
			}
			wc8[i] = c8[i]
			if x >= 0 {
				wc8[i] = uint8(x)
			}
			wd16[i] = uint16(3*int32(d16[i]) + int32(s.u16))
			wout[i] = int32(wb16[i]) + int32(wd16[i])
		}
		args := &Args{
			Scalars: []uint64{0, 0, 0, 0, 0, uint64(int64(s.s8)), uint64(s.u16), 0},
			Arrays:  []Array{arr(a8), arr(b16), arr(c8), arr(d16), arr(f), {}, {}, arr(out)},
		}
		if err := launch(p, args, 7, 2); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if a8[i] != wa8[i] || b16[i] != wb16[i] || c8[i] != wc8[i] || d16[i] != wd16[i] || out[i] != wout[i] {
				t.Fatalf("s8 %d u16 %d, [%d]: %d %d %d %d %d, want %d %d %d %d %d", s.s8, s.u16, i,
					a8[i], b16[i], c8[i], d16[i], out[i], wa8[i], wb16[i], wc8[i], wd16[i], wout[i])
			}
		}
	}
}

// convInt32 is int32(x) as Go gives it on this machine out of range (the
// CPU's outcome of gosem.FloatToInt), computed where the compiler cannot
// fold it.
//
//go:noinline
func convInt32(x float32) int32 { return int32(x) }

func TestBitcasts(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "bitcast"))
	xs := []float32{1, -0.0, float32(math.Inf(-1)), math.Float32frombits(0x7FC0_0001), math.Float32frombits(1), 3.5}
	ds := []float64{2, math.Copysign(0, -1), math.Inf(-1), math.Float64frombits(0x7FF8_0000_0000_0001), -5e-324, -1.25}
	for len(xs) < Batch+3 {
		xs, ds = append(xs, float32(len(xs))), append(ds, -float64(len(ds)))
	}
	n := len(xs)
	u, y, k := make([]uint32, n), make([]float32, n), make([]int64, n)
	d := append([]float64(nil), ds...)
	if err := launch(p, &Args{Arrays: []Array{arr(xs), arr(u), arr(y), arr(d), arr(k)}}, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		bu := math.Float32bits(xs[i])
		if u[i] != bu || math.Float32bits(y[i]) != bu^1<<31 || k[i] != int64(math.Float64bits(ds[i])) || math.Float64bits(d[i]) != math.Float64bits(ds[i])&^(1<<63) {
			t.Fatalf("[%d] of %v, %v: %#x %#x %#x %#x", i, xs[i], ds[i], u[i], math.Float32bits(y[i]), k[i], math.Float64bits(d[i]))
		}
	}
}

func TestFill4(t *testing.T) {
	p := compileKernel(t, suiteKernel(t, "fill4"))
	for _, shape := range [][4]int{{2, 3, 4, 5}, {3, 1, 2, 700}, {1, 1, 1, 1}, {2, 0, 3, 4}} {
		n := shape[0] * shape[1] * shape[2] * shape[3]
		x := make([]float32, n)
		for e := range x {
			x[e] = -1
		}
		if err := launch(p, &Args{Arrays: []Array{arr(x, shape[:]...)}}, 5, 2); err != nil {
			t.Fatal(err)
		}
		for e := range x {
			if x[e] != float32(e) {
				t.Fatalf("%v: x.flat[%d] = %v", shape, e, x[e])
			}
		}
	}
}
