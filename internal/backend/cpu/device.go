package cpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	cg "github.com/quadrants-go/qd/internal/codegen/cpu"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// Device is the CPU as a backend.Device.
type Device struct {
	// stop is the stop flag of launches without a context (cg.Args.Stop),
	// set by Stop; cause is Stop's cause.
	stop  atomic.Bool
	cause atomic.Pointer[error]
	// flags holds the stop flags of launches with a context, each set by
	// its context or by Stop.
	mu    sync.Mutex
	flags map[*atomic.Bool]struct{}
}

// New returns the CPU device.
func New() *Device { return &Device{flags: make(map[*atomic.Bool]struct{})} }

var _ backend.Device = (*Device)(nil)
var _ backend.HostWrapper = (*Device)(nil)
var _ backend.Stopper = (*Device)(nil)
var _ backend.Peer = (*Device)(nil)

// Stop stops every launch, queued or running, at its next check.
func (d *Device) Stop(cause error) {
	d.cause.CompareAndSwap(nil, &cause)
	d.stop.Store(true)
	d.mu.Lock()
	for f := range d.flags {
		f.Store(true)
	}
	d.mu.Unlock()
}

// stopFlag gives the flag a launch's code polls: the device's own, or for
// a launch with a context a new one that the context (through
// context.AfterFunc) and Stop both set. Registering before reading d.stop
// pairs with Stop's store before it walks the flags under mu: the launch
// is either in the walk or sees the store.
func (d *Device) stopFlag(ctx context.Context) (*atomic.Bool, func()) {
	if ctx == nil {
		return &d.stop, nil
	}
	// A local, not a named result: the closures capture it, and a captured
	// result would be moved to the heap on every call, context or not.
	flag := new(atomic.Bool)
	d.mu.Lock()
	d.flags[flag] = struct{}{}
	d.mu.Unlock()
	if d.stop.Load() {
		flag.Store(true)
	}
	unregister := context.AfterFunc(ctx, func() { flag.Store(true) })
	return flag, func() {
		unregister()
		d.mu.Lock()
		delete(d.flags, flag)
		d.mu.Unlock()
	}
}

// stopCause says why a launch with context ctx was stopped.
func (d *Device) stopCause(ctx context.Context) error {
	if p := d.cause.Load(); p != nil {
		return *p
	}
	if ctx != nil {
		return context.Cause(ctx)
	}
	return errors.New("stopped") // unreachable: a flag is set with a cause
}

func (d *Device) Arch() string { return "cpu" }

func (d *Device) Describe() string {
	return fmt.Sprintf("CPU (%s/%s, %d threads)", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}

// Info describes the CPU (device 0, the backend's only one).
func (d *Device) Info() backend.DeviceInfo { return Info() }

func (d *Device) PriorityRange() (least, greatest int) { return 0, 0 }

func (d *Device) NewStream(priority int) (backend.Stream, error) { return newStream(d), nil }

func (d *Device) WrapStream(handle uintptr) (backend.Stream, error) {
	return nil, fmt.Errorf("cpu backend: wrapping a foreign stream handle: %w", backend.ErrUnsupported)
}

func (d *Device) NewEvent(timing bool) (backend.Event, error) { return &event{timing: timing}, nil }

// WaitPeerEvent is WaitEvent: every CPU device's events are host objects
// any stream can wait for (two Programs on the CPU are two Devices).
func (d *Device) WaitPeerEvent(s backend.Stream, e backend.Event) error {
	st, ok := s.(*stream)
	if !ok {
		return fmt.Errorf("cpu backend: WaitPeerEvent on a %T", s)
	}
	return st.WaitEvent(e)
}

// CopyPeer is CopyFrom: the memory of every CPU device is host memory.
func (d *Device) CopyPeer(s backend.Stream, dst, src backend.Buffer, n int) error {
	b, ok := dst.(*buffer)
	if !ok || b == nil {
		return fmt.Errorf("cpu backend: copy into a %T", dst)
	}
	return b.CopyFrom(s, src, n)
}

func (d *Device) event(e backend.Event) (*event, error) {
	ev, ok := e.(*event)
	if !ok {
		return nil, fmt.Errorf("cpu backend: not a CPU event: %T", e)
	}
	return ev, nil
}

func (d *Device) Alloc(bytes int) (backend.Buffer, error) {
	if bytes < 0 || bytes > maxAlloc() {
		return nil, fmt.Errorf("cpu backend: allocation of %d bytes: more than this machine's memory (%d bytes): %w", bytes, maxAlloc(), backend.ErrOutOfMemory)
	}
	mem := make([]uint64, (bytes+7)/8+1) // +1: a valid pointer even for 0 bytes
	return &buffer{mem: mem, ptr: unsafe.Pointer(&mem[0]), bytes: bytes}, nil
}

// AllocOn is Alloc: the CPU has no memory pool to order; the buffer's
// FreeOn runs after the stream's earlier work.
func (d *Device) AllocOn(_ backend.Stream, bytes int) (backend.Buffer, error) { return d.Alloc(bytes) }

// AllocHost is plain memory: the CPU backend's copies are memory moves.
func (d *Device) AllocHost(bytes int) (backend.HostBuffer, error) {
	b, err := d.Alloc(bytes)
	if err != nil {
		return nil, err
	}
	a := b.(*buffer)
	return &hostBuffer{buffer{mem: a.mem, ptr: a.ptr, bytes: a.bytes}}, nil
}

// WrapHost uses host memory directly as a buffer.
func (d *Device) WrapHost(p unsafe.Pointer, bytes int) (backend.Buffer, error) {
	return &buffer{ptr: p, bytes: bytes}, nil
}

func (d *Device) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	prog, err := cg.Compile(plan)
	if err != nil {
		return nil, err
	}
	m := &module{dev: d, prog: prog, cost: make([]atomic.Int64, len(prog.Tasks))}
	if opts.Native != backend.NativeOff && plan.Native != nil {
		m.native, m.nativeFile = plan.Native, plan.NativeFile
		if opts.Native == backend.NativeOn {
			m.pick.forced = true
			m.pick.choice.Store(1)
		}
	}
	for _, t := range plan.Tasks {
		if t.Kind != lower.Block {
			continue
		}
		if f := kabi.HostTotal([]ir.Expr{t.Blocks.Size}); f != nil {
			m.sizes = append(m.sizes, blockSize{f, t.Blocks.Pos, plan.Kernel.Name})
		}
	}
	return m, nil
}

func (d *Device) Close() error { return nil }

// maxAlloc is the largest allocation tried: the machine's memory where
// /proc/meminfo says it, else 1 TiB. Larger requests get an error instead
// of a runtime panic or an out-of-memory crash.
var maxAlloc = sync.OnceValue(func() int {
	limit := 1 << 40
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return limit
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.Atoi(f[1]); err == nil && kb > 0 {
				return min(kb*1024, limit)
			}
		}
	}
	return limit
})

var _ backend.HostTasker = (*Device)(nil)

// EnqueueHost runs fn in the order of s (the CPU transport's collectives).
func (d *Device) EnqueueHost(bs backend.Stream, fn func() error) error {
	s, ok := bs.(*stream)
	if !ok || s == nil {
		return fmt.Errorf("cpu backend: EnqueueHost on a %T", bs)
	}
	return s.enqueue(op{kind: opFunc, fn: fn})
}
