package csrc

import (
	"math"
	"math/bits"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// The block kernels run on the host (blocks_host_test.go) and give what
// Go gives: the suite's and blockCorpus's, at block sizes of one lane,
// less than a warp, whole warps and partial last warps, up to 1024
// threads, in the 32-lane flavour (sm_70: no redux.sync) and the 64-lane
// one (gfx90a). Float inputs are small integers, so that every order of
// summing gives the same bits; one block of -0s checks that sums start
// at +0, as Go's do.
func TestBlocksOnHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs thousands of host threads")
	}
	for _, arch := range []string{"sm_70", "gfx90a"} {
		t.Run(arch, func(t *testing.T) { runHostCases(t, arch, hostCases()) })
	}
}

func hostCases() []*hostCase {
	var cs []*hostCase
	for _, bs := range []int{1, 5, 32, 33, 64, 65, 100, 1000} {
		cs = append(cs, collectivesCase(suitekernels.BlockCollectives(ir.I32), ir.I32, bs, true))
	}
	for _, et := range []ir.Type{ir.F32, ir.F64, ir.I64, ir.U32} {
		for _, bs := range []int{1, 33, 100} {
			cs = append(cs, collectivesCase(suitekernels.BlockCollectives(et), et, bs, true))
		}
	}
	for _, size := range []int{1, 7, 32, 64, 100, 256, 1024} {
		cs = append(cs, collectivesCase(constCollectives(size, ir.I32), ir.I32, size, false))
	}
	for _, c := range []struct {
		size int
		t    ir.Type
	}{{100, ir.F32}, {100, ir.F64}, {100, ir.I64}, {100, ir.U64}, {100, ir.I8}, {100, ir.U16}, {16, ir.F64}, {1, ir.U64}, {65, ir.U32}} {
		cs = append(cs, collectivesCase(constCollectives(c.size, c.t), c.t, c.size, false))
	}
	return append(cs, treeSumCase(), transposeCase(), histogramCase(), recordsCase(), sharedAtomicsCase(),
		halvingsCase(), blockTempsCase(), sharedBoundsCase(), alignedSharedCase())
}

// lcg is a small deterministic generator of test values in [lo, hi].
type lcg uint64

func (g *lcg) in(lo, hi int64) int64 {
	*g = *g*6364136223846793005 + 1442695040888963407
	return lo + int64(uint64(*g)>>33)%(hi-lo+1)
}

// tval is the bits of the integer v as a value of type t.
func tval(t ir.Type, v int64) uint64 {
	switch t {
	case ir.F32:
		return uint64(math.Float32bits(float32(v)))
	case ir.F64:
		return math.Float64bits(float64(v))
	}
	return uint64(v) & tmask(t)
}

func tmask(t ir.Type) uint64 {
	if t.Size() == 8 {
		return math.MaxUint64
	}
	return 1<<(8*t.Size()) - 1
}

// tsigned is the value of the bits a of a signed t, extended.
func tsigned(t ir.Type, a uint64) int64 {
	sh := 64 - 8*t.Size()
	return int64(a<<sh) >> sh
}

// top applies op to the bits a and b of t values, as Go does.
func top(t ir.Type, op ir.BinOp, a, b uint64) uint64 {
	switch t {
	case ir.F32:
		x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		return uint64(math.Float32bits(map[ir.BinOp]float32{ir.Add: x + y, ir.Min: min(x, y), ir.Max: max(x, y)}[op]))
	case ir.F64:
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		return math.Float64bits(map[ir.BinOp]float64{ir.Add: x + y, ir.Min: min(x, y), ir.Max: max(x, y)}[op])
	}
	less := a < b
	if t.IsSigned() {
		less = tsigned(t, a) < tsigned(t, b)
	}
	switch op {
	case ir.Add:
		return (a + b) & tmask(t)
	case ir.Min:
		if less {
			return a
		}
		return b
	}
	if less {
		return b
	}
	return a
}

func filled(n int, v uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// want compares an array with what Go gives.
func want(t *testing.T, name string, got, exp []uint64) {
	t.Helper()
	bad := 0
	for i := range exp {
		if i >= len(got) || got[i] != exp[i] {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %#x, want %#x", name, i, at(got, i), exp[i])
			}
		}
	}
}

