package gpu

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// These tests exercise argument packing and grid sizing on a device value
// that has no driver behind it: Begin without temporaries, and End, make no
// driver calls.

func fakeDevice() *Device {
	return &Device{
		drv:     nullDriver{},
		props:   &Props{Units: 132, ThreadsPerUnit: 2048, MaxBlockDim: 1024},
		modules: map[*loadedModule]struct{}{},
	}
}

// nullDriver is a Driver with no library behind it: only what the tests
// of this file reach (names and classes for errors) answers.
type nullDriver struct{}

func (nullDriver) Arch() string                          { return "null" }
func (nullDriver) Calls() *Calls                         { return &Calls{} }
func (nullDriver) Codes() Codes                          { return Codes{NotReady: 600} }
func (nullDriver) Classify(code int32) Class             { return nullClasses[code] }
func (nullDriver) ErrorText(code int32) (string, string) { return fmt.Sprintf("NULL_%d", code), "" }
func (nullDriver) OpenDevice(int) (*Props, error)        { return nil, errors.New("null driver") }
func (nullDriver) CloseDevice(*Props, bool) error        { return nil }
func (nullDriver) Build(*lower.Plan, *Props, backend.CompileOptions) (*Image, error) {
	return nil, errors.New("null driver")
}
func (nullDriver) Load(*Image) (uintptr, error) { return 0, errors.New("null driver") }

// nullClasses classify the null driver's codes for the error tests.
var nullClasses = map[int32]Class{2: OutOfMemory, 700: Fatal, 719: Fatal, 218: InvalidCode, 801: NotSupported, 100: NoDevice}

// fakeBuffer stands for device memory at a fixed address.
type fakeBuffer struct {
	d    *Device
	addr uint64
}

func (b *fakeBuffer) Bytes() int { return 1 << 20 }
func (b *fakeBuffer) CopyFromHost(backend.Stream, unsafe.Pointer, int) error {
	return nil
}
func (b *fakeBuffer) CopyToHost(backend.Stream, unsafe.Pointer, int) error { return nil }
func (b *fakeBuffer) CopyFrom(backend.Stream, backend.Buffer, int) error   { return nil }
func (b *fakeBuffer) View(int, int) (backend.Buffer, error)                { return b, nil }
func (b *fakeBuffer) FreeOn(backend.Stream) error                          { return nil }
func (b *fakeBuffer) Close() error                                         { return nil }
func (b *fakeBuffer) devPtrFor(d *Device) (uint64, error) {
	if d != b.d {
		return 0, errors.New("buffer belongs to another device")
	}
	return b.addr, nil
}

// saxpyLike is a module of two tasks: a parallel saxpy(a f32, x, y []f32)
// with a host-computed extent, then a serial task that reads a 64-bit
// scalar n and the temporaries.
func saxpyLike(t *testing.T, d *Device, numTemps int) *loadedModule {
	t.Helper()
	m := &loadedModule{d: d, nparams: 4, numTemps: numTemps, tasks: []task{
		{
			Task: kabi.Task{Entry: "saxpy_t0", Kind: lower.Parallel, BlockDim: 256, Slots: []kabi.Slot{
				{Kind: kabi.ScalarSlot, Param: 0, Size: 4},
				{Kind: kabi.ArraySlot, Param: 1, Size: 8},
				{Kind: kabi.DimSlot, Param: 1, Dim: 0, Size: 8},
				{Kind: kabi.ArraySlot, Param: 2, Size: 8},
				{Kind: kabi.DimSlot, Param: 2, Dim: 0, Size: 8},
			},
				HostTotal: func(_ []uint64, shapes [][4]int) int64 { return int64(shapes[1][0]) }, TotalShapes: true},
			fn: 0x1000,
		},
		{
			Task: kabi.Task{Entry: "saxpy_t1", Kind: lower.Serial, BlockDim: 7, // serial: forced to 1
				Slots: []kabi.Slot{
					{Kind: kabi.ScalarSlot, Param: 3, Size: 8},
					{Kind: kabi.TempsSlot, Size: 8},
					{Kind: kabi.ScalarSlot, Param: 0, Size: 4},
				}},
			fn: 0x2000,
		},
	}}
	if err := m.layout(d); err != nil {
		t.Fatal(err)
	}
	m.launches.New = func() any { return m.newLaunch() }
	return m
}

