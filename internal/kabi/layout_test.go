package kabi

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// layoutOf lowers k and lays it out, failing the test on any error.
func layoutOf(t *testing.T, k *ir.Kernel) *Module {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	m, err := Layout(plan)
	if err != nil {
		t.Fatalf("layout %s: %v", k.Name, err)
	}
	return m
}

func TestHostTotal(t *testing.T) {
	b := ir.NewBuilder("totals")
	n := b.Scalar("n", ir.I32)
	f := b.Scalar("f", ir.F32)
	a := b.Array("a", ir.I32, 2)
	store := func() { b.Store(a, ir.I32c(0), ir.I64c(0), ir.I64c(0)) }
	// 0: n*2 by len(a[0])
	b.Parallel2(ir.Op(ir.Mul, ir.P(n), ir.I32c(2)), ir.LenOf(a, 1), func(i, j *ir.Var) { store() })
	// 1: int64(f * 1.5) (saturating conversion), by a constant
	b.Parallel2(ir.Conv(ir.I64, ir.Op(ir.Mul, ir.P(f), ir.F32c(1.5))), ir.I64c(3), func(i, j *ir.Var) { store() })
	// 2: 100 / n (n = 0: unknown on the device)
	b.Parallel(ir.Op(ir.Div, ir.I32c(100), ir.P(n)), func(i *ir.Var) { store() })
	// 3: reads an array element: no host total
	b.Parallel(ir.Ld(a, ir.I64c(0), ir.I64c(0)), func(i *ir.Var) { store() })
	// 4: uint64 max: negative as int64, runs nothing
	b.Parallel(ir.U64c(math.MaxUint64), func(i *ir.Var) { store() })
	// 5: three extents whose product overflows
	b.ParallelN([]ir.Expr{ir.I64c(1 << 40), ir.I64c(1 << 40), ir.P(n)}, func([]*ir.Var) { store() })
	// 6: shifts and min with Go semantics: (1 << 40 >> 38) min n
	b.Parallel(ir.Op(ir.Min, ir.Op(ir.Shr, ir.Op(ir.Shl, ir.I64c(1), ir.I64c(40)), ir.U32c(38)), ir.Conv(ir.I64, ir.P(n))), func(i *ir.Var) { store() })
	m := layoutOf(t, b.Kernel())

	scal := func(n int32, f float32) []uint64 {
		return []uint64{uint64(int64(n)), uint64(math.Float32bits(f)), 0}
	}
	shapes := [][4]int{{}, {}, {4, 5}}
	for _, c := range []struct {
		task    int
		scalars []uint64
		want    int64
	}{
		{0, scal(3, 0), 30},
		{0, scal(-3, 0), 0},
		{1, scal(0, 10), 45},
		{1, scal(0, float32(math.NaN())), 0},
		{1, scal(0, float32(math.Inf(1))), math.MaxInt64}, // saturates, ×3 saturates
		{2, scal(7, 0), 14},
		{2, scal(0, 0), math.MaxInt64},
		{4, scal(0, 0), 0},
		{5, scal(2, 0), math.MaxInt64},
		{6, scal(100, 0), 4},
		{6, scal(2, 0), 2},
	} {
		h := m.Tasks[c.task].HostTotal
		if h == nil {
			t.Errorf("task %d has no HostTotal", c.task)
			continue
		}
		if got := h(c.scalars, shapes); got != c.want {
			t.Errorf("task %d HostTotal(%v) = %d, want %d", c.task, c.scalars, got, c.want)
		}
	}
	if m.Tasks[3].HostTotal != nil {
		t.Error("task 3 reads memory but has a HostTotal")
	}
	for i, want := range []bool{true, false, false, false, false, false, false} {
		if got := m.Tasks[i].TotalShapes; got != want {
			t.Errorf("task %d: TotalShapes %v, want %v", i, got, want)
		}
	}
}

