package qd

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
)

// Faults injected under the public API: a Program on a GPU device over the
// fake driver (internal/backend/gpu/fakedriver), which simulates a device
// on the host, so this runs on every machine. A failing driver call must
// give the caller a clear error (naming the driver function, matching
// qd's sentinel for its class), leave nothing allocated once the Program
// closes, and leave the Program usable; a fatal one loses the device, so
// that every later call fails fast, and the next Program works again.

var (
	fakeOnce sync.Once
	fakeDrv  *fakedriver.Driver
	fakeErr  error
)

// fakeEnv is a Program on the fake device, with what the operations under
// test use, all made before any fault is injected.
type fakeEnv struct {
	p          *Program
	s          *Stream
	x, y       *Ndarray[float32]
	fill, two  *Kernel
	host       []float32
	freshCount int // sources compiled for the first time on p
}

// openFake opens a Program on the fake driver's device: a GPU device to
// package qd (arch CUDA), its driver faults reset. The Program closes when
// t ends, if the test has not closed it.
func openFake(t *testing.T) (*fakeEnv, *fakedriver.Driver) {
	t.Helper()
	fakeOnce.Do(func() { fakeDrv, fakeErr = fakedriver.New() })
	if fakeErr != nil {
		t.Skipf("no fake driver on this platform: %v", fakeErr)
	}
	fakeDrv.Reset()
	dev, err := gpu.Open(fakeDrv, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Take CUDA's paths: calls that name a stream skip MakeCurrent, and
	// repeat after it on failure (the fake has one context).
	dev.Props().ContextChecked = true
	p, err := newProgram(dev, CUDA, initConfig{arch: CUDA})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() }) // a test that stops early; Close is idempotent
	e := &fakeEnv{p: p, host: make([]float32, 256)}
	e.s = newStream(t, p)
	e.x = newNdarray[float32](t, p, 256)
	e.y = newNdarray[float32](t, p, 256)
	m := compileModule(t, p, suiteSrc)
	e.fill = kernelOf(t, m, "fill")
	e.two = kernelOf(t, m, "twoGroups")
	return e, fakeDrv
}

// closeMade closes what an operation made, so that it can run again.
func closeMade[T interface{ Close() error }](x T, err error) error {
	if err == nil {
		err = x.Close()
	}
	return err
}

// freshSource is a source that p has not compiled: a load happens.
func (e *fakeEnv) freshSource() string {
	e.freshCount++
	return "package k\n\n//qd:kernel\nfunc k" + strings.Repeat("x", e.freshCount) + "(a []float32) {\n\tfor i := range len(a) {\n\t\ta[i] = 1\n\t}\n}\n"
}

func TestGPUFaults(t *testing.T) {
	cases := []struct {
		name  string
		call  string // the failing driver function, as fakedriver.Fault names it
		n     int
		class gpu.Class
		op    func(e *fakeEnv) error // fails with the fault, succeeds without
		is    error                  // the sentinel the error must match, if any
		names []string               // what the error must name besides the function
	}{
		{"NewNdarray", "MemAlloc", 1, gpu.OutOfMemory, func(e *fakeEnv) error {
			return closeMade(NewNdarray[float32](e.p, 1024))
		}, ErrOutOfMemory, nil},
		{"NewNdarrayOn", "MemAllocAsync", 1, gpu.OutOfMemory, func(e *fakeEnv) error {
			return closeMade(NewNdarrayOn[float32](e.s, 1024))
		}, ErrOutOfMemory, nil},
		{"NewNdarray zero fill", "MemsetD8Async", 1, gpu.Failed, func(e *fakeEnv) error {
			return closeMade(NewNdarray[float32](e.p, 1024))
		}, nil, []string{"NewNdarray"}},
		{"NewNdarrayOn, zero fill at first use", "MemsetD8Async", 1, gpu.Failed, func(e *fakeEnv) error {
			a, err := NewNdarrayOn[float32](e.s, 1024)
			if err != nil {
				return err
			}
			return errors.Join(e.fill.LaunchOn(e.s, a, float32(2)), a.Close())
		}, nil, []string{"kernel fill"}},
		{"NewHostArray", "HostAlloc", 1, gpu.OutOfMemory, func(e *fakeEnv) error {
			return closeMade(NewHostArray[float32](e.p, 1024))
		}, ErrOutOfMemory, nil},
		{"NewStream", "StreamCreate", 1, gpu.Failed, func(e *fakeEnv) error {
			return closeMade(e.p.NewStream())
		}, nil, nil},
		{"NewEvent", "EventCreate", 1, gpu.Failed, func(e *fakeEnv) error {
			return closeMade(e.p.NewEvent())
		}, nil, nil},
		{"Compile", fakedriver.Load, 1, gpu.InvalidCode, func(e *fakeEnv) error {
			_, err := Compile(e.p, e.freshSource())
			return err
		}, gpu.ErrInvalidCode, nil},
		{"CopyFromHost", "CopyHtoDAsync", 1, gpu.Failed, func(e *fakeEnv) error {
			return e.x.CopyFromHost(e.host)
		}, nil, nil},
		{"ToSlice", "CopyDtoHAsync", 1, gpu.Failed, func(e *fakeEnv) error {
			_, err := e.x.ToSlice()
			return err
		}, nil, nil},
		{"Launch", "LaunchKernel", 1, gpu.Failed, func(e *fakeEnv) error {
			return e.fill.Launch(e.x, float32(2))
		}, nil, []string{"kernel fill"}},
		{"LaunchOn, second group", "LaunchKernel", 2, gpu.Failed, func(e *fakeEnv) error {
			return e.two.LaunchOn(e.s, e.x, e.y, float32(1))
		}, nil, []string{"kernel twoGroups"}},
		{"LaunchOn, fork", "StreamWaitEvent", 1, gpu.Failed, func(e *fakeEnv) error {
			return e.two.LaunchOn(e.s, e.x, e.y, float32(1))
		}, nil, []string{"kernel twoGroups"}},
		{"LaunchOn, join", "EventRecord", 2, gpu.Failed, func(e *fakeEnv) error {
			return e.two.LaunchOn(e.s, e.x, e.y, float32(1))
		}, nil, []string{"kernel twoGroups"}},
		{"LaunchOn, pooled event", "EventCreate", 1, gpu.Failed, func(e *fakeEnv) error {
			return e.two.LaunchOn(e.s, e.x, e.y, float32(1))
		}, nil, []string{"kernel twoGroups"}},
		{"Launch with a slice", "MemAlloc", 1, gpu.OutOfMemory, func(e *fakeEnv) error {
			return e.fill.Launch(e.host, float32(3))
		}, ErrOutOfMemory, []string{"fill"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			withFault(t, tc.call, tc.n, tc.class, tc.op, func(err error, name string) {
				if err == nil {
					t.Fatal("the operation succeeded although its driver call failed")
				}
				t.Log(err)
				for _, want := range append(slices.Clone(tc.names), name) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not name %q", want)
					}
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("the error is not %v", tc.is)
				}
				if errors.Is(err, ErrDeviceLost) {
					t.Errorf("a code of class %d lost the device", tc.class)
				}
			})
		})
	}
}

