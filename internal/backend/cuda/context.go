package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
)

// Device attributes (CUdevice_attribute, cuda.h).
const (
	attrMaxThreadsPerBlock  = 1
	attrMultiprocessorCount = 16
	attrMaxThreadsPerSM     = 39
	attrComputeCapMajor     = 75
	attrComputeCapMinor     = 76
	attrMemoryPoolsSupport  = 115
)

// ctxCheckFirst selects how a call path makes the device's context current
// on its OS thread: false calls cuCtxSetCurrent unconditionally (one driver
// call, no out-parameter, no pooled frame); true calls cuCtxGetCurrent and
// sets only on a mismatch (one call on a hit, two on a miss). Measured on an
// H200 (driver 580): cuCtxSetCurrent 108–129 ns, cuCtxGetCurrent 122–160 ns
// (BenchmarkCtxSetCurrent/GetCurrent), and the whole launch path 2.89 µs vs
// 2.97 µs (BenchmarkLaunchPath4Args vs ...CtxCheck), so the unconditional
// set is the default. A variable so the benchmarks can compare both.
var ctxCheckFirst = false

// device is a CUDA device with its retained primary context.
type device struct {
	drv     *driver
	sym     *symbols
	ordinal int
	dev     int32   // CUdevice
	ctx     uintptr // CUcontext (the primary context)
	ctxArgs []uintptr

	name         string
	ccMajor      int
	ccMinor      int
	smCount      int
	maxThreadsSM int
	maxBlockDim  int
	totalMem     uint64
	memPools     bool // attribute 115 and cuMemAllocAsync bound
	prioLeast    int
	prioGreatest int

	closing atomic.Bool // set by the first Close
	closed  atomic.Bool // set when Close is done: enter fails from then on
	poison  atomic.Pointer[poisonedError]

	mu      sync.Mutex
	modules map[ir.Hash]*moduleEntry
	temps   tempPool
}

// Open retains the primary context of device ordinal and reads the device's
// properties.
func Open(ordinal int) (backend.Device, error) {
	d, err := open(ordinal)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func open(ordinal int) (*device, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= drv.devices {
		return nil, fmt.Errorf("%w: ordinal %d, the driver reports %d device(s)", ErrNoDevice, ordinal, drv.devices)
	}
	d := &device{drv: drv, sym: &drv.sym, ordinal: ordinal, modules: map[ir.Hash]*moduleEntry{}}
	d.temps.d = d

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var dev int32
	if r := callRes(purego.SyscallN(d.sym.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal))); r != cudaSuccess {
		return nil, d.err("cuDeviceGet", r)
	}
	d.dev = dev
	var ctx uintptr
	if r := callRes(purego.SyscallN(d.sym.primaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(dev))); r != cudaSuccess {
		return nil, d.err("cuDevicePrimaryCtxRetain", r)
	}
	d.ctx = ctx
	d.ctxArgs = []uintptr{ctx}
	if err := d.readProperties(); err != nil {
		call1(d.sym.primaryCtxRelease, uintptr(d.dev))
		return nil, err
	}
	return d, nil
}

// readProperties runs on a locked thread during open.
func (d *device) readProperties() error {
	if r := call1(d.sym.ctxSetCurrent, d.ctx); r != cudaSuccess {
		return d.err("cuCtxSetCurrent", r)
	}
	attr := func(a int, def int) (int, error) {
		var v int32
		r := callRes(purego.SyscallN(d.sym.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(d.dev)))
		if r == cudaErrorInvalidValue {
			return def, nil // an attribute this driver does not know
		}
		if r != cudaSuccess {
			return 0, d.err("cuDeviceGetAttribute", r)
		}
		return int(v), nil
	}
	var err error
	get := func(a, def int) int {
		v, e := attr(a, def)
		if err == nil {
			err = e
		}
		return v
	}
	d.ccMajor = get(attrComputeCapMajor, 0)
	d.ccMinor = get(attrComputeCapMinor, 0)
	d.smCount = get(attrMultiprocessorCount, 1)
	d.maxThreadsSM = get(attrMaxThreadsPerSM, 2048)
	d.maxBlockDim = get(attrMaxThreadsPerBlock, 1024)
	pools := get(attrMemoryPoolsSupport, 0)
	if err != nil {
		return err
	}
	d.memPools = pools != 0 && d.sym.memAllocAsync != 0

	name := make([]byte, 256)
	if r := callRes(purego.SyscallN(d.sym.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(d.dev))); r != cudaSuccess {
		return d.err("cuDeviceGetName", r)
	}
	d.name = goString(&name[0])
	var mem uint64
	if r := callRes(purego.SyscallN(d.sym.deviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(d.dev))); r != cudaSuccess {
		return d.err("cuDeviceTotalMem_v2", r)
	}
	d.totalMem = mem
	var least, greatest int32
	if r := callRes(purego.SyscallN(d.sym.ctxGetStreamPriorityRng, uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest)))); r != cudaSuccess {
		return d.err("cuCtxGetStreamPriorityRange", r)
	}
	d.prioLeast, d.prioGreatest = int(least), int(greatest)
	return nil
}