func at(s []uint64, i int) uint64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// collectivesCase runs a kernel shaped as suitekernels.BlockCollectives
// (a dynamic size bs when dynamic, else its constant size) over two and a
// half blocks of values, on a grid of 2.
func collectivesCase(k *ir.Kernel, et ir.Type, bs int, dynamic bool) *hostCase {
	n := 2*bs + bs/2 + 1
	blocks := (n + bs - 1) / bs
	g := lcg(bs*31 + int(et))
	x := make([]uint64, n)
	for i := range x {
		lo, hi := int64(-60), int64(60)
		if et.IsUnsigned() {
			lo = 0
		}
		x[i] = tval(et, g.in(lo, hi))
		if et.IsFloat() && i/bs == 1 {
			x[i] = tval(et, 0) | 1<<(8*et.Size()-1) // a block of -0s
		}
	}
	c := &hostCase{k: k, grid: 2, shapes: map[string][]int{}, arrays: map[string][]uint64{"x": x}, scalars: map[string]uint64{}}
	if dynamic {
		c.scalars["bs"] = uint64(bs)
	}
	sums, mins, maxs := make([]uint64, blocks), make([]uint64, blocks), make([]uint64, blocks)
	ex, in := make([]uint64, n), make([]uint64, n)
	for b := range blocks {
		sum, lo, hi := tval(et, 0), uint64(0), uint64(0)
		for t := range bs {
			i := b*bs + t
			v, w := tval(et, 0), x[0]
			if i < n {
				v, w = x[i], x[i]
			}
			if i < n {
				ex[i] = sum
			}
			sum = top(et, ir.Add, sum, v)
			if i < n {
				in[i] = sum
			}
			if t == 0 {
				lo, hi = w, w
			}
			lo, hi = top(et, ir.Min, lo, w), top(et, ir.Max, hi, w)
		}
		sums[b], mins[b], maxs[b] = sum, lo, hi
	}
	exp := map[string][]uint64{"sums": sums, "mins": mins, "maxs": maxs, "ex": ex, "in": in}
	for name, e := range exp {
		c.arrays[name] = filled(len(e), 0x5A)
	}
	for name, a := range c.arrays {
		c.shapes[name] = []int{len(a)}
	}
	c.check = func(t *testing.T, got map[string][]uint64, _ []uint64, _ *kabi.Module) {
		for name, e := range exp {
			want(t, name, got[name], e)
		}
	}
	return c
}

// oneArray is a case whose arrays are 1-D.
func oneArray(k *ir.Kernel, grid int, arrays map[string][]uint64, scalars map[string]uint64, check func(t *testing.T, got map[string][]uint64)) *hostCase {
	c := &hostCase{k: k, grid: grid, arrays: arrays, scalars: scalars, shapes: map[string][]int{}}
	for name, a := range arrays {
		c.shapes[name] = []int{len(a)}
	}
	c.check = func(t *testing.T, got map[string][]uint64, _ []uint64, _ *kabi.Module) { check(t, got) }
	return c
}

func treeSumCase() *hostCase {
	g := lcg(7)
	x := make([]uint64, 300)
	exp := make([]uint64, 3)
	for i := range x {
		v := g.in(-1000, 1000)
		x[i] = tval(ir.I32, v)
		exp[i/128] = top(ir.I32, ir.Add, exp[i/128], x[i])
	}
	return oneArray(suitekernels.BlockTreeSum(), 2, map[string][]uint64{"x": x, "out": filled(3, 0x5A)}, nil,
		func(t *testing.T, got map[string][]uint64) { want(t, "out", got["out"], exp) })
}

func transposeCase() *hostCase {
	const rows, cols = 13, 20
	in, exp := make([]uint64, rows*cols), make([]uint64, rows*cols)
	for i := range rows {
		for j := range cols {
			in[i*cols+j] = tval(ir.F32, int64(i*100+j))
			exp[j*rows+i] = in[i*cols+j]
		}
	}
	c := &hostCase{k: suitekernels.BlockTranspose(), grid: 3, arrays: map[string][]uint64{"in": in, "out": filled(rows*cols, 0x5A)},
		shapes: map[string][]int{"in": {rows, cols}, "out": {cols, rows}}}
	c.check = func(t *testing.T, got map[string][]uint64, _ []uint64, _ *kabi.Module) {
		want(t, "out", got["out"], exp)
	}
	return c
}

// histogramCase has more qd blocks (nb) than the grid, so a GPU block
// runs two: its bins must start at zero again.
func histogramCase() *hostCase {
	g := lcg(3)
	x := make([]uint64, 1000)
	exp := make([]uint64, 16)
	for i := range x {
		v := g.in(0, 15)
		x[i] = uint64(v)
		exp[v]++
	}
	return oneArray(suitekernels.BlockHistogram(), 2, map[string][]uint64{"x": x, "hist": make([]uint64, 16)}, map[string]uint64{"nb": 3},
		func(t *testing.T, got map[string][]uint64) { want(t, "hist", got["hist"], exp) })
}

func recordsCase() *hostCase {
	exp := make([]uint64, 96)
	for i := range exp {
		exp[i] = tval(ir.F32, int64(i/32*100+31-i%32))
	}
	return oneArray(suitekernels.BlockRecords(), 2, map[string][]uint64{"out": filled(96, 0x5A)}, nil,
		func(t *testing.T, got map[string][]uint64) { want(t, "out", got["out"], exp) })
}

