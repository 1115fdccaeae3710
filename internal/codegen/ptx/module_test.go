package ptx

import (
	"math"
	"reflect"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

func TestTargetFor(t *testing.T) {
	for _, c := range []struct {
		sm, driver int
		want       string // "" for an error
	}{
		{90, 13000, "7.8"},
		{70, 13000, "6.0"},
		{80, 11080, "7.0"},
		{89, 11080, "7.8"},
		{90, 11070, ""}, // sm_90 needs 7.8, CUDA 11.7 takes 7.7
		{86, 11010, "7.1"},
		{120, 12080, "8.7"},
		{120, 12070, ""},
		{100, 12080, "8.6"},
		{103, 12090, "8.8"},
		{61, 9000, "5.0"},
		{75, 10000, "6.3"},
		{50, 13000, ""},     // below sm_60
		{90, 8000, ""},      // driver too old
		{140, 13010, "9.1"}, // unknown future GPU: the newest ISA the driver has
	} {
		got, err := TargetFor(c.sm, c.driver)
		if c.want == "" {
			if err == nil {
				t.Errorf("TargetFor(%d, %d) = %+v, want an error", c.sm, c.driver, got)
			}
			continue
		}
		if err != nil || got != (Target{SM: c.sm, Version: c.want}) {
			t.Errorf("TargetFor(%d, %d) = %+v, %v; want version %s", c.sm, c.driver, got, err, c.want)
		}
	}
}

func TestBadTarget(t *testing.T) {
	plan := mustLower(t, saxpy())
	for _, tg := range []Target{{SM: 90, Version: "7"}, {SM: 90, Version: "x.y"}, {SM: 50, Version: "7.0"}} {
		if _, err := Compile(plan, tg); err == nil {
			t.Errorf("Compile with %+v succeeded", tg)
		}
	}
}

func TestSaxpyMetadata(t *testing.T) {
	m := compileKernel(t, saxpy())
	tk := m.Tasks[0]
	want := []Slot{
		{Kind: ScalarSlot, Param: 0, Size: 4},
		{Kind: ArraySlot, Param: 1, Size: 8},
		{Kind: DimSlot, Param: 1, Dim: 0, Size: 8},
		{Kind: ArraySlot, Param: 2, Size: 8},
	}
	if !reflect.DeepEqual(tk.Params, want) {
		t.Errorf("Params = %+v\nwant %+v", tk.Params, want)
	}
	if tk.Entry != "saxpy_t0" || tk.BlockDim != DefaultBlockDim || tk.Group != 0 || m.NumTemps != 0 {
		t.Errorf("task info %+v, NumTemps %d", tk, m.NumTemps)
	}
	if tk.HostTotal == nil {
		t.Fatal("no HostTotal")
	}
	if got := tk.HostTotal([]uint64{0, 0, 0}, [][3]int{{}, {1000}, {1000}}); got != 1000 {
		t.Errorf("HostTotal = %d, want 1000", got)
	}
}

func TestParamSizes(t *testing.T) {
	b := ir.NewBuilder("sizes")
	types := []ir.Type{ir.Bool, ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64}
	var ps []*ir.Param
	for _, ty := range types {
		ps = append(ps, b.Scalar("s_"+ty.String(), ty))
	}
	out := b.Array("out", ir.F64, 1)
	b.ForRange("k", ir.I32c(1), func(*ir.Var) {
		for _, p := range ps[1:] {
			b.Store(out, ir.Conv(ir.F64, ir.P(p)), ir.I64c(0))
		}
		b.Store(out, ir.Sel(ir.P(ps[0]), ir.F64c(1), ir.F64c(0)), ir.I64c(0))
	})
	m := compileKernel(t, b.Kernel())
	wantSize := []int{4, 4, 8, 4, 8, 4, 8}
	for i, s := range m.Tasks[0].Params[:len(types)] {
		if s.Kind != ScalarSlot || s.Param != i || s.Size != wantSize[i] {
			t.Errorf("slot %d = %+v, want scalar of param %d, %d bytes", i, s, i, wantSize[i])
		}
	}
	asm(t, m.PTX, `\.param \.u32 s0`, `\.param \.s32 s1`, `\.param \.s64 s2`, `\.param \.u32 s3`,
		`\.param \.u64 s4`, `\.param \.f32 s5`, `\.param \.f64 s6`, `\.maxntid 1, 1, 1`, `mov\.u32 %r\d+, %tid\.x`)
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
	m := compileKernel(t, b.Kernel())

	scal := func(n int32, f float32) []uint64 {
		return []uint64{uint64(int64(n)), uint64(math.Float32bits(f)), 0}
	}
	shapes := [][3]int{{}, {}, {4, 5}}
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
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"saxpy": "saxpy", "café": "caf_xe9_", "a1_b": "a1_b", "": "kernel"} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
