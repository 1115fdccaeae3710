package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// Device is an open GPU: a backend.Device over a Driver.
//
// The current device (context) is per OS thread and goroutines move
// between threads, so every call path locks its goroutine to the thread,
// makes the device current with one Calls.MakeCurrent, makes its driver
// calls and unlocks (enter/leave).
type Device struct {
	drv     Driver
	c       *Calls
	codes   Codes
	props   *Props
	curArgs []uintptr // {Props.CurrentArg}, read-only

	closing atomic.Bool // set by the first Close
	closed  atomic.Bool // set when Close is done: enter fails from then on
	lost    atomic.Pointer[lostError]

	mu      sync.Mutex
	modules map[*loadedModule]struct{} // unloaded by Close if still loaded
	temps   tempPool
	records records                  // violation-record slots of checked launches (debug.go)
	cache   blockCache               // freed stream-ordered blocks, by stream (blockcache.go)
	graphs  map[graphObject]struct{} // live graphs and execs (graph.go)

	// captures counts the stream captures in progress (graph.go).
	captures atomic.Int32
}

var (
	_ backend.Device  = (*Device)(nil)
	_ backend.Tracing = (*Device)(nil)
)

// contexts counts the devices open in the process by what MakeCurrent
// makes current (Props.CurrentArg: a context, an ordinal). A launch may
// skip making its device current only while there is one
// (Props.ContextChecked); devices opened twice on one context, as
// qd bench's reference does, share it.
var contexts struct {
	mu       sync.Mutex
	refs     map[uintptr]int
	distinct atomic.Int32
}

func addContext(arg uintptr, delta int) {
	contexts.mu.Lock()
	defer contexts.mu.Unlock()
	if contexts.refs == nil {
		contexts.refs = map[uintptr]int{}
	}
	contexts.refs[arg] += delta
	if contexts.refs[arg] <= 0 {
		delete(contexts.refs, arg)
	}
	contexts.distinct.Store(int32(len(contexts.refs)))
}

// Open opens device ordinal of drv.
func Open(drv Driver, ordinal int) (*Device, error) {
	p, err := drv.OpenDevice(ordinal)
	if err != nil {
		return nil, err
	}
	d := &Device{
		drv:     drv,
		c:       drv.Calls(),
		codes:   drv.Codes(),
		props:   p,
		curArgs: []uintptr{p.CurrentArg},
		modules: map[*loadedModule]struct{}{},
	}
	d.temps.d = d
	addContext(p.CurrentArg, 1)
	return d, nil
}

// Props are the device's properties as the driver read them.
func (d *Device) Props() *Props { return d.props }

// Driver is the driver the device was opened with.
func (d *Device) Driver() Driver { return d.drv }

func (d *Device) Arch() string     { return d.drv.Arch() }
func (d *Device) Describe() string { return d.props.Describe }

// Info is the device as its driver lists it.
func (d *Device) Info() backend.DeviceInfo { return d.props.Info }

func (d *Device) PriorityRange() (least, greatest int) {
	return d.props.PriorityLeast, d.props.PriorityGreatest
}

// enter starts a driver call path: it locks the goroutine to its OS thread
// and makes the device current there. Every successful enter is paired
// with leave. enter fails fast on a closed or lost device.
func (d *Device) enter() error {
	if d.closed.Load() {
		return ErrDeviceClosed
	}
	if l := d.lost.Load(); l != nil {
		return l
	}
	runtime.LockOSThread()
	if r := res(purego.SyscallN(d.c.MakeCurrent.Addr, d.curArgs...)); r != 0 {
		runtime.UnlockOSThread()
		return d.fail(&d.c.MakeCurrent, r)
	}
	return nil
}

// Do runs f on a call path of the device: the goroutine locked to its OS
// thread with the device current there, as for every runtime call. Drivers
// and tests use it for vendor calls outside the Calls table.
func (d *Device) Do(f func() error) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return f()
}

// leave ends a call path begun by a successful enter.
func (d *Device) leave() { runtime.UnlockOSThread() }

// check turns result r of fn into an error (nil for success).
func (d *Device) check(fn *Fn, r int32) error {
	if r == 0 {
		return nil
	}
	return d.fail(fn, r)
}

