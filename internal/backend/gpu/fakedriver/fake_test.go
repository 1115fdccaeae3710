package fakedriver

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// Callbacks are made once per driver, for good, so the tests share two.
var (
	once    sync.Once
	fake    *Driver
	wrapped *Wrapped
	onceErr error
)

func drivers(t *testing.T) (*Driver, *Wrapped) {
	t.Helper()
	once.Do(func() {
		if fake, onceErr = New(); onceErr == nil {
			var inner *Driver
			if inner, onceErr = New(); onceErr == nil {
				wrapped, onceErr = Wrap(inner)
			}
		}
	})
	if onceErr != nil {
		t.Skipf("no callbacks on this platform: %v", onceErr)
	}
	fake.Reset()
	wrapped.Reset()
	return fake, wrapped
}

// rawCall calls fn with args on a call path of d and returns its result
// code (-1 when the call path cannot start).
//
//go:uintptrescapes
func rawCall(d *gpu.Device, fn *gpu.Fn, args ...uintptr) int32 {
	r := int32(-1)
	d.Do(func() error {
		r1, _, _ := purego.SyscallN(fn.Addr, args...)
		r = int32(uint32(r1))
		return nil
	})
	return r
}

func open(t *testing.T, drv gpu.Driver) *gpu.Device {
	t.Helper()
	d, err := gpu.Open(drv, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every function of the runtime's table has an entry here (with its
// number of arguments), so a function added to gpu.Calls is not left
// unwrapped.
func TestCallsCoverTheTable(t *testing.T) {
	ty := reflect.TypeFor[gpu.Calls]()
	n := 0
	for f := range ty.Fields() {
		if f.Type != reflect.TypeFor[gpu.Fn]() {
			continue
		}
		n++
		c, ok := callNamed(f.Name)
		if !ok || c == cLoad {
			t.Errorf("gpu.Calls.%s has no entry in calls", f.Name)
		} else if a := calls[c].arity; a < 0 || a > maxArity || (a > 4 && a != 6 && a != 11) {
			t.Errorf("%s: arity %d has no callback", f.Name, a)
		}
	}
	if n != int(cLoad) {
		t.Errorf("gpu.Calls has %d functions, calls lists %d", n, cLoad)
	}
	if got := Calls(); len(got) != int(numCalls) || got[len(got)-1] != Load {
		t.Errorf("Calls() = %v", got)
	}
}

// smoke makes and releases one of everything through the runtime,
// checking after each step that the Injector's accounting agrees with the
// fake's own objects.
func smoke(t *testing.T, d *gpu.Device, agree func(step string)) {
	t.Helper()
	s, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := d.NewEvent(true)
	b, _ := d.Alloc(100)
	p, _ := d.AllocOn(s, 1000)
	h, _ := d.AllocHost(64)
	agree("made")
	if got := unsafe.Slice((*byte)(h.Pointer()), 64); got[0] != 0 || got[63] != 0 {
		t.Error("AllocHost did not clear the fake's filled memory")
	}
	copy(unsafe.Slice((*byte)(h.Pointer()), 64), "round trip through device memory")
	if err := p.CopyFromHost(s, h.Pointer(), 64); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFrom(s, p, 64); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, 64)
	if err := b.CopyToHost(s, unsafe.Pointer(&back[0]), 64); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(back), "round trip through device memory") {
		t.Errorf("copies gave %q", back)
	}
	if err := b.(backend.Zeroer).Zero(s); err != nil {
		t.Fatal(err)
	}
	b.CopyToHost(s, unsafe.Pointer(&back[0]), 64)
	if back[0] != 0 || back[63] != 0 {
		t.Error("Zero left data")
	}
	e.Record(s)
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	p.FreeOn(s)
	for _, c := range []interface{ Close() error }{h, b, e, s} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	agree("released")
}

func TestAccounting(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	defer d.Close()
	smoke(t, d, func(step string) {
		if live, own := f.Live(), f.objects(); live != own {
			t.Errorf("%s: the Injector counts %v, the fake holds %v", step, live, own)
		}
	})
	if live := f.Live(); live != (Live{}) {
		t.Errorf("left: %v", live)
	}
	if m := f.Misuses(); len(m) > 0 {
		t.Errorf("misuses: %v", m)
	}
}

// Wrap forwards every call to the driver behind it (here the fake) and
// accounts for them the same way.
func TestWrapForwards(t *testing.T) {
	_, w := drivers(t)
	inner := w.Driver.(*Driver)
	d := open(t, w)
	defer d.Close()
	smoke(t, d, func(step string) {
		if live, own := w.Live(), inner.objects(); live != own {
			t.Errorf("%s: the wrapper counts %v, the fake holds %v", step, live, own)
		}
	})
	if w.Count("MemAllocAsync") != 1 || w.Count("CopyDtoHAsync") != 2 || w.Count("MakeCurrent") == 0 {
		t.Errorf("counts %v", w.Counts())
	}
	if w.Name("MemAlloc") != "fakeMemAlloc" || w.Name(Load) != Load || w.RunsKernels() {
		t.Errorf("names %q, %q; runs kernels %v", w.Name("MemAlloc"), w.Name(Load), w.RunsKernels())
	}
}