func TestLayout(t *testing.T) {
	d := fakeDevice()
	m := saxpyLike(t, d, 2)
	if m.nslots != 8 {
		t.Errorf("nslots = %d, want 8", m.nslots)
	}
	if m.tasks[0].slotOff != 0 || m.tasks[1].slotOff != 5 {
		t.Errorf("slot offsets %d, %d", m.tasks[0].slotOff, m.tasks[1].slotOff)
	}
	if len(m.tempSlots) != 1 || m.tempSlots[0] != 6 {
		t.Errorf("temp slots %v, want [6]", m.tempSlots)
	}
	if m.tasks[1].BlockDim != 1 {
		t.Errorf("serial block %d, want 1", m.tasks[1].BlockDim)
	}
	if got, want := m.tasks[0].maxBlocks, kabi.MaxBlocks(132, 2048, 256, 0); got != want {
		t.Errorf("maxBlocks = %d, want %d", got, want)
	}

	bad := []task{
		{Task: kabi.Task{Entry: "big", Kind: lower.Parallel, BlockDim: 2048}},
		{Task: kabi.Task{Entry: "zero", Kind: lower.Parallel, BlockDim: 0}},
		{Task: kabi.Task{Entry: "size", Kind: lower.Parallel, BlockDim: 32, Slots: []kabi.Slot{{Kind: kabi.ScalarSlot, Size: 2}}}},
		{Task: kabi.Task{Entry: "param", Kind: lower.Parallel, BlockDim: 32, Slots: []kabi.Slot{{Kind: kabi.ArraySlot, Param: 9, Size: 8}}}},
		{Task: kabi.Task{Entry: "dim", Kind: lower.Parallel, BlockDim: 32, Slots: []kabi.Slot{{Kind: kabi.DimSlot, Dim: 4, Size: 8}}}},
		{Task: kabi.Task{Entry: "kind", Kind: lower.Parallel, BlockDim: 32, Slots: []kabi.Slot{{Kind: 0, Size: 8}}}},
	}
	for _, bt := range bad {
		m := &loadedModule{d: d, nparams: 1, tasks: []task{bt}}
		if err := m.layout(d); err == nil || !strings.Contains(err.Error(), bt.Entry) {
			t.Errorf("layout of bad task %q: %v", bt.Entry, err)
		}
	}
}

func TestPackParams(t *testing.T) {
	d := fakeDevice()
	m := saxpyLike(t, d, 0)
	s := d.newStream(0xabc, false)
	x, y := &fakeBuffer{d, 0x7f0000001000}, &fakeBuffer{d, 0x7f0000002000}
	a := float32(2.5)
	args := &backend.Args{
		Scalars: []uint64{uint64(math.Float32bits(a)) | 0xdead_0000_0000_0000, 0, 0, 1<<40 + 3},
		Arrays:  []backend.ArrayArg{{}, {Buf: x, Shape: [4]int{1000, 1, 1, 1}}, {Buf: y, Shape: [4]int{1000, 1, 1, 1}}, {}},
	}
	bl, err := m.Begin(s, args)
	if err != nil {
		t.Fatal(err)
	}
	l := bl.(*launch)
	want := []uint64{
		uint64(math.Float32bits(a)), // 4-byte slot: high half cleared
		x.addr, 1000, y.addr, 1000,
		1<<40 + 3, 0, uint64(math.Float32bits(a)),
	}
	for i, w := range want {
		if l.vals[i] != w {
			t.Errorf("vals[%d] = %#x, want %#x", i, l.vals[i], w)
		}
		if l.ptrs[i] != uintptr(unsafe.Pointer(&l.vals[i])) {
			t.Errorf("ptrs[%d] does not point at vals[%d]", i, i)
		}
	}
	// The driver reads 4 bytes through the pointer of a 4-byte slot: on a
	// little-endian machine those are the value's low half.
	if got := *(*float32)(unsafe.Pointer(&l.vals[0])); got != a {
		t.Errorf("4-byte view of slot 0 = %v, want %v", got, a)
	}
	for ti, tk := range m.tasks {
		ka := l.kargs[ti]
		if ka[0] != tk.fn || ka[4] != uintptr(tk.BlockDim) || ka[2] != 1 || ka[5] != 1 || ka[10] != 0 {
			t.Errorf("task %d: kernel args %v", ti, ka)
		}
		if ka[9] != uintptr(unsafe.Pointer(&l.ptrs[tk.slotOff])) {
			t.Errorf("task %d: kernelParams does not point at its slots", ti)
		}
	}
	if l.grids[0] != 4 || l.grids[1] != 1 {
		t.Errorf("grids %v, want [4 1]", l.grids)
	}
	if err := l.End(s); err != nil {
		t.Fatal(err)
	}
}

func TestPackErrors(t *testing.T) {
	d := fakeDevice()
	m := saxpyLike(t, d, 0)
	h := m
	s := d.newStream(0xabc, false)
	other := fakeDevice()
	good := func() *backend.Args {
		return &backend.Args{
			Scalars: make([]uint64, 4),
			Arrays:  []backend.ArrayArg{{}, {Buf: &fakeBuffer{d, 1}, Shape: [4]int{8, 1, 1, 1}}, {Buf: &fakeBuffer{d, 2}, Shape: [4]int{8, 1, 1, 1}}, {}},
		}
	}
	cases := map[string]func(a *backend.Args){
		"parameter 1":                  func(a *backend.Args) { a.Arrays[1].Buf = nil },
		"not a buffer of this backend": func(a *backend.Args) { a.Arrays[2].Buf = struct{ backend.Buffer }{} },
		"parameter 2: buffer":          func(a *backend.Args) { a.Arrays[2].Buf = &fakeBuffer{other, 2} },
		"parameter 3: no scalar":       func(a *backend.Args) { a.Scalars = a.Scalars[:2] },
		"no array":                     func(a *backend.Args) { a.Arrays = a.Arrays[:1] },
	}
	for want, edit := range cases {
		a := good()
		edit(a)
		if _, err := h.Begin(s, a); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "saxpy_t") {
			t.Errorf("%s: Begin error %v", want, err)
		}
	}
	if _, err := h.Begin(other.newStream(1, false), good()); err == nil {
		t.Error("Begin on another device's stream succeeded")
	}
	closed := d.newStream(5, false)
	closed.closed.Store(true)
	if _, err := h.Begin(closed, good()); err == nil {
		t.Error("Begin on a closed stream succeeded")
	}
	h.closed.Store(true) // as Close does, without a driver to unload from
	if _, err := h.Begin(s, good()); err == nil {
		t.Error("Begin on a closed module succeeded")
	}
}

