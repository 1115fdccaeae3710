package qd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
)

// Program is one backend device with everything made on it: streams,
// events, arrays and kernels. Every method is safe for concurrent use.
// Close releases everything the Program made.
type Program struct {
	arch Arch
	dev  backend.Device

	// life guards the Program's lifetime: every operation holds it shared
	// while it talks to the backend, and Close holds it exclusively, so an
	// operation never runs on a released backend object.
	life   sync.RWMutex
	closed atomic.Bool

	mu      sync.Mutex // guards the registries below
	streams map[*streamCore]struct{}
	events  map[*eventCore]struct{}
	arrays  map[*ndCore]struct{}
	hosts   map[*hostCore]struct{}
	kernels map[*kernelCore]struct{}
	graphs  map[*graphCore]struct{}
	// captures are the graph captures in progress; ncap counts them, so
	// that paths that only need to know "none" read one atomic.
	captures map[*capture]struct{}
	ncap     atomic.Int32
	// comms are the Program's open Comms (comm.go); ncomm counts them, so
	// that a Synchronize without one reads one atomic.
	comms map[*commCore]struct{}
	ncomm atomic.Int32

	def     *Stream // the default stream
	pool    streamPool
	evpool  eventPool
	modules moduleCache
	fills   fillKernels

	// tracer is the trace in progress, nil when tracing is off: the one
	// thing a launch checks for tracing (trace.go). retired counts the
	// replaced traces still being closed; Close waits for them.
	tracer  atomic.Pointer[tracer]
	retired sync.WaitGroup
}

// Init starts a Program on the chosen backend ([WithArch]; Auto by default).
// Auto takes CUDA when a device is present, then AMDGPU (when HIP's runtime
// and an AMD GPU are present; the AMD path is compiled and checked, never
// yet run on an AMD GPU), then a Vulkan GPU (never a Vulkan device on the
// CPU, such as lavapipe), then the CPU, which always works. An explicit GPU
// arch without a usable driver or device is an error matching
// [ErrUnsupported] that says why. Init loads qd's own kernels (the fills of
// Ndarray.FillOn), so on a GPU it waits, as [Compile] does, for kernels
// another Program runs on the same device.
func Init(opts ...InitOption) (*Program, error) {
	cfg := initConfig{arch: Auto}
	if err := cfg.fromEnv(); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	dev, arch, err := openDevice(cfg.arch, cfg.device)
	if err != nil {
		return nil, err
	}
	p, err := newProgram(dev, arch, cfg)
	return p, lostAtInit(arch, cfg.device, err)
}

