package gpu_test

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
)

// Fault injection: for every kind of driver call the runtime makes, the
// scenario (scenario_test.go) runs with the N-th call of that kind failing,
// for the first few N and the last, with a plain failure, an out-of-memory
// code for allocations, a rejected-code code for module loads, and a fatal
// code. The failing operation must return an error that names the driver
// function and matches the sentinel of its class, nothing may panic, the
// scenario's own release must leave nothing allocated, and the device must
// stay usable (the scenario then runs clean on it); a fatal code instead
// loses the device, which must then fail fast without calling the driver,
// report the loss on Close and leave the driver usable by a new device.
//
// On a GPU machine it runs over every real driver too, wrapped:
//
//	QD_GPU_RUN=1 go test ./internal/backend/gpu -run 'TestFaults' -v

// faultKinds are the call sites, by kind, and their driver functions (as
// fakedriver.Fault names them). A fault in a release, or in the wait or
// the MakeCurrent before one (kinds marked releases), may leave the object
// being released, and nothing more: the driver said the release failed,
// and memory that work may still use is never freed.
var faultKinds = []struct {
	kind     string
	calls    []string
	releases bool
}{
	{"alloc", []string{"MemAlloc", "MemAllocAsync"}, false},
	{"host alloc", []string{"HostAlloc"}, false},
	{"launch", []string{"LaunchKernel"}, false},
	{"event create", []string{"EventCreate"}, false},
	{"event record", []string{"EventRecord"}, false},
	{"stream create", []string{"StreamCreate"}, false},
	{"stream wait", []string{"StreamWaitEvent"}, false},
	{"copy", []string{"CopyHtoDAsync", "CopyDtoHAsync", "CopyDtoDAsync"}, false},
	{"memset", []string{"MemsetD8Async"}, false},
	{"module load", []string{fakedriver.Load}, false},
	{"function lookup", []string{"ModuleGetFunction"}, false},
	{"query", []string{"StreamQuery", "EventQuery", "EventElapsed"}, false},
	{"sync", []string{"Synchronize", "StreamSynchronize", "EventSynchronize"}, true},
	{"current", []string{"MakeCurrent"}, true},
	{"release", []string{"StreamDestroy", "EventDestroy", "MemFree", "MemFreeAsync", "HostFree", "ModuleUnload"}, true},
}

// faultTarget is a driver the faults are injected into.
type faultTarget struct {
	name string
	drv  gpu.Driver
	in   *fakedriver.Injector
	// exact: the fake is behind the driver, so every run of the scenario
	// makes the same calls (work is done at once) and every fault must
	// fire; on a real GPU a call may go another way (work not done yet).
	exact   bool
	misuses func() []string // the fake's rejected calls
}

var (
	faultTargetsOnce sync.Once
	faultTargetList  []faultTarget
	faultTargetSkips []string
)

// faultTargets are the fake driver (its own Injector), the fake wrapped
// (the wrapper's forwarding, as it runs over a real driver), and every
// real driver present, wrapped. Each is made once per process: they use
// callbacks, which are never freed.
func faultTargets(t *testing.T) []faultTarget {
	makeFaultTargets()
	real := 0
	for _, tg := range faultTargetList {
		if !tg.exact {
			real++
		}
	}
	for _, why := range faultTargetSkips {
		name, _, _ := strings.Cut(why, ":")
		t.Run(name, func(t *testing.T) { t.Skip(why) })
	}
	if real == 0 && gputest.Required() {
		t.Errorf("QD_GPU_RUN=1 but no real driver to inject faults into: %v", faultTargetSkips)
	}
	return faultTargetList
}

// fakeTarget is the fake driver of faultTargets, or skips t.
func fakeTarget(t *testing.T) *faultTarget {
	makeFaultTargets()
	if len(faultTargetList) == 0 || faultTargetList[0].name != "fake" {
		t.Skipf("no fake driver: %v", faultTargetSkips)
	}
	return &faultTargetList[0]
}