// Extents of 4-D arrays and of 8- and 16-bit scalars: the fourth extent
// counts, and a small scalar is its value whatever bits lie above it.
func TestHostTotalValues(t *testing.T) {
	b := ir.NewBuilder("values")
	a := b.Array("a", ir.F32, 4)
	s8 := b.Scalar("s8", ir.I8)
	u16 := b.Scalar("u16", ir.U16)
	b.Parallel(ir.LenOf(a, 3), func(i *ir.Var) { b.Store(a, ir.F32c(0), ir.Ref(i), ir.I64c(0), ir.I64c(0), ir.I64c(0)) })
	b.Parallel(ir.Op(ir.Add, ir.Conv(ir.I64, ir.P(s8)), ir.I64c(2)), func(i *ir.Var) {})
	b.Parallel2(ir.Conv(ir.I64, ir.P(u16)), ir.LenOf(a, 3), func(i, j *ir.Var) {})
	m := layoutOf(t, b.Kernel())
	shapes := [][4]int{{2, 3, 4, 5}}
	for _, c := range []struct {
		task    int
		scalars []uint64
		want    int64
	}{
		{0, []uint64{0, 0, 0}, 5},
		{1, []uint64{0, uint64(math.MaxUint64), 0}, 1}, // int8(-1) + 2
		{1, []uint64{0, 0xFF, 0}, 1},                   // the same int8 zero-extended
		{1, []uint64{0, 0x17F, 0}, 129},                // 127 under stray bits
		{2, []uint64{0, 0, 0x1_0003}, 15},              // uint16(3) × 5
	} {
		if got := m.Tasks[c.task].HostTotal(c.scalars, shapes); got != c.want {
			t.Errorf("task %d HostTotal(%#x) = %d, want %d", c.task, c.scalars, got, c.want)
		}
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{"saxpy": "saxpy", "café": "caf_xe9_", "a1_b": "a1_b", "": "kernel"} {
		if got := Identifier(in); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLayoutSlots(t *testing.T) {
	b := ir.NewBuilder("slots")
	n := b.Scalar("n", ir.I32)
	unused := b.Scalar("unused", ir.F64)
	_ = unused
	m2 := b.Array("m", ir.F32, 2)
	c3 := b.Array("c", ir.I64, 3)
	flag := b.Scalar("flag", ir.Bool)
	acc := b.Decl("acc", ir.I64c(0)) // read by the parallel task: a temporary
	b.Parallel2(ir.LenOf(m2, 0), ir.P(n), func(i, j *ir.Var) {
		b.Store(m2, ir.Sel(ir.P(flag), ir.F32c(1), ir.F32c(0)), ir.Ref(i), ir.Ref(j))
	})
	b.Parallel(ir.LenOf(c3, 2), func(i *ir.Var) {
		b.Store(c3, ir.Ref(acc), ir.I64c(0), ir.I64c(0), ir.Ref(i))
	})
	m := layoutOf(t, b.Kernel())
	if len(m.Tasks) != 3 || m.NumParams != 5 || m.NumTemps != 1 || m.Name != "slots" {
		t.Fatalf("layout %+v", m)
	}
	want := [][]Slot{
		{{Kind: TempsSlot, Size: 8}}, // the serial task declaring acc
		{
			{Kind: ScalarSlot, Param: 0, Size: 4},
			{Kind: ArraySlot, Param: 2, Size: 8},
			{Kind: DimSlot, Param: 2, Dim: 0, Size: 8}, // len(m)
			{Kind: DimSlot, Param: 2, Dim: 1, Size: 8}, // row-major offset
			{Kind: ScalarSlot, Param: 4, Size: 4},      // bool as 4 bytes
		},
		{
			{Kind: ArraySlot, Param: 3, Size: 8},
			{Kind: DimSlot, Param: 3, Dim: 1, Size: 8},
			{Kind: DimSlot, Param: 3, Dim: 2, Size: 8},
			{Kind: TempsSlot, Size: 8},
		},
	}
	for i, w := range want {
		tk := m.Tasks[i]
		if !reflect.DeepEqual(tk.Slots, w) {
			t.Errorf("task %d slots %+v\nwant %+v", i, tk.Slots, w)
		}
		if tk.Entry != fmt.Sprintf("slots_t%d", i) || tk.Index != i {
			t.Errorf("task %d entry %q index %d", i, tk.Entry, tk.Index)
		}
	}
	if m.Tasks[0].BlockDim != 1 || m.Tasks[0].HostTotal != nil || m.Tasks[1].BlockDim != DefaultBlockDim {
		t.Errorf("block sizes %d, %d; serial HostTotal %v", m.Tasks[0].BlockDim, m.Tasks[1].BlockDim, m.Tasks[0].HostTotal != nil)
	}
}

func TestLayoutBlockDim(t *testing.T) {
	for _, c := range []struct {
		dim  int
		fail bool
	}{{0, false}, {1, false}, {MaxBlockDim, false}, {MaxBlockDim + 1, true}, {-1, true}} {
		b := ir.NewBuilder("bd")
		x := b.Array("x", ir.I32, 1)
		pf := b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.I32c(1), ir.Ref(i)) })
		pf.BlockDim = c.dim
		plan := &lower.Plan{Kernel: b.Kernel(), Tasks: []*lower.Task{{Kind: lower.Parallel, Loop: pf}}}
		_, err := Layout(plan)
		if (err != nil) != c.fail {
			t.Errorf("block %d: err %v, want failure %v", c.dim, err, c.fail)
		}
	}
}

