package fakedriver

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// The fake device's properties.
const (
	// MemoryBytes is the fake device's memory: allocations beyond it fail
	// with CodeOutOfMemory. Page-locked host memory has the same bound.
	MemoryBytes = 1 << 30
	maxBlockDim = 1024
)

// Driver is the fake driver: a gpu.Driver of one simulated device (see
// the package documentation). Its Injector counts, fails and accounts for
// its calls. A Driver is safe for concurrent use.
type Driver struct {
	*Injector
	ip interposer

	mu         sync.Mutex
	ctx        uintptr // the device's context (Props.CurrentArg); 0 while no device is open
	users      int     // open devices
	poisoned   int32   // the fatal code every call returns; 0 if none
	sticky     bool    // a poisoned context outlives its devices (SetSticky)
	last       uintptr // the last handle given out
	clock      int64   // ticks once per call: when events are recorded
	streams    map[uintptr]bool
	events     map[uintptr]*event
	modules    map[uintptr]*module
	funcs      map[uintptr]*function
	dev        memory // device memory
	host       memory // page-locked host memory
	misuses    []string
	graphState // captures, graphs and execs (graph.go)

	plainEntries atomic.Bool // SetPlainEntries
}

var _ gpu.Driver = (*Driver)(nil)

type event struct {
	timing bool
	at     int64 // the clock when last recorded; 0: never recorded
	// Recorded last on a capturing stream: the capture and the recording
	// stream's clock (graph.go); nil when recorded outside every capture.
	cap   *capture
	clock map[uintptr]int
}

type module struct {
	funcs map[string]uintptr // entry name → function handle
}

// function is an entry of a loaded module (ModuleUnload drops it).
type function struct {
	task   kabi.Task // its layout: what a launch must pass it
	awaits bool      // it waits for its predecessors (kabi.Module.AwaitsPredecessors)
}

// New makes a fake driver. It fails where purego cannot make callbacks
// (or the process has made its last of them).
func New() (*Driver, error) {
	d := &Driver{
		Injector: newInjector(),
		streams:  map[uintptr]bool{},
		events:   map[uintptr]*event{},
		modules:  map[uintptr]*module{},
		funcs:    map[uintptr]*function{},
	}
	d.ip = interposer{in: d.Injector, classify: classify, next: d.sim, poison: d.poison, faulted: d.faulted}
	var names gpu.Calls
	for c := range cLoad {
		fnOf(&names, c).Name = "fake" + calls[c].field
	}
	if err := d.ip.bind(&names, func(call) bool { return true }); err != nil {
		return nil, err
	}
	d.names[cLoad] = "fakeModuleLoad"
	return d, nil
}

var (
	defaultOnce sync.Once
	defaultDrv  *Driver
	defaultErr  error
)

// Default is the process's shared fake driver, for test corpora that
// inject no faults (a test that injects faults makes its own with New, so
// that its counts are its own).
func Default() (*Driver, error) {
	defaultOnce.Do(func() { defaultDrv, defaultErr = New() })
	return defaultDrv, defaultErr
}

// RunsKernels reports false: the fake checks launches but runs no device
// code, so a test of what a kernel computes cannot pass on it.
func (d *Driver) RunsKernels() bool { return false }

// Misuses are the calls the fake rejected because the runtime should never
// make them (an unknown handle, memory outside every allocation), each
// naming the function and what was wrong. Injected faults are not misuses.
func (d *Driver) Misuses() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.misuses)
}

func (d *Driver) Arch() string      { return "fake" }
func (d *Driver) Calls() *gpu.Calls { return &d.ip.calls }

// Codes are CUDA's values, as are the result codes (codes.go).
func (d *Driver) Codes() gpu.Codes {
	return gpu.Codes{NotReady: CodeNotReady, InvalidValue: CodeInvalidValue, StreamNonBlocking: 1, EventDisableTiming: 2, HostAllocPortable: 1, CaptureRelaxed: captureRelaxed,
		ProgrammaticLaunch: attrProgrammatic, EventRecordExternal: recordExternal}
}

func (d *Driver) Classify(code int32) gpu.Class { return classify(code) }

func (d *Driver) ErrorText(code int32) (name, msg string) {
	return codeNames[code], codeTexts[code]
}

