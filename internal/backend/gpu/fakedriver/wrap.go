package fakedriver

import (
	"sync"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Wrapped is a driver with an Injector in front of its functions: every
// bound function of its Calls table, and Load, count their calls and
// either fail the ones the faults name or forward them to the driver.
// Everything else is the wrapped driver's.
type Wrapped struct {
	gpu.Driver
	*Injector
	ip    interposer
	addrs [numCalls]uintptr // the wrapped driver's functions

	mu    sync.Mutex
	users int // open devices
}

var _ gpu.Driver = (*Wrapped)(nil)

// Wrap puts an Injector in front of drv (a real driver, or the fake). The
// wrapped driver's table must not change afterwards, which gpu.Driver
// promises once a device is open. Wrap makes one callback per bound
// function, for good (see the package documentation): wrap each driver
// once per process and reuse the result.
func Wrap(drv gpu.Driver) (*Wrapped, error) {
	w := &Wrapped{Driver: drv, Injector: newInjector()}
	base := drv.Calls()
	for c := range cLoad {
		w.addrs[c] = fnOf(base, c).Addr
	}
	w.ip = interposer{in: w.Injector, classify: drv.Classify, next: w.forward}
	if err := w.ip.bind(base, func(c call) bool { return w.addrs[c] != 0 }); err != nil {
		return nil, err
	}
	w.names[cLoad] = Load
	return w, nil
}

// forward calls the wrapped driver's function, from inside the callback:
// the arguments are the caller's, still valid (and the thread the same, so
// the current context is too).
func (w *Wrapped) forward(c call, a *args) int32 {
	r, _, _ := purego.SyscallN(w.addrs[c], a[:calls[c].arity]...)
	return int32(uint32(r))
}

// Calls is the table of callbacks in front of the wrapped driver's.
func (w *Wrapped) Calls() *gpu.Calls { return &w.ip.calls }

// Load is the wrapped driver's Load through the Injector; an injected
// failure is named "Load" and classified by the wrapped driver.
func (w *Wrapped) Load(img *gpu.Image) (uintptr, error) {
	return w.ip.load(w, img, w.Driver.Load)
}

// OpenDevice is the wrapped driver's, counting the devices open.
func (w *Wrapped) OpenDevice(ordinal int) (*gpu.Props, error) {
	p, err := w.Driver.OpenDevice(ordinal)
	if err == nil {
		w.mu.Lock()
		w.users++
		w.mu.Unlock()
	}
	return p, err
}

// CloseDevice is the wrapped driver's. When the last open device closes
// lost, the Injector forgets what lived on it: gpu.Driver promises the
// context is then reset (and where a driver keeps a lost context, as CUDA
// does, nothing can reach what was on it any more), and its addresses may
// be handed out again.
func (w *Wrapped) CloseDevice(p *gpu.Props, lost bool) error {
	err := w.Driver.CloseDevice(p, lost)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.users--; w.users == 0 && lost {
		w.forget()
	}
	return err
}

// RunsKernels is the wrapped driver's answer where it gives one (the
// fake's false), else true: a real driver runs kernels.
func (w *Wrapped) RunsKernels() bool {
	if k, ok := w.Driver.(interface{ RunsKernels() bool }); ok {
		return k.RunsKernels()
	}
	return true
}