// An empty range launches nothing, so Run makes no driver call; a bad task
// index is an error.
func TestRunEmptyAndBadTask(t *testing.T) {
	d := fakeDevice()
	m := saxpyLike(t, d, 0)
	s := d.newStream(0xabc, false)
	args := &backend.Args{
		Scalars: make([]uint64, 4),
		Arrays:  []backend.ArrayArg{{}, {Buf: &fakeBuffer{d, 1}, Shape: [4]int{0, 1, 1, 1}}, {Buf: &fakeBuffer{d, 2}, Shape: [4]int{0, 1, 1, 1}}, {}},
	}
	bl, err := m.Begin(s, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := bl.Run(0, s); err != nil {
		t.Errorf("Run of an empty range: %v", err)
	}
	for _, bad := range []int{-1, 2} {
		if err := bl.Run(bad, s); err == nil {
			t.Errorf("Run(%d) succeeded", bad)
		}
	}
	if err := bl.End(s); err != nil {
		t.Error(err)
	}
}

// Launches in flight at once get separate blocks; a steady stream of
// Begin/End allocates nothing.
func TestLaunchBlocksPerCall(t *testing.T) {
	d := fakeDevice()
	m := saxpyLike(t, d, 0)
	h := m
	s := d.newStream(0xabc, false)
	mk := func(n int) *backend.Args {
		return &backend.Args{
			Scalars: make([]uint64, 4),
			Arrays:  []backend.ArrayArg{{}, {Buf: &fakeBuffer{d, 1}, Shape: [4]int{n, 1, 1, 1}}, {Buf: &fakeBuffer{d, 2}, Shape: [4]int{n, 1, 1, 1}}, {}},
		}
	}
	l1, _ := h.Begin(s, mk(10))
	l2, _ := h.Begin(s, mk(20))
	if l1 == l2 || &l1.(*launch).vals[0] == &l2.(*launch).vals[0] {
		t.Fatal("two launches in flight share a block")
	}
	if l1.(*launch).vals[2] != 10 || l2.(*launch).vals[2] != 20 {
		t.Error("one launch's arguments overwrote the other's")
	}
	l1.End(s)
	l2.End(s)

	if raceEnabled {
		return // sync.Pool drops items at random under -race
	}
	args := mk(1 << 20)
	if n := testing.AllocsPerRun(200, func() {
		l, err := h.Begin(s, args)
		if err != nil {
			t.Fatal(err)
		}
		l.End(s)
	}); n != 0 {
		t.Errorf("Begin/End: %v allocations per launch", n)
	}
}

func TestWrapStreamRejectsDefaults(t *testing.T) {
	d := fakeDevice()
	for _, h := range []uintptr{0, 1, 2} {
		if _, err := d.WrapStream(h); err == nil || !strings.Contains(err.Error(), "default stream") {
			t.Errorf("WrapStream(%d): %v", h, err)
		}
	}
	s, err := d.WrapStream(0x5555)
	if err != nil || s.Handle() != 0x5555 || s.(*stream).owned {
		t.Errorf("WrapStream(0x5555) = %v, %v", s, err)
	}
}

// Events never recorded are complete; Elapsed checks its inputs before
// asking the driver. None of this reaches the driver.
func TestEventChecksWithoutDriver(t *testing.T) {
	d := fakeDevice()
	e := &event{d: d, h: 1}
	if err := e.Synchronize(); err != nil {
		t.Errorf("Synchronize of a never-recorded event: %v", err)
	}
	if done, err := e.Query(); !done || err != nil {
		t.Errorf("Query of a never-recorded event: %v, %v", done, err)
	}
	end := &event{d: d, h: 2, timing: true}
	if _, err := e.Elapsed(end); err == nil || !strings.Contains(err.Error(), "timing") {
		t.Errorf("Elapsed of a non-timing event: %v", err)
	}
	e.timing = true
	if _, err := e.Elapsed(end); err == nil || !strings.Contains(err.Error(), "recorded") {
		t.Errorf("Elapsed of unrecorded events: %v", err)
	}
	if _, err := e.Elapsed(&event{d: fakeDevice(), timing: true}); err == nil {
		t.Error("Elapsed across devices succeeded")
	}
	s := d.newStream(0x10, false)
	if err := s.WaitEvent(e); err != nil {
		t.Errorf("waiting for a never-recorded event: %v", err)
	}
}