// The N-th call of a function fails with the code given, once; the
// calls before and after it run.
func TestInjectNth(t *testing.T) {
	for _, tc := range []struct {
		name string
		drv  func(f *Driver, w *Wrapped) (gpu.Driver, *Injector)
	}{
		{"fake", func(f *Driver, _ *Wrapped) (gpu.Driver, *Injector) { return f, f.Injector }},
		{"wrapped", func(_ *Driver, w *Wrapped) (gpu.Driver, *Injector) { return w, w.Injector }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drv, in := tc.drv(drivers(t))
			d := open(t, drv)
			defer d.Close()
			in.Inject(Fault{Call: "MemAlloc", N: 2, Code: CodeOutOfMemory})
			var errs []error
			for range 3 {
				b, err := d.Alloc(16)
				if err == nil {
					b.Close()
				}
				errs = append(errs, err)
			}
			if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], backend.ErrOutOfMemory) || !strings.Contains(errs[1].Error(), "fakeMemAlloc") {
				t.Errorf("errors %v", errs)
			}
			if in.Count("MemAlloc") != 3 || len(in.Fired()) != 1 || in.Live() != (Live{}) {
				t.Errorf("count %d, fired %v, live %v", in.Count("MemAlloc"), in.Fired(), in.Live())
			}
		})
	}
}

// A failed call that the runtime repeats at once, after MakeCurrent, fails
// again, as a real failure does; a later identical call does not.
func TestInjectRepeatsAtOnce(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	defer d.Close()
	d.Props().ContextChecked = true // records go without MakeCurrent, and repeat after it on failure
	s, _ := d.NewStream(0)
	defer s.Close()
	e, _ := d.NewEvent(false)
	defer e.Close()
	f.Inject(Fault{Call: "EventRecord", N: 1, Code: CodeInvalidValue})
	if err := e.Record(s); err == nil || !strings.Contains(err.Error(), "fakeEventRecord") {
		t.Fatalf("Record: %v", err)
	}
	if n, fired := f.Count("EventRecord"), len(f.Fired()); n != 2 || fired != 1 {
		t.Errorf("%d records, %d faults fired; want the repeat counted and one fault", n, fired)
	}
	if err := e.Record(s); err != nil {
		t.Errorf("a later Record: %v", err)
	}
}

// A fatal code poisons the fake's context: every later call fails with it
// until the last device closes, which resets the context.
func TestFatalPoisonsUntilReset(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	s, _ := d.NewStream(0)
	b, _ := d.Alloc(64)
	f.Inject(Fault{Call: "StreamSynchronize", N: 1, Code: CodeIllegalAddress})
	if err := s.Synchronize(); !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("Synchronize: %v", err)
	}
	c := f.Calls()
	if r := rawCall(d, &c.Synchronize); r != -1 {
		t.Errorf("a raw call on the lost device ran: %d", r) // the runtime fails fast
	}
	var h uintptr
	if r, _, _ := purego.SyscallN(c.StreamCreate.Addr, uintptr(unsafe.Pointer(&h)), 0, 0); int32(r) != CodeIllegalAddress {
		t.Errorf("a call on the poisoned context returned %d", r)
	}
	if f.Live() == (Live{}) {
		t.Error("nothing live before the reset")
	}
	if err := d.Close(); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("Close: %v", err)
	}
	if live := f.Live(); live != (Live{}) || f.objects() != (Live{}) {
		t.Errorf("after the reset: %v", live)
	}
	_ = b // not closed: the reset released it
	d = open(t, f)
	defer d.Close()
	if b, err := d.Alloc(16); err != nil {
		t.Errorf("Alloc after the reset: %v", err)
	} else {
		b.Close()
	}
}

// A sticky fake keeps a poisoned context after its last device closes:
// a device opened after fails at its first call, as on CUDA after a fault,
// until SetSticky(false) resets it.
func TestStickyPoison(t *testing.T) {
	f, _ := drivers(t)
	f.SetSticky(true)
	defer f.SetSticky(false)
	d := open(t, f)
	s, _ := d.NewStream(0)
	f.Inject(Fault{Call: "StreamSynchronize", N: 1, Code: CodeIllegalAddress})
	if err := s.Synchronize(); !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("Synchronize: %v", err)
	}
	d.Close()
	for range 2 {
		d = open(t, f)
		if _, err := d.NewStream(0); !errors.Is(err, backend.ErrDeviceLost) || !strings.Contains(err.Error(), "ILLEGAL_ADDRESS") {
			t.Errorf("NewStream on a device opened after the fault: %v", err)
		}
		d.Close()
	}
	f.SetSticky(false)
	d = open(t, f)
	defer d.Close()
	s, err := d.NewStream(0)
	if err != nil {
		t.Fatalf("NewStream after SetSticky(false): %v", err)
	}
	s.Close()
}