func makeFaultTargets() {
	faultTargetsOnce.Do(func() {
		fake, err := fakedriver.New()
		if err == nil {
			faultTargetList = append(faultTargetList, faultTarget{"fake", fake, fake.Injector, true, fake.Misuses})
			var inner *fakedriver.Driver
			var w *fakedriver.Wrapped
			if inner, err = fakedriver.New(); err == nil {
				if w, err = fakedriver.Wrap(inner); err == nil {
					faultTargetList = append(faultTargetList, faultTarget{"wrapped fake", w, w.Injector, true, inner.Misuses})
				}
			}
		}
		if err != nil {
			faultTargetSkips = append(faultTargetSkips, "fake: "+err.Error())
		}
		for _, dc := range drivers {
			drv, err := dc.get()
			if err == nil && !runsKernels(drv) {
				continue // the fake, above
			}
			var w *fakedriver.Wrapped
			if err == nil {
				w, err = fakedriver.Wrap(drv)
			}
			if err != nil {
				faultTargetSkips = append(faultTargetSkips, dc.name+": "+err.Error())
				continue
			}
			faultTargetList = append(faultTargetList, faultTarget{"wrapped " + dc.name, w, w.Injector, false, nil})
		}
	})
}

func TestFaults(t *testing.T) {
	sc := &scenario{fill: mustLower(t, fillKernel()), temps: mustLower(t, tempsKernel())}
	for _, tg := range faultTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			sc := *sc
			sc.kernels = runsKernels(tg.drv)
			for _, pools := range []bool{true, false} {
				t.Run(map[bool]string{true: "pools", false: "freelist"}[pools], func(t *testing.T) {
					faultsOn(t, &tg, &sc, pools)
				})
			}
		})
	}
}

// faultsOn runs every fault on tg, its devices in the pool mode given.
func faultsOn(t *testing.T, tg *faultTarget, sc *scenario, pools bool) {
	counts := cleanRun(t, tg, sc, pools)
	if t.Failed() {
		return
	}
	codes := map[gpu.Class]int32{}
	for _, class := range []gpu.Class{gpu.Failed, gpu.OutOfMemory, gpu.Fatal, gpu.InvalidCode} {
		code, ok := fakedriver.CodeFor(tg.drv, class)
		if !ok {
			t.Fatalf("the driver has no code of class %s", className[class])
		}
		codes[class] = code
	}
	for _, k := range faultKinds {
		for _, call := range k.calls {
			n := counts[call]
			if n == 0 {
				t.Logf("%s: no %s calls in this mode", k.kind, call)
				continue
			}
			classes := []gpu.Class{gpu.Failed, gpu.Fatal}
			switch call {
			case "MemAlloc", "MemAllocAsync", "HostAlloc":
				classes = append(classes, gpu.OutOfMemory)
			case fakedriver.Load:
				classes = append(classes, gpu.InvalidCode)
			}
			for _, class := range classes {
				for _, nth := range nths(n, class) {
					f := fakedriver.Fault{Call: call, N: nth, Code: codes[class]}
					t.Run(fmt.Sprintf("%s/%s/%s#%d", k.kind, className[class], call, nth), func(t *testing.T) {
						oneFault(t, tg, sc, pools, f, class, k.releases)
					})
				}
			}
		}
	}
}

var className = map[gpu.Class]string{gpu.Failed: "failed", gpu.OutOfMemory: "oom", gpu.Fatal: "fatal", gpu.InvalidCode: "badcode"}

// nths are the calls to fail out of n: the first three and the last; of a
// fatal code only the first and the last (the device is lost either way).
func nths(n int, class gpu.Class) []int {
	first := 3
	if class == gpu.Fatal {
		first = 1
	}
	var out []int
	for i := 1; i <= min(first, n); i++ {
		out = append(out, i)
	}
	if n > first {
		out = append(out, n)
	}
	return out
}

// openFor opens device 0 of tg, with memory pools only if pools is set
// (and the device has them). Over the fake, calls that name a stream skip
// MakeCurrent as they do on CUDA (Props.ContextChecked), so that faults
// meet the runtime's repeat after MakeCurrent too: the fake has one
// context, so a call never acts elsewhere.
func openFor(t *testing.T, tg *faultTarget, pools bool) *gpu.Device {
	t.Helper()
	d, err := gpu.Open(tg.drv, 0)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	p := d.Props()
	p.MemPools = p.MemPools && pools
	if tg.exact {
		p.ContextChecked = true
	}
	return d
}