// newProgram makes the Program of an open device; on failure it closes
// the device.
func newProgram(dev backend.Device, arch Arch, cfg initConfig) (*Program, error) {
	p := &Program{
		arch:    arch,
		dev:     dev,
		streams: make(map[*streamCore]struct{}),
		events:  make(map[*eventCore]struct{}),
		arrays:  make(map[*ndCore]struct{}),
		hosts:   make(map[*hostCore]struct{}),
		kernels: make(map[*kernelCore]struct{}),
		graphs:  make(map[*graphCore]struct{}),

		captures: make(map[*capture]struct{}),
	}
	p.initPools()
	p.modules.init()
	p.modules.opts.FastMath = cfg.fastMath
	p.modules.opts.Debug = cfg.debug
	p.modules.opts.Native = cfg.native
	if cfg.native == backend.NativeAuto {
		p.modules.opts.Native = nativeEnv
	}
	bs, err := dev.NewStream(0)
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("qd: creating the default stream: %w", err)
	}
	p.def = &Stream{c: p.registerStream(bs, streamDefault)}
	if err := p.fills.load(p); err != nil {
		p.Close()
		return nil, err
	}
	if cfg.trace {
		if err := p.StartTrace(); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// openDevice opens device ordinal of the registered backend for arch; for
// Auto it tries the registered backends in their order of preference (the
// GPUs, then the CPU, which always opens device 0).
func openDevice(arch Arch, ordinal int) (backend.Device, Arch, error) {
	if ordinal < 0 {
		return nil, 0, fmt.Errorf("%w: WithDevice(%d): device ordinals start at 0", ErrInvalidArgument, ordinal)
	}
	if arch == Auto {
		var errs []error
		var short []string // backends with fewer devices
		for _, b := range backend.Registered() {
			if has := tooFew(b, ordinal); has != "" {
				short = append(short, b.Arch+" has "+has)
				continue
			}
			open := b.Open
			if b.OpenAuto != nil {
				open = b.OpenAuto
			}
			dev, err := open(ordinal)
			if err == nil {
				return dev, archOf(b.Arch), nil
			}
			if errors.Is(err, ErrDeviceLost) {
				// Not a backend without a device: the GPU the
				// program would get is lost, and falling back to
				// the CPU would hide that.
				return nil, 0, lostAtInit(archOf(b.Arch), ordinal, err)
			}
			errs = append(errs, err)
		}
		if len(short) > 0 {
			errs = append(errs, fmt.Errorf("%w: WithDevice(%d): %s", ErrInvalidArgument, ordinal, strings.Join(short, "; ")))
		}
		return nil, 0, fmt.Errorf("qd: no backend opened: %w", errors.Join(errs...))
	}
	if arch < CPU || arch > Vulkan {
		return nil, 0, fmt.Errorf("%w: WithArch(%d): no such arch; use qd.Auto, qd.CPU, qd.CUDA, qd.AMDGPU or qd.Vulkan", ErrInvalidArgument, int(arch))
	}
	b, ok := backend.Lookup(arch.String())
	if !ok {
		return nil, 0, &unavailableError{arch, errors.New("not built in yet")}
	}
	if has := tooFew(b, ordinal); has != "" {
		return nil, 0, fmt.Errorf("%w: WithDevice(%d): the %s backend has %s", ErrInvalidArgument, ordinal, arch, has)
	}
	dev, err := b.Open(ordinal)
	switch {
	case errors.Is(err, ErrDeviceLost):
		return nil, 0, lostAtInit(arch, ordinal, err)
	case err != nil:
		return nil, 0, &unavailableError{arch, err}
	}
	return dev, arch, nil
}

// tooFew says how many devices b has ("1 device (0)") when it lists fewer
// than ordinal+1; "" otherwise. Device 0 is not checked, nor a backend
// that lists none: Open says why such a backend is unavailable.
func tooFew(b backend.Backend, ordinal int) string {
	if ordinal == 0 || b.Devices == nil {
		return ""
	}
	infos, err := b.Devices()
	if err != nil || ordinal < len(infos) {
		return ""
	}
	return deviceCount(len(infos))
}

// deviceCount says how many devices there are and their ordinals.
func deviceCount(n int) string {
	switch n {
	case 0:
		return "no device"
	case 1:
		return "1 device (0)"
	case 2:
		return "2 devices (0 and 1)"
	}
	return fmt.Sprintf("%d devices (0 to %d)", n, n-1)
}

// archOf is the Arch a registered backend's name stands for.
func archOf(name string) Arch {
	for _, a := range []Arch{CPU, CUDA, AMDGPU, Vulkan} {
		if a.String() == name {
			return a
		}
	}
	return Auto
}

// errClosing is the cause of the work Close stops.
var errClosing = fmt.Errorf("qd: %w: the Program is closing", ErrClosed)

// Arch is the backend the Program runs on (never Auto).
func (p *Program) Arch() Arch {
	if p == nil {
		return Auto
	}
	return p.arch
}

// Device describes the Program's device: its backend, ordinal, name and
// properties, as [Devices] lists it. Its String method gives one line for
// messages. A nil Program has the zero DeviceInfo.
func (p *Program) Device() DeviceInfo {
	if p == nil {
		return DeviceInfo{}
	}
	return infoOf(p.arch, p.dev.Info())
}

// DefaultStream is the Program's own stream, used by [Kernel.Launch]. It is
// non-blocking like every qd stream: work on other streams is not ordered
// with it unless events say so.
func (p *Program) DefaultStream() *Stream {
	if p == nil {
		return nil
	}
	return p.def
}

// enter takes the Program's lifetime lock for one operation; exit releases
// it. An operation on a closed Program gets [ErrClosed].
func (p *Program) enter() error {
	if p == nil {
		return fmt.Errorf("%w: nil Program", ErrInvalidArgument)
	}
	p.life.RLock()
	if p.closed.Load() {
		p.life.RUnlock()
		return closedErr("program")
	}
	return nil
}

func (p *Program) exit() { p.life.RUnlock() }

// Synchronize waits for all work of the Program on all its streams, and returns
// the errors that work reported. While a stream captures a graph, Sync
// fails with an error matching [ErrCapturing], and so does the capture.
func (p *Program) Synchronize() error {
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	if err := p.refuseIfCapturing("Program.Synchronize"); err != nil {
		return err
	}
	return p.syncAll()
}

// SynchronizeContext is Synchronize that gives up when ctx is done,
// returning ctx's error; the work goes on, and errors it reports after
// the call gave up are kept for the next Synchronize of their streams. A
// nil ctx is an error matching [ErrInvalidArgument].
func (p *Program) SynchronizeContext(ctx context.Context) error {
	const call = "Program.SynchronizeContext"
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context", ErrInvalidArgument, call)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.enter(); err != nil {
		return err
	}
	err := p.refuseIfCapturing(call)
	p.mu.Lock()
	streams := make([]*streamCore, 0, len(p.streams))
	for s := range p.streams {
		streams = append(streams, s)
	}
	p.mu.Unlock()
	p.exit()
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range streams {
		err := s.synchronizeContext(ctx, call)
		if errors.Is(err, ErrClosed) && s.closed.Load() {
			// Closed by another goroutine: its Close waits for the work.
			err = untilDone(ctx, p, func() error { <-s.gone; return nil })
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return err
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (p *Program) syncAll() error { return p.syncAllBut(nil) }

// syncAllBut is syncAll, leaving out errors that match skip.
func (p *Program) syncAllBut(skip error) error {
	p.mu.Lock()
	streams := make([]*streamCore, 0, len(p.streams))
	for s := range p.streams {
		streams = append(streams, s)
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range streams {
		if s.closed.Load() {
			<-s.gone // being closed by another goroutine: wait for its work
			continue
		}
		if err := p.syncStream(s); err != nil && (skip == nil || !errors.Is(err, skip)) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close ends the Program's work, then releases every stream, event, array,
// kernel and graph of the Program and the device. Close is idempotent;
// afterwards every method of the Program and of its objects returns
// [ErrClosed]. A graph capture in progress in another goroutine is ended
// (its Capture returns an error matching ErrClosed).
//
// On the CPU, Close first stops the work still queued or running, as a
// cancelled LaunchContext would (a kernel that never ends cannot hold it
// up), and calls waiting for that work in other goroutines return errors
// matching ErrClosed; Close does not report them. Its results could not be
// read afterwards anyway. On a GPU, Close waits for the work to finish.
func (p *Program) Close() error {
	if p == nil {
		return nil // so that defer p.Close() after a failed Init is harmless
	}
	// Stop before taking the lock: a goroutine waiting for a runaway
	// kernel (Synchronize, a slice launch) holds it shared.
	if st, ok := p.dev.(backend.Stopper); ok && !p.closed.Load() {
		st.Stop(errClosing)
		p.abortBusyComms()
	}
	p.life.Lock()
	defer p.life.Unlock()
	if p.closed.Load() {
		return nil
	}
	// The Comms close after the work, their collectives' included (on
	// the CPU, those still running were aborted above).
	errs := []error{p.abortCaptures(), p.syncAllBut(errClosing), p.stopTraceOnClose()}
	errs = append(errs, p.closeComms())
	p.retired.Wait() // no launch holds a replaced trace now: they end at once
	p.closed.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	for g := range p.graphs {
		errs = append(errs, g.release())
	}
	clear(p.graphs)
	for k := range p.kernels {
		errs = append(errs, k.release())
	}
	for e := range p.events {
		errs = append(errs, e.release())
	}
	for a := range p.arrays {
		errs = append(errs, a.release())
	}
	for h := range p.hosts {
		errs = append(errs, h.release())
	}
	for s := range p.streams {
		errs = append(errs, s.release())
	}
	clear(p.kernels)
	clear(p.events)
	clear(p.arrays)
	clear(p.hosts)
	clear(p.streams)
	errs = append(errs, p.closeEvents(), p.modules.closeAll(), p.dev.Close())
	return errors.Join(errs...)
}