// sharedAtomicsCase checks the elements whose result does not depend on
// the order of the threads; an exchange or a compare-and-swap leaves one
// thread's value, 1 to 64.
func sharedAtomicsCase() *hostCase {
	const blocks = 2
	arrays := map[string][]uint64{}
	for _, et := range sharedAtomicTypes {
		arrays["out_"+et.String()] = filled(blocks*nAtomicOps, 0x5A)
		arrays["tot_"+et.String()] = make([]uint64, blocks)
	}
	return oneArray(sharedAtomics(), 1, arrays, nil, func(t *testing.T, got map[string][]uint64) {
		for _, et := range sharedAtomicTypes {
			acc := map[ir.AtomicOp]uint64{ir.AtomicAdd: tval(et, 0), ir.AtomicSub: tval(et, 0), ir.AtomicMin: tval(et, 0), ir.AtomicMax: tval(et, 0)}
			for th := int64(1); th <= 64; th++ {
				v := tval(et, th)
				acc[ir.AtomicAdd] = top(et, ir.Add, acc[ir.AtomicAdd], v)
				acc[ir.AtomicSub] = top(et, ir.Add, acc[ir.AtomicSub], tval(et, -th))
				acc[ir.AtomicMin] = top(et, ir.Min, acc[ir.AtomicMin], v)
				acc[ir.AtomicMax] = top(et, ir.Max, acc[ir.AtomicMax], v)
				acc[ir.AtomicAnd] &= v // stays 0
				acc[ir.AtomicOr] |= v
				acc[ir.AtomicXor] ^= v
			}
			name := "out_" + et.String()
			for b := range blocks {
				for k, op := range sharedAtomicOps(et) {
					g := got[name][b*nAtomicOps+k]
					if op == ir.AtomicExchange || op == ir.AtomicCAS {
						ok := false
						for th := int64(1); th <= 64; th++ {
							ok = ok || g == tval(et, th)
						}
						if !ok {
							t.Errorf("%s[%d] (%v) = %#x, no thread's value", name, b*nAtomicOps+k, op, g)
						}
					} else if g != acc[op] {
						t.Errorf("%s[%d] (%v) = %#x, want %#x", name, b*nAtomicOps+k, op, g, acc[op])
					}
				}
			}
		}
	})
}

func halvingsCase() *hostCase {
	g := lcg(11)
	x := make([]uint64, 250)
	exp := make([]uint64, 3)
	for i := range x {
		v := g.in(0, 1000)
		if i/100 == 1 {
			v = 0 // a block with nothing to halve
		}
		x[i] = uint64(v)
		exp[i/100] = max(exp[i/100], uint64(bits.Len64(uint64(v))))
	}
	return oneArray(halvings(), 2, map[string][]uint64{"x": x, "steps": filled(3, 0x5A)}, nil,
		func(t *testing.T, got map[string][]uint64) { want(t, "steps", got["steps"], exp) })
}

func blockTempsCase() *hostCase {
	out := make([]uint64, 12)
	out[0] = 5
	exp := make([]uint64, 12)
	for i := range exp {
		exp[i] = uint64(7*(i%4) + i/4)
	}
	exp[0]++
	return oneArray(blockTemps(), 2, map[string][]uint64{"out": out}, map[string]uint64{"bs": 4},
		func(t *testing.T, got map[string][]uint64) { want(t, "out", got["out"], exp) })
}

func sharedBoundsCase() *hostCase {
	exp := make([]uint64, 64)
	for i := range exp {
		exp[i] = uint64(i % 32)
	}
	c := &hostCase{k: sharedBounds(), grid: 1, debug: true, arrays: map[string][]uint64{"out": filled(64, 0x5A)}, shapes: map[string][]int{"out": {64}}}
	c.check = func(t *testing.T, got map[string][]uint64, rec []uint64, layout *kabi.Module) {
		want(t, "out", got["out"], exp)
		site := int(rec[0]) - 1
		if site < 0 || site >= len(layout.Sites) || layout.Sites[site].Array != "sh" || rec[1] != 32 || rec[2] != 32 || rec[3] != 0 {
			t.Errorf("violation record %v (sites %+v), want sh's site, index 32, extent 32, dimension 0", rec, layout.Sites)
		}
	}
	return c
}

func alignedSharedCase() *hostCase {
	exp := make([]uint64, 64)
	for i := range exp {
		t, l := i%32/4, i%4
		exp[i] = tval(ir.F32, int64(7-t+l))
	}
	return oneArray(alignedShared(), 1, map[string][]uint64{"out": filled(64, 0x5A)}, nil,
		func(t *testing.T, got map[string][]uint64) { want(t, "out", got["out"], exp) })
}