// cleanRun runs the scenario without faults, checks what it leaves and
// returns its calls per function. It skips the pools mode on a device
// without memory pools.
func cleanRun(t *testing.T, tg *faultTarget, sc *scenario, pools bool) map[string]int {
	misuses := misuseCount(tg)
	tg.in.Reset()
	live := tg.in.Live()
	d := openFor(t, tg, pools)
	if pools && !d.Props().MemPools {
		d.Close()
		t.Skip("the device has no memory pools")
	}
	err, releaseErr := safeRun(t, sc, d)
	counts := tg.in.Counts()
	if err != nil || releaseErr != nil {
		t.Errorf("the scenario without faults: %v; release: %v", err, releaseErr)
	}
	if left := leftOver(live, tg.in.Live(), d, 0); left != "" {
		t.Errorf("after the scenario without faults: %s", left)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if left := leftOver(live, tg.in.Live(), nil, 0); left != "" {
		t.Errorf("after Close: %s", left)
	}
	checkMisuses(t, tg, misuses)
	return counts
}

// leftOver says what now holds beyond before, other than what open device
// d (nil once closed) keeps until it closes (blocks of temporaries, an
// allocation and an event each, and page-locked slabs of violation
// records) and up to allow objects more. It is "" if nothing else.
func leftOver(before, now fakedriver.Live, d *gpu.Device, allow int) string {
	blocks, slabs := 0, 0
	if d != nil {
		blocks, slabs = d.TempBlocks(), d.RecordSlabs()
	}
	more := []int{
		now.Streams - before.Streams,
		now.Events - blocks - before.Events,
		now.Modules - before.Modules,
		now.Allocs - blocks - before.Allocs,
		now.HostAllocs - slabs - before.HostAllocs,
	}
	n := 0
	for _, m := range more {
		if m < 0 {
			n = allow + 1 // fewer than before: the accounts are wrong
		}
		n += m
	}
	// Sizes are compared where the counts are: the sizes of blocks and
	// slabs are the device's choice.
	sized := blocks == 0 && more[3] == 0 && now.AllocBytes != before.AllocBytes ||
		slabs == 0 && more[4] == 0 && now.HostBytes != before.HostBytes
	if n <= allow && !sized {
		return ""
	}
	return fmt.Sprintf("%v held, against %v before (and %d blocks of temporaries, %d slabs of records, %d objects allowed)",
		now, before, blocks, slabs, allow)
}

// oneFault runs the scenario on a new device of tg with fault f, whose code
// is of class, and checks what the failure left.
func oneFault(t *testing.T, tg *faultTarget, sc *scenario, pools bool, f fakedriver.Fault, class gpu.Class, releases bool) {
	misuses := misuseCount(tg)
	tg.in.Reset()
	live := tg.in.Live()
	d := openFor(t, tg, pools)
	closed := false
	defer func() {
		if !closed {
			d.Close()
		}
	}()
	tg.in.Inject(f)
	err, releaseErr := safeRun(t, sc, d)
	if len(tg.in.Fired()) == 0 {
		if tg.exact {
			t.Fatalf("%v never fired: the scenario made %d such calls", f, tg.in.Count(f.Call))
		}
		t.Logf("%v did not fire on this run (%d such calls); the scenario gave %v", f, tg.in.Count(f.Call), err)
		return
	}
	tg.in.Reset()
	if releases && err == nil {
		err, releaseErr = releaseErr, nil // the fault hit the release
	}
	if err == nil {
		t.Fatalf("the scenario succeeded although %v failed", f)
	}
	t.Log(err)
	name := tg.in.Name(f.Call)
	var de *gpu.DriverError
	if !errors.As(err, &de) || de.Op != name || de.Code != f.Code || !strings.Contains(err.Error(), name) {
		t.Errorf("the error does not name %s with code %d: %v", name, f.Code, err)
	}
	lost := errors.Is(err, backend.ErrDeviceLost)
	if class == gpu.Fatal {
		if !lost || !d.Lost() {
			t.Fatalf("a fatal code did not lose the device: %v", err)
		}
		closed = true
		lostDevice(t, tg, d)
		checkMisuses(t, tg, misuses)
		return
	}
	if lost || d.Lost() {
		t.Errorf("a code of class %s lost the device: %v", className[class], err)
	}
	if errors.Is(err, backend.ErrOutOfMemory) != (class == gpu.OutOfMemory) {
		t.Errorf("a code of class %s: errors.Is(err, ErrOutOfMemory) = %v", className[class], !(class == gpu.OutOfMemory))
	}
	if errors.Is(err, gpu.ErrInvalidCode) != (class == gpu.InvalidCode) {
		t.Errorf("a code of class %s: errors.Is(err, ErrInvalidCode) = %v", className[class], !(class == gpu.InvalidCode))
	}
	if releaseErr != nil && !releases {
		t.Errorf("releasing after the failure: %v", releaseErr)
	}
	allow := 0
	if releases {
		allow = 1 // the object whose release failed
	}
	if left := leftOver(live, tg.in.Live(), d, allow); left != "" {
		t.Errorf("after the failure and the scenario's release: %s", left)
	}
	if err, releaseErr := safeRun(t, sc, d); err != nil || releaseErr != nil {
		t.Errorf("the device is unusable after the failure: %v; release: %v", err, releaseErr)
	}
	closed = true
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if left := leftOver(live, tg.in.Live(), nil, allow); left != "" {
		t.Errorf("after Close: %s", left)
	}
	checkMisuses(t, tg, misuses)
}

// lostDevice checks a device that a fatal code lost: every call fails fast
// with ErrDeviceLost without reaching the driver, and Close reports the
// loss and resets the context, so nothing is left on it (the fake releases
// everything; a real driver's context keeps it out of reach) and a new
// device works.
func lostDevice(t *testing.T, tg *faultTarget, d *gpu.Device) {
	calls := tg.in.Total()
	if _, err := d.NewStream(0); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("NewStream on a lost device: %v", err)
	}
	if _, err := d.Alloc(16); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("Alloc on a lost device: %v", err)
	}
	if _, err := d.AllocHost(16); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("AllocHost on a lost device: %v", err)
	}
	if _, err := d.NewEvent(false); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("NewEvent on a lost device: %v", err)
	}
	if n := tg.in.Total(); n != calls {
		t.Errorf("%d driver calls on a lost device: %v", n-calls, tg.in.Counts())
	}
	if err := d.Close(); !errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("Close of a lost device: %v, want the loss reported", err)
	}
	if live := tg.in.Live(); live != (fakedriver.Live{}) {
		t.Errorf("after the reset of the lost context %v is left", live)
	}
	d2, err := gpu.Open(tg.drv, 0)
	if err != nil {
		t.Fatalf("Open after the loss: %v", err)
	}
	defer d2.Close()
	if b, err := d2.Alloc(16); err != nil {
		t.Errorf("a new device after the loss: %v", err)
	} else {
		b.Close()
	}
}

