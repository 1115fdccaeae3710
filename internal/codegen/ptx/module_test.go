package ptx

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
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
		{61, 9000, "6.0"}, // shfl.sync needs ISA 6.0
		{75, 10000, "6.3"},
		{50, 13000, ""},     // below sm_60
		{90, 8000, ""},      // driver too old
		{140, 13010, "9.1"}, // unknown future GPU: the newest ISA the driver has
		{999, 13010, "9.1"},
		{-5, 13010, ""},         // not a compute capability: "0.-5" it said
		{1000, 13010, ""},       // a three-digit major version
		{9999999999, 13010, ""}, // was written as .target sm_9999999999
	} {
		got, err := TargetFor(c.sm, c.driver)
		if c.want == "" {
			if err == nil {
				t.Errorf("TargetFor(%d, %d) = %+v, want an error", c.sm, c.driver, got)
			}
			continue
		}
		if err != nil || got.SM != c.sm || got.Version != c.want || got.MaxVersion != isaString(driverISA(c.driver)) {
			t.Errorf("TargetFor(%d, %d) = %+v, %v; want version %s", c.sm, c.driver, got, err, c.want)
		}
	}
}

// TargetFor's messages read as compute capabilities, or say that the
// number is none.
func TestTargetForMessages(t *testing.T) {
	for sm, want := range map[int]string{
		-5:   "ptx: -5 is not a compute capability ×10 (sm_90 is 90)",
		5000: "ptx: 5000 is not a compute capability ×10",
		52:   "ptx: compute capability 5.2 is older than 6.0, the oldest qd supports",
	} {
		if _, err := TargetFor(sm, 13010); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("TargetFor(%d): %v, want %q", sm, err, want)
		}
	}
	if sms := SMs(); len(sms) == 0 || sms[0] != minSM || !slices.IsSorted(sms) {
		t.Errorf("SMs() = %v, want the table's, sorted from sm_%d", sms, minSM)
	}
}

func TestBadTarget(t *testing.T) {
	plan := mustLower(t, saxpy())
	for _, tg := range []Target{{SM: 90, Version: "7"}, {SM: 90, Version: "x.y"}, {SM: 50, Version: "7.0"}} {
		if _, err := compilePlan(plan, tg); err == nil {
			t.Errorf("Compile with %+v succeeded", tg)
		}
	}
}

func TestSaxpyMetadata(t *testing.T) {
	m := compileKernel(t, saxpy())
	tk := m.Tasks[0]
	want := []kabi.Slot{
		{Kind: kabi.ScalarSlot, Param: 0, Size: 4},
		{Kind: kabi.ArraySlot, Param: 1, Size: 8},
		{Kind: kabi.DimSlot, Param: 1, Dim: 0, Size: 8},
		{Kind: kabi.ArraySlot, Param: 2, Size: 8},
	}
	if !reflect.DeepEqual(tk.Slots, want) {
		t.Errorf("Params = %+v\nwant %+v", tk.Slots, want)
	}
	if tk.Entry != "saxpy_t0" || tk.BlockDim != kabi.DefaultBlockDim || tk.Group != 0 || m.NumTemps != 0 {
		t.Errorf("task info %+v, NumTemps %d", tk, m.NumTemps)
	}
	if tk.HostTotal == nil {
		t.Fatal("no HostTotal")
	}
	if got := tk.HostTotal([]uint64{0, 0, 0}, [][4]int{{}, {1000}, {1000}}); got != 1000 {
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
	for i, s := range m.Tasks[0].Slots[:len(types)] {
		if s.Kind != kabi.ScalarSlot || s.Param != i || s.Size != wantSize[i] {
			t.Errorf("slot %d = %+v, want scalar of param %d, %d bytes", i, s, i, wantSize[i])
		}
	}
	asm(t, m.PTX, `\.param \.u32 s0`, `\.param \.s32 s1`, `\.param \.s64 s2`, `\.param \.u32 s3`,
		`\.param \.u64 s4`, `\.param \.f32 s5`, `\.param \.f64 s6`, `\.maxntid 1, 1, 1`, `mov\.u32 %r\d+, %tid\.x`)
}