// enter starts a driver call path: it locks the goroutine to its OS thread
// (the current context is per thread, and the scheduler may move the
// goroutine between any two calls) and makes the device's context current
// there. Every successful enter is paired with leave. enter fails fast on a
// closed device or a poisoned context.
func (d *device) enter() error {
	if d.closed.Load() {
		return ErrDeviceClosed
	}
	if p := d.poison.Load(); p != nil {
		return p
	}
	runtime.LockOSThread()
	var r int32
	if ctxCheckFirst {
		f := getFrame()
		f.a[0] = f.outAddr(0)
		f.out[0] = 0
		r = callRes(purego.SyscallN(d.sym.ctxGetCurrent, f.a[:1]...))
		cur := uintptr(f.out[0])
		putFrame(f)
		if r == cudaSuccess && cur != d.ctx {
			r = callRes(purego.SyscallN(d.sym.ctxSetCurrent, d.ctxArgs...))
		}
	} else {
		r = callRes(purego.SyscallN(d.sym.ctxSetCurrent, d.ctxArgs...))
	}
	if r != cudaSuccess {
		runtime.UnlockOSThread()
		return d.check("cuCtxSetCurrent", r)
	}
	return nil
}

// leave ends a call path begun by a successful enter.
func (d *device) leave() { runtime.UnlockOSThread() }

// check turns a CUresult into an error. A fatal code poisons the device, so
// later calls fail fast with an error that names the first failure.
func (d *device) check(op string, r int32) error {
	if r == cudaSuccess {
		return nil
	}
	e := d.err(op, r)
	if isFatal(r) {
		d.poison.CompareAndSwap(nil, &poisonedError{first: e})
	}
	return e
}

func (d *device) err(op string, r int32) *DriverError { return d.drv.err(op, r) }

func (d *device) Arch() string { return "cuda" }

func (d *device) Describe() string {
	return fmt.Sprintf("CUDA device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, driver CUDA %s",
		d.ordinal, d.name, d.ccMajor, d.ccMinor, d.smCount, float64(d.totalMem)/(1<<30), versionString(d.drv.version))
}

func (d *device) PriorityRange() (least, greatest int) { return d.prioLeast, d.prioGreatest }

// Close waits for the device's work, unloads every module, frees the
// recycled temporaries and releases the primary context. Package qd closes
// every stream, event and buffer first. Close is idempotent.
func (d *device) Close() error {
	if !d.closing.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	poisoned := d.poison.Load() != nil
	if !poisoned {
		if err := d.enter(); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, d.check("cuCtxSynchronize", callRes(purego.SyscallN(d.sym.ctxSynchronize))))
			d.mu.Lock()
			for h, e := range d.modules {
				if e.mod != nil {
					errs = append(errs, e.mod.unload())
				}
				delete(d.modules, h)
			}
			d.mu.Unlock()
			errs = append(errs, d.temps.release())
			d.leave()
		}
	}
	d.closed.Store(true)
	// Released also when poisoned: the retain count is the process's, and
	// a poisoned primary context is reset only when its last user releases it.
	errs = append(errs, d.check("cuDevicePrimaryCtxRelease_v2", call1(d.sym.primaryCtxRelease, uintptr(d.dev))))
	if poisoned {
		errs = append(errs, d.poison.Load())
	}
	return errors.Join(errs...)
}