// safeRun runs the scenario, failing t (not the process) on a panic.
func safeRun(t *testing.T, sc *scenario, d *gpu.Device) (err, releaseErr error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return sc.run(d)
}

func misuseCount(tg *faultTarget) int {
	if tg.misuses == nil {
		return 0
	}
	return len(tg.misuses())
}

// checkMisuses fails t if the fake behind tg rejected calls since it had
// rejected before.
func checkMisuses(t *testing.T, tg *faultTarget, before int) {
	t.Helper()
	if tg.misuses == nil {
		return
	}
	for _, m := range tg.misuses()[before:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}

// An allocation in stream order that the pool refuses for lack of memory
// gives the blocks cached by FreeOn back and tries again: it succeeds when
// the memory comes back, and fails with ErrOutOfMemory, the cache given
// back, when it does not.
func TestOutOfMemoryGivesCacheBack(t *testing.T) {
	tg := fakeTarget(t)
	fake := tg.in
	oom, _ := fakedriver.CodeFor(tg.drv, gpu.OutOfMemory)
	for _, tc := range []struct {
		name  string
		fails []int // the MemAllocAsync calls that fail: each try, and its repeat after MakeCurrent
		ok    bool
	}{
		{"memory comes back", []int{1}, true},
		{"it does not", []int{1, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			misuses := misuseCount(tg)
			live := fake.Live()
			d := openFor(t, tg, true)
			s, err := d.NewStream(0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := d.AllocOn(s, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.FreeOn(s); err != nil {
				t.Fatal(err)
			}
			cached := fake.Live() // the block, in s's cache
			var faults []fakedriver.Fault
			for _, n := range tc.fails {
				faults = append(faults, fakedriver.Fault{Call: "MemAllocAsync", N: n, Code: oom})
			}
			fake.Inject(faults...)
			b, err = d.AllocOn(s, 1<<20) // another size: not from the cache
			now, frees := fake.Live(), fake.Count("MemFreeAsync")
			fake.Reset()
			if tc.ok {
				if err != nil {
					t.Errorf("AllocOn once the cache was given back: %v", err)
				} else {
					now.Allocs-- // the new block
					b.FreeOn(s)
				}
			} else if !errors.Is(err, backend.ErrOutOfMemory) {
				t.Errorf("AllocOn with no memory left: %v, want ErrOutOfMemory", err)
			}
			if frees != 1 || now.Allocs != cached.Allocs-1 {
				t.Errorf("the cached block was not given back: %d frees, %v held, %v before", frees, now, cached)
			}
			if err := errors.Join(s.Close(), d.Close()); err != nil {
				t.Errorf("Close: %v", err)
			}
			if left := leftOver(live, fake.Live(), nil, 0); left != "" {
				t.Errorf("after Close: %s", left)
			}
			checkMisuses(t, tg, misuses)
		})
	}
}