// OpenDevice opens the fake's only device, ordinal 0. Devices open at once
// share its context, as CUDA's share a primary context.
func (d *Driver) OpenDevice(ordinal int) (*gpu.Props, error) {
	if ordinal != 0 {
		return nil, fmt.Errorf("fake: %w: ordinal %d, the fake has 1 device", gpu.ErrNoDevice, ordinal)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == 0 {
		d.ctx = d.newHandle()
	}
	d.users++
	return &gpu.Props{
		Ordinal:          0,
		CurrentArg:       d.ctx,
		Name:             "qd fake GPU",
		Target:           "fake",
		Describe:         "fake device 0: simulated on the host (kernels do not run)",
		Units:            4,
		ThreadsPerUnit:   2048,
		MaxBlockDim:      maxBlockDim,
		WarpSize:         32,
		MemoryBytes:      MemoryBytes,
		MemPools:         true,
		PriorityLeast:    0,
		PriorityGreatest: -5,
	}, nil
}

// CloseDevice ends one use of the context. When the last user of a
// context that a fault poisoned (or that the runtime says is lost) closes,
// the context is reset: everything on it is released and the next
// OpenDevice gets a working one. A sticky fake keeps it poisoned.
func (d *Driver) CloseDevice(p *gpu.Props, lost bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.users == 0 || p.CurrentArg != d.ctx {
		return fmt.Errorf("fake: CloseDevice of a device that is not open (context %#x)", p.CurrentArg)
	}
	d.users--
	if d.users == 0 && (lost || d.poisoned != 0) && !d.sticky {
		d.resetLocked()
	}
	return nil
}

// SetSticky makes a poisoned context outlive its last device, as CUDA's
// primary context does (cuda's CloseDevice does not reset it): every
// device opened later gets it, and every call on it but MakeCurrent fails
// with the fault's code, so that a test sees what a new Program sees after
// a fault on a real GPU. Turning it off resets a poisoned context that no
// device holds.
func (d *Driver) SetSticky(sticky bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sticky = sticky
	if !sticky && d.users == 0 && d.poisoned != 0 {
		d.resetLocked()
	}
}

// resetLocked destroys the context and everything on it.
func (d *Driver) resetLocked() {
	d.ctx, d.poisoned = 0, 0
	clear(d.streams)
	clear(d.events)
	clear(d.modules)
	clear(d.funcs)
	d.dev.reset()
	d.host.reset()
	d.graphState = graphState{}
	d.forget()
}

// SetPlainEntries makes the entries of later builds not wait for their
// predecessors, as those for GPUs before sm_90 (Build), so that captured
// launches are plain ones.
func (d *Driver) SetPlainEntries(plain bool) { d.plainEntries.Store(plain) }

// Build lays the plan out, with the violation record of index checks
// under Debug; the image holds no code (the fake runs none, so no index is
// ever out of range). Its entries are said to wait for their predecessors,
// as sm_90's do, so that captures go through LaunchKernelEx, unless
// SetPlainEntries says otherwise.
func (d *Driver) Build(plan *lower.Plan, _ *gpu.Props, opts backend.CompileOptions) (*gpu.Image, error) {
	layout, err := kabi.LayoutWith(plan, kabi.Options{Bounds: opts.Debug})
	if err != nil {
		return nil, err
	}
	layout.AwaitsPredecessors = !d.plainEntries.Load()
	return &gpu.Image{Layout: layout}, nil
}

// Load makes a module of img's entries, through the Injector.
func (d *Driver) Load(img *gpu.Image) (uintptr, error) { return d.ip.load(d, img, d.load) }

func (d *Driver) load(img *gpu.Image) (uintptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock++
	if d.poisoned != 0 {
		return 0, gpu.NewDriverError(d, d.names[cLoad], d.poisoned)
	}
	if img == nil || img.Layout == nil {
		return 0, gpu.NewDriverError(d, d.names[cLoad], d.misuse(cLoad, CodeInvalidImage, "an image without a layout"))
	}
	h := d.newHandle()
	m := &module{funcs: map[string]uintptr{}}
	for _, t := range img.Layout.Tasks {
		f := d.newHandle()
		m.funcs[t.Entry] = f
		d.funcs[f] = &function{task: t, awaits: img.Layout.AwaitsPredecessors}
	}
	d.modules[h] = m
	return h, nil
}

// poison makes every later call fail with a fatal code, as a fault does
// to a real context.
func (d *Driver) poison(code int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.poisoned == 0 {
		d.poisoned = code
	}
}

// newHandle is a handle no live object has. Handles start far above the
// special stream values (0, 1, 2) and are never reused.
func (d *Driver) newHandle() uintptr {
	if d.last == 0 {
		d.last = 0x1000
	}
	d.last += 0x10
	return d.last
}

// misuse records a call the runtime should not have made and returns code.
func (d *Driver) misuse(c call, code int32, format string, a ...any) int32 {
	d.misuses = append(d.misuses, d.names[c]+": "+fmt.Sprintf(format, a...))
	return code
}

// objects counts the fake's own live objects, for the test that the
// Injector's accounting agrees with it.
func (d *Driver) objects() Live {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, bytes := d.graphFreed()
	return Live{
		Streams: len(d.streams), Events: len(d.events), Modules: len(d.modules),
		Allocs: len(d.dev.allocs) - n, AllocBytes: d.dev.bytes - bytes,
		HostAllocs: len(d.host.allocs), HostBytes: d.host.bytes,
		Graphs: len(d.graphs), Execs: len(d.execs),
	}
}