// fail is the error for failing result r of fn. A fatal code marks the
// device lost, so later calls fail fast with an error that names the first
// failure.
func (d *Device) fail(fn *Fn, r int32) error {
	e := NewDriverError(d.drv, fn.Name, r)
	if e.Class == Fatal {
		d.markLost(e)
	}
	return e
}

// markLost marks the device lost by fatal error e, unless an earlier one
// did: the first is the one reported.
func (d *Device) markLost(e *DriverError) { d.lost.CompareAndSwap(nil, &lostError{first: e}) }

// run is one driver call, fn(args...), on its own call path. args must be
// a slice that already exists (a pooled frame's, an object's read-only
// list): building it in the call would allocate on hot paths.
func (d *Device) run(fn *Fn, args []uintptr) error {
	if err := d.enter(); err != nil {
		return err
	}
	r := res(purego.SyscallN(fn.Addr, args...))
	d.leave()
	return d.check(fn, r)
}

// runOn is run for a call that names one of the device's streams (or
// functions): while the device's context is the only one open and the
// driver checks it (Props.ContextChecked), the call goes without making
// the device current, which is a third of a small call's cost; a failure,
// "not current" or real, takes the full path, which repeats the call and
// reports. The thread's current context is almost always the device's:
// every call path that made it current left it so.
func (d *Device) runOn(fn *Fn, args []uintptr) error {
	if d.mayCallUnbound() && res(purego.SyscallN(fn.Addr, args...)) == 0 {
		return nil
	}
	return d.run(fn, args)
}

// mayCallUnbound reports whether a call naming one of the device's streams
// may go without making the device current (runOn). Not while a graph
// capture is in progress: a call on a capturing stream that failed for
// want of the context might invalidate the capture.
func (d *Device) mayCallUnbound() bool {
	return d.props.ContextChecked && contexts.distinct.Load() == 1 && !d.closed.Load() && d.lost.Load() == nil && d.captures.Load() == 0
}

// poll is run for a query: the driver's "not ready" is "not yet" (false),
// not an error; success is true.
func (d *Device) poll(fn *Fn, args []uintptr) (bool, error) {
	if err := d.enter(); err != nil {
		return false, err
	}
	r := res(purego.SyscallN(fn.Addr, args...))
	d.leave()
	if r == d.codes.NotReady {
		return false, nil
	}
	return r == 0, d.check(fn, r)
}

// call0 calls fn with no arguments, inside enter/leave.
func (d *Device) call0(fn *Fn) error { return d.check(fn, res(purego.SyscallN(fn.Addr))) }

// call1 calls fn with one plain (non-pointer) argument, inside enter/leave.
func (d *Device) call1(fn *Fn, a uintptr) error {
	return d.check(fn, res(purego.SyscallN(fn.Addr, a)))
}

// Close waits for the device's work, unloads the modules still loaded,
// frees the recycled temporaries and closes the device through the driver.
// Package qd closes every stream, event and buffer first. Close is
// idempotent. A lost device is closed without waiting: its work is gone.
func (d *Device) Close() error {
	if !d.closing.CompareAndSwap(false, true) {
		return nil
	}
	addContext(d.props.CurrentArg, -1)
	var errs []error
	lost := d.lost.Load() != nil
	if !lost {
		if err := d.enter(); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, d.call0(&d.c.Synchronize))
			d.mu.Lock()
			for m := range d.modules {
				errs = append(errs, m.unloadLocked())
			}
			d.mu.Unlock()
			errs = append(errs, d.destroyGraphs(), d.freeCached(nil, true), d.temps.release(), d.records.release(d))
			d.leave()
		}
	}
	d.closed.Store(true)
	// Closed also when lost: the driver resets a lost context once its
	// last user closes.
	errs = append(errs, d.drv.CloseDevice(d.props, d.lost.Load() != nil))
	if l := d.lost.Load(); lost && l != nil {
		errs = append(errs, l)
	}
	return errors.Join(errs...)
}

// String names the device for messages.
func (d *Device) String() string {
	return fmt.Sprintf("%s device %d", d.drv.Arch(), d.props.Ordinal)
}
