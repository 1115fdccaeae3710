package gpu

import (
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// moduleOf is a loaded module of the layout kabi gives k, on d.
func moduleOf(t *testing.T, d *Device, name string) (*loadedModule, *kabi.Module) {
	t.Helper()
	for _, k := range suitekernels.All() {
		if k.Name != name {
			continue
		}
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatal(err)
		}
		layout, err := kabi.Layout(plan)
		if err != nil {
			t.Fatal(err)
		}
		// No temporaries: the null driver allocates none, and the slots
		// are what these tests look at.
		m := &loadedModule{d: d, nparams: layout.NumParams}
		for i, tk := range layout.Tasks {
			m.tasks = append(m.tasks, task{Task: tk, fn: uintptr(0x1000 * (i + 1))})
		}
		if err := m.layout(d); err != nil {
			t.Fatal(err)
		}
		m.launches.New = func() any { return m.newLaunch() }
		return m, layout
	}
	t.Fatalf("no suite kernel %s", name)
	return nil, nil
}

// A 4-D array passes its fourth extent and sizes the grid from the first
// three; an 8- or 16-bit scalar fills its 4-byte slot with its value
// extended to 32 bits, from the ir.Const pattern of Args.Scalars.
func TestPackValues(t *testing.T) {
	d := fakeDevice()
	s := d.newStream(0xabc, false)

	m, layout := moduleOf(t, d, "fill4")
	x := &fakeBuffer{d, 0x7f0000001000}
	bl, err := m.Begin(s, &backend.Args{Scalars: []uint64{0}, Arrays: []backend.ArrayArg{{Buf: x, Shape: [4]int{2, 3, 4, 1000}}}})
	if err != nil {
		t.Fatal(err)
	}
	l := bl.(*launch)
	found := false
	for i, sl := range layout.Tasks[0].Slots {
		if sl.Kind == kabi.DimSlot && sl.Dim == 3 {
			found = true
			if l.vals[i] != 1000 {
				t.Errorf("fill4: extent 3 passed as %d, want 1000", l.vals[i])
			}
		}
	}
	if !found {
		t.Errorf("fill4: no slot of extent 3 in %+v", layout.Tasks[0].Slots)
	}
	if l.grids[0] != 1 { // 2·3·4 points of 256 threads
		t.Errorf("fill4: grid %d, want 1", l.grids[0])
	}
	if err := l.End(s); err != nil {
		t.Fatal(err)
	}

	m, layout = moduleOf(t, d, "smallints")
	bufs := make([]backend.ArrayArg, 8)
	for i := range bufs {
		bufs[i] = backend.ArrayArg{Buf: &fakeBuffer{d, uint64(0x7f0000001000 + 0x1000*i)}, Shape: [4]int{100, 1, 1, 1}}
	}
	var int8m3 int8 = -3
	scalars := make([]uint64, 8)
	scalars[5], scalars[6] = uint64(int64(int8m3)), 65535 // s8 int8(-3), u16 65535
	bl, err = m.Begin(s, &backend.Args{Scalars: scalars, Arrays: bufs})
	if err != nil {
		t.Fatal(err)
	}
	l = bl.(*launch)
	seen := 0
	for ti, tk := range layout.Tasks {
		for si, sl := range tk.Slots {
			if sl.Kind != kabi.ScalarSlot {
				continue
			}
			seen++
			want := map[int]uint64{5: 0xFFFF_FFFD, 6: 0xFFFF}[sl.Param]
			if got := l.vals[m.tasks[ti].slotOff+si]; sl.Size != 4 || got != want {
				t.Errorf("smallints task %d: slot of parameter %d is %#x (%d bytes), want %#x (4 bytes)", ti, sl.Param, got, sl.Size, want)
			}
		}
	}
	if seen != 2 {
		t.Errorf("smallints: %d scalar slots, want 2 (s8 in the serial task, u16 in the parallel one)", seen)
	}
	if err := l.End(s); err != nil {
		t.Fatal(err)
	}
}

// A task whose threads each take PointsPerThread points (the PTX row
// chunks) gets a grid of total/(BlockDim·PointsPerThread) blocks, not one
// block per BlockDim points, most of which would find nothing to do.
func TestGridPointsPerThread(t *testing.T) {
	d := fakeDevice()
	s := d.newStream(0xabc, false)
	for _, c := range []struct{ per, want int }{{0, 1024}, {1, 1024}, {16, 64}} {
		m, _ := moduleOf(t, d, "fill4")
		m.tasks[0].PointsPerThread = c.per
		x := &fakeBuffer{d, 0x7f0000001000}
		bl, err := m.Begin(s, &backend.Args{Scalars: []uint64{0}, Arrays: []backend.ArrayArg{{Buf: x, Shape: [4]int{64, 64, 64, 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		l := bl.(*launch)
		if l.grids[0] != uint32(c.want) { // 64³ points of 256 threads
			t.Errorf("%d points a thread: grid %d, want %d", c.per, l.grids[0], c.want)
		}
		if err := l.End(s); err != nil {
			t.Fatal(err)
		}
	}
}