// TestLeafTotalMatches checks the fast form of HostTotal (extents that are
// constants, scalar parameters or array extents) against the general
// evaluation, over values at the edges: negative, zero, 32-bit wrap,
// products that overflow, a missing parameter.
func TestLeafTotalMatches(t *testing.T) {
	b := ir.NewBuilder("leaves")
	n32 := b.Scalar("n32", ir.I32)
	u32 := b.Scalar("u32", ir.U32)
	n64 := b.Scalar("n64", ir.I64)
	u64 := b.Scalar("u64", ir.U64)
	a := b.Array("a", ir.F32, 3)
	extents := [][]ir.Expr{
		{ir.LenOf(a, 0)},
		{ir.LenOf(a, 2), ir.LenOf(a, 1), ir.LenOf(a, 0)},
		{ir.P(n32)},
		{ir.P(u32), ir.P(n64)},
		{ir.P(u64), ir.I64c(7)},
		{ir.I64c(1 << 40), ir.I64c(1 << 40), ir.P(n32)},
		{ir.I32c(-3)},
		{ir.U64c(math.MaxUint64)},
	}
	values := []uint64{0, 1, 5, 1 << 31, 1<<32 + 3, math.MaxUint32, math.MaxUint64, 1 << 62}
	for i, ext := range extents {
		fast := leafTotal(ext)
		if fast == nil {
			t.Fatalf("extents %d: no fast form", i)
		}
		general := func(scalars []uint64, shapes [][4]int) int64 {
			h := hostEval{scalars: scalars, shapes: shapes}
			total := int64(1)
			for _, e := range ext {
				v := int64(h.eval(e))
				if h.unknown {
					return math.MaxInt64
				}
				if v <= 0 {
					return 0
				}
				if total > math.MaxInt64/v {
					total = math.MaxInt64
				} else {
					total *= v
				}
			}
			return total
		}
		for _, v := range values {
			for _, w := range values {
				scalars := []uint64{v, w, v ^ w, w}
				shapes := [][4]int{{}, {}, {}, {}, {int(v & 0xffff), int(w & 0xff), int(int64(v))}}
				if got, want := fast(scalars, shapes), general(scalars, shapes); got != want {
					t.Errorf("extents %d, values %#x %#x: fast %d, general %d", i, v, w, got, want)
				}
			}
		}
		if got := fast(nil, nil); got != general(nil, nil) {
			t.Errorf("extents %d, no inputs: fast %d, general %d", i, got, general(nil, nil))
		}
	}
	if leafTotal([]ir.Expr{ir.Op(ir.Add, ir.P(n32), ir.I32c(1))}) != nil {
		t.Error("an expression got a fast form")
	}
}