// A failure the API gets around: the event that orders other streams
// after an array's deferred zero fill cannot be recorded, so the host
// waits for the fill instead.
func TestGPUFaultRecovered(t *testing.T) {
	withFault(t, "EventRecord", 1, gpu.Failed, func(e *fakeEnv) error {
		a, err := NewNdarrayOn[float32](e.s, 1024)
		if err != nil {
			return err
		}
		return errors.Join(e.fill.Launch(a, float32(2)), a.Close())
	}, func(err error, _ string) {
		if err != nil {
			t.Errorf("the launch did not get around the failure: %v", err)
		}
	})
}

// withFault runs op on a new Program over the fake driver, with the n-th
// call of driver function call failing with a code of class, and gives
// check op's error and the function's name. Then it checks that op
// succeeds without the fault, that a round trip through the device works,
// that nothing is left once the Program closes, and that the fake saw no
// misuse.
func withFault(t *testing.T, call string, n int, class gpu.Class, op func(e *fakeEnv) error, check func(err error, name string)) {
	t.Helper()
	e, fake := openFake(t)
	misuses := len(fake.Misuses())
	code, ok := fakedriver.CodeFor(fake, class)
	if !ok {
		t.Fatalf("no code of class %d", class)
	}
	fake.Inject(fakedriver.Fault{Call: call, N: n, Code: code})
	err := op(e)
	fired := len(fake.Fired())
	fake.Reset()
	if fired != 1 {
		t.Fatalf("the fault did not fire (%d calls): %v", fake.Count(call), err)
	}
	check(err, fake.Name(call))
	if err := op(e); err != nil {
		t.Errorf("the operation after the fault: %v", err)
	}
	for i := range e.host {
		e.host[i] = float32(i)
	}
	if err := e.y.CopyFromHost(e.host); err != nil {
		t.Errorf("CopyFromHost after the fault: %v", err)
	} else if got, err := e.y.ToSlice(); err != nil || !slices.Equal(got, e.host) {
		t.Errorf("a round trip after the fault: %v, %v", got[:min(4, len(got))], err)
	}
	if err := errors.Join(e.s.Close(), e.p.Close()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if live := fake.Live(); live != (fakedriver.Live{}) {
		t.Errorf("after Close the fake driver holds %v", live)
	}
	for _, m := range fake.Misuses()[misuses:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}

// A fatal code loses the device: the launch says so, every later call
// fails fast without reaching the driver, Close reports the loss, and a new
// Program works (the fake resets its context once the last user closes).
func TestGPUFaultFatal(t *testing.T) {
	e, fake := openFake(t)
	code, _ := fakedriver.CodeFor(fake, gpu.Fatal)
	fake.Inject(fakedriver.Fault{Call: "LaunchKernel", N: 1, Code: code})
	err := e.fill.Launch(e.x, float32(2))
	fake.Reset()
	if !errors.Is(err, ErrDeviceLost) || !strings.Contains(err.Error(), fake.Name("LaunchKernel")) {
		t.Fatalf("a fatal launch: %v", err)
	}
	if _, err := NewNdarray[float32](e.p, 16); !errors.Is(err, ErrDeviceLost) {
		t.Errorf("NewNdarray on a lost device: %v", err)
	}
	if err := e.fill.Launch(e.x, float32(2)); !errors.Is(err, ErrDeviceLost) {
		t.Errorf("Launch on a lost device: %v", err)
	}
	if n := fake.Total(); n != 0 {
		t.Errorf("%d driver calls on a lost device: %v", n, fake.Counts())
	}
	if err := e.p.Close(); !errors.Is(err, ErrDeviceLost) {
		t.Errorf("Close of a lost Program: %v, want the loss reported", err)
	}
	if live := fake.Live(); live != (fakedriver.Live{}) {
		t.Errorf("after the reset the fake driver holds %v", live)
	}
	e2, _ := openFake(t)
	check(t, e2.fill.Launch(e2.x, float32(2)))
	check(t, e2.p.Close())
}