// Calls the runtime should never make fail and are recorded.
func TestMisuses(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	defer d.Close()
	before := len(f.Misuses())
	c := f.Calls()
	b, _ := d.Alloc(64)
	defer b.Close()
	f.mu.Lock()
	v := f.dev.allocs[0].base + 8 // inside b: the only allocation
	f.mu.Unlock()
	x := make([]byte, 128)
	for _, tc := range []struct {
		fn   *gpu.Fn
		args []uintptr
		code int32
	}{
		{&c.StreamDestroy, []uintptr{0x7}, CodeInvalidHandle},
		{&c.EventRecord, []uintptr{0x7, 0}, CodeInvalidHandle},
		{&c.MemFree, []uintptr{v}, CodeInvalidValue},
		{&c.CopyHtoDAsync, []uintptr{v, uintptr(unsafe.Pointer(&x[0])), 64, 0}, CodeInvalidValue},
		{&c.CopyDtoHAsync, []uintptr{v, v, 8, 0}, CodeInvalidValue},
		{&c.LaunchKernel, []uintptr{0x7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, CodeInvalidHandle},
	} {
		if r := rawCall(d, tc.fn, tc.args...); r != tc.code {
			t.Errorf("%s%v = %d, want %d", tc.fn.Name, tc.args, r, tc.code)
		}
	}
	if got := f.Misuses()[before:]; len(got) != 6 {
		t.Errorf("misuses: %q", got)
	}
	runtime.KeepAlive(x)
}

// A launch checks its parameters against the entry's layout: array
// arguments must be live device memory.
func TestLaunchChecksParameters(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	defer d.Close()
	b := ir.NewBuilder("fill")
	p, v := b.Array("p", ir.U32, 1), b.Scalar("v", ir.U32)
	b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) { b.Store(p, ir.P(v), ir.Ref(i)) })
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, _ := d.NewStream(0)
	defer s.Close()
	buf, _ := d.Alloc(64)
	launch := func() error {
		l, err := m.Begin(s, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{{Buf: buf, Shape: [4]int{16, 1, 1, 1}}}})
		if err != nil {
			return err
		}
		err = l.Run(0, s)
		return errors.Join(err, l.End(s))
	}
	before := len(f.Misuses())
	if err := launch(); err != nil {
		t.Fatal(err)
	}
	// The same entry called directly with an array argument that is not
	// device memory (the runtime never passes one).
	var fn uintptr
	var slots []kabi.Slot
	f.mu.Lock()
	for h, fc := range f.funcs {
		fn, slots = h, fc.task.Slots
	}
	f.mu.Unlock()
	vals := make([]uint64, len(slots))
	ptrs := make([]uintptr, len(slots))
	for i, sl := range slots {
		if sl.Kind == kabi.ArraySlot {
			vals[i] = 0xdead0000
		}
		ptrs[i] = uintptr(unsafe.Pointer(&vals[i]))
	}
	if r := rawCall(d, &f.Calls().LaunchKernel, fn, 1, 1, 1, 256, 1, 1, 0, s.Handle(), uintptr(unsafe.Pointer(&ptrs[0])), 0); r != CodeInvalidValue {
		t.Errorf("launch with a bad array: %d", r)
	}
	runtime.KeepAlive(vals)
	if got := f.Misuses()[before:]; len(got) != 1 || !strings.Contains(got[0], "not live device memory") {
		t.Errorf("misuses %q", got)
	}
}

func TestElapsedTicks(t *testing.T) {
	f, _ := drivers(t)
	d := open(t, f)
	defer d.Close()
	s, _ := d.NewStream(0)
	defer s.Close()
	a, _ := d.NewEvent(true)
	b, _ := d.NewEvent(true)
	defer a.Close()
	defer b.Close()
	a.Record(s)
	s.Query()
	b.Record(s)
	if el, err := a.Elapsed(b); err != nil || el <= 0 {
		t.Errorf("Elapsed = %v, %v; want a small positive time", el, err)
	}
}

func TestCodeFor(t *testing.T) {
	f, _ := drivers(t)
	for class, want := range map[gpu.Class]int32{
		gpu.Failed: CodeInvalidValue, gpu.OutOfMemory: CodeOutOfMemory, gpu.Fatal: CodeIllegalAddress,
		gpu.InvalidCode: CodeInvalidImage, gpu.NotSupported: CodeNotSupported, gpu.NoDevice: 100,
	} {
		if got, ok := CodeFor(f, class); !ok || got != want {
			t.Errorf("CodeFor(%d) = %d, %v; want %d", class, got, ok, want)
		}
	}
	name, msg := f.ErrorText(CodeOutOfMemory)
	if name != "FAKE_ERROR_OUT_OF_MEMORY" || msg == "" {
		t.Errorf("ErrorText = %q, %q", name, msg)
	}
}
