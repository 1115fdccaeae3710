package cuda

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/cuda/nvrtc"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/lower"
)

// driver is the loaded libcuda: the GPU runtime's Driver for NVIDIA GPUs.
type driver struct {
	lib       *gpu.Library
	calls     gpu.Calls
	own       own
	version   int       // cuDriverGetVersion, e.g. 13000
	devices   int       // cuDeviceGetCount
	primaries []primary // per ordinal
}

var _ gpu.Driver = (*driver)(nil)

func (d *driver) Arch() string                  { return "cuda" }
func (d *driver) Calls() *gpu.Calls             { return &d.calls }
func (d *driver) Classify(code int32) gpu.Class { return classify(code) }

// CU_STREAM_NON_BLOCKING, CU_EVENT_DISABLE_TIMING, CU_MEMHOSTALLOC_PORTABLE
// and CU_STREAM_CAPTURE_MODE_RELAXED. Programmatic dependent launches are
// used in captures only from CUDA 12.3, which first recorded them in a
// graph as programmatic edges.
func (d *driver) Codes() gpu.Codes {
	c := gpu.Codes{NotReady: errNotReady, InvalidValue: errInvalidValue, StreamNonBlocking: 1, EventDisableTiming: 2,
		HostAllocPortable: 1, PeerAccessAlreadyEnabled: errPeerAccessAlreadyEnabled, CaptureRelaxed: 2,
		EventRecordExternal: 1, // CU_EVENT_RECORD_EXTERNAL
	}
	if d.version >= 12030 {
		c.ProgrammaticLaunch = 6 // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
	}
	return c
}

// Device attributes (CUdevice_attribute, cuda.h).
const (
	attrMaxThreadsPerBlock  = 1
	attrWarpSize            = 10
	attrMultiprocessorCount = 16
	attrMaxThreadsPerSM     = 39
	attrComputeCapMajor     = 75
	attrComputeCapMinor     = 76
	attrMemoryPoolsSupport  = 115
)

// device is what OpenDevice keeps in Props.Driver.
type device struct {
	dev     int32   // CUdevice
	ctx     uintptr // the primary context
	pool    uintptr // the device's default memory pool, 0 without pools
	ccMajor int
	ccMinor int
}

// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: how much freed memory the pool keeps
// across synchronizations instead of returning it to the system.
const memPoolAttrReleaseThreshold = 4

// primary is the process's hold on one device's primary context. The
// context is retained by the first OpenDevice and kept until the process
// ends: creating it costs 0.3–0.7 s and destroying it 0.3 s, which a
// program that opens and closes Programs would pay every time. A Program's
// Close still frees everything the Program made.
type primary struct {
	mu    sync.Mutex
	ctx   uintptr // 0 until retained
	users int     // open devices on it
}

// OpenDevice makes sure the primary context of ordinal (shared with any
// other library in the process that uses the runtime API) is retained and
// reads the device's properties.
func (d *driver) OpenDevice(ordinal int) (*gpu.Props, error) {
	if ordinal < 0 || ordinal >= d.devices {
		return nil, fmt.Errorf("cuda: %w: ordinal %d, the driver reports %d device(s)", gpu.ErrNoDevice, ordinal, d.devices)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dv := &device{}
	if r := gpu.Call(&d.own.deviceGet, uintptr(unsafe.Pointer(&dv.dev)), uintptr(ordinal)); r != success {
		return nil, d.error(&d.own.deviceGet, r)
	}
	pr := &d.primaries[ordinal]
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.ctx == 0 {
		if r := gpu.Call(&d.own.primaryCtxRetain, uintptr(unsafe.Pointer(&pr.ctx)), uintptr(dv.dev)); r != success {
			pr.ctx = 0
			return nil, d.error(&d.own.primaryCtxRetain, r)
		}
	}
	dv.ctx = pr.ctx
	p, err := d.properties(ordinal, dv)
	if err != nil {
		return nil, err
	}
	pr.users++
	return p, nil
}

// properties runs on a locked thread during OpenDevice.
func (d *driver) properties(ordinal int, dv *device) (*gpu.Props, error) {
	if r := gpu.Call(&d.calls.MakeCurrent, dv.ctx); r != success {
		return nil, d.error(&d.calls.MakeCurrent, r)
	}
	var err error
	attr := func(a, def int) int {
		var v int32
		r := gpu.Call(&d.own.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(dv.dev))
		switch {
		case r == errInvalidValue:
			return def // an attribute this driver does not know
		case r != success && err == nil:
			err = d.error(&d.own.deviceGetAttribute, r)
		}
		return int(v)
	}
	p := &gpu.Props{Ordinal: ordinal, CurrentArg: dv.ctx, DeviceArg: uintptr(dv.dev), Driver: dv}
	dv.ccMajor = attr(attrComputeCapMajor, 0)
	dv.ccMinor = attr(attrComputeCapMinor, 0)
	p.Units = attr(attrMultiprocessorCount, 1)
	p.ThreadsPerUnit = attr(attrMaxThreadsPerSM, 2048)
	p.MaxBlockDim = attr(attrMaxThreadsPerBlock, 1024)
	p.WarpSize = attr(attrWarpSize, 32)
	pools := attr(attrMemoryPoolsSupport, 0)
	if err != nil {
		return nil, err
	}
	p.MemPools = pools != 0 && d.calls.MemAllocAsync.Bound() && d.own.defaultMemPool.Bound() &&
		d.own.memPoolSetAttr.Bound() && d.own.memPoolTrimTo.Bound()
	if p.MemPools {
		// Keep freed memory for reuse (the default threshold, 0, returns
		// it at every synchronization, and the next allocation pays the
		// system again); CloseDevice trims what no allocation holds.
		if r := gpu.Call(&d.own.defaultMemPool, uintptr(unsafe.Pointer(&dv.pool)), uintptr(dv.dev)); r != success {
			return nil, d.error(&d.own.defaultMemPool, r)
		}
		threshold := new(uint64)
		*threshold = ^uint64(0)
		if r := gpu.Call(&d.own.memPoolSetAttr, dv.pool, memPoolAttrReleaseThreshold, uintptr(unsafe.Pointer(threshold))); r != success {
			return nil, d.error(&d.own.memPoolSetAttr, r)
		}
		p.Pool = dv.pool
	}
	p.Target = fmt.Sprintf("sm_%d%d", dv.ccMajor, dv.ccMinor)
	name := make([]byte, 256)
	if r := gpu.Call(&d.own.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(dv.dev)); r != success {
		return nil, d.error(&d.own.deviceGetName, r)
	}
	p.Name = gpu.GoString(&name[0])
	if r := gpu.Call(&d.own.deviceTotalMem, uintptr(unsafe.Pointer(&p.MemoryBytes)), uintptr(dv.dev)); r != success {
		return nil, d.error(&d.own.deviceTotalMem, r)
	}
	var least, greatest int32
	if r := gpu.Call(&d.own.ctxPriorityRange, uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest))); r != success {
		return nil, d.error(&d.own.ctxPriorityRange, r)
	}
	p.PriorityLeast, p.PriorityGreatest = int(least), int(greatest)
	// A launch whose function's context is not current fails with
	// CUDA_ERROR_INVALID_CONTEXT or an invalid handle; it never runs in
	// another context (TestLaunchWithoutCurrentContext checks).
	p.ContextChecked = true
	p.Describe = fmt.Sprintf("CUDA device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, driver CUDA %s",
		ordinal, p.Name, dv.ccMajor, dv.ccMinor, p.Units, float64(p.MemoryBytes)/(1<<30), versionString(d.version))
	if p.Info, err = d.info(ordinal, d.driverName()); err != nil {
		return nil, err
	}
	return p, nil
}

// CloseDevice ends one use of the primary context, which stays retained
// for the next OpenDevice. A lost context is not reset: NVIDIA documents
// that after a sticky error (an illegal address, a trap) only the end of the
// process restores the device, and on an H100 (driver 580) a
// cuDevicePrimaryCtxReset followed by a new retain still returned
// CUDA_ERROR_ILLEGAL_ADDRESS. Later Opens then fail with the same error,
// which wraps backend.ErrDeviceLost.
func (d *driver) CloseDevice(p *gpu.Props, lost bool) error {
	pr := &d.primaries[p.Ordinal]
	pr.mu.Lock()
	pr.users--
	pr.mu.Unlock()
	// Give the pool's free memory back (what other Programs hold stays).
	if dv := p.Driver.(*device); dv.pool != 0 && !lost {
		if r := gpu.Call(&d.own.memPoolTrimTo, dv.pool, 0); r != success {
			return d.error(&d.own.memPoolTrimTo, r)
		}
	}
	return nil
}

// Build writes the PTX of plan for the device's compute capability and the
// driver's PTX ISA, or, with QD_CUDA_CODEGEN=csrc, has NVRTC compile the C
// source of plan to PTX (package nvrtc).
func (d *driver) Build(plan *lower.Plan, p *gpu.Props, opts backend.CompileOptions) (*gpu.Image, error) {
	dv := p.Driver.(*device)
	if gen, err := nvrtc.Codegen(); err != nil || gen == "csrc" {
		if err != nil {
			return nil, err
		}
		return nvrtc.Build(plan, dv.ccMajor*10+dv.ccMinor, d.version, opts)
	}
	target, err := ptx.TargetFor(dv.ccMajor*10+dv.ccMinor, d.version)
	if err != nil {
		return nil, err
	}
	text, layout, err := ptx.Generate(plan, target, ptx.Options{FastMath: opts.FastMath, Debug: opts.Debug})
	if err != nil {
		return nil, err
	}
	return &gpu.Image{Layout: layout, Code: gpu.CString(text)}, nil
}

// CUjit_option values (cuda.h).
const (
	jitInfoLogBuffer      = 3
	jitInfoLogBufferSize  = 4
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

// jitBuffers holds what cuModuleLoadDataEx reads and writes through
// pointers. It is pinned for the call: the option values array carries the
// log buffers' addresses as plain integers, which the collector does not
// trace, so the object must be kept alive and unmoved explicitly.
type jitBuffers struct {
	opts    [4]int32
	vals    [4]uintptr
	errLog  [16 << 10]byte
	infoLog [8 << 10]byte
}

// Load JIT-compiles the PTX text of img (NUL-terminated: the driver finds
// its end by the NUL) with cuModuleLoadDataEx. A failure carries the JIT's
// error log in the DriverError's Log.
func (d *driver) Load(img *gpu.Image) (uintptr, error) {
	if n := len(img.Code); n == 0 || img.Code[n-1] != 0 {
		return 0, fmt.Errorf("cuda: PTX image is not NUL-terminated")
	}
	j := new(jitBuffers)
	var pin runtime.Pinner
	pin.Pin(j)
	defer pin.Unpin()
	j.opts = [4]int32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize}
	j.vals = [4]uintptr{
		uintptr(unsafe.Pointer(&j.errLog[0])), uintptr(len(j.errLog)),
		uintptr(unsafe.Pointer(&j.infoLog[0])), uintptr(len(j.infoLog)),
	}
	var h uintptr
	r := gpu.Call(&d.own.moduleLoadDataEx,
		uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img.Code[0])),
		uintptr(len(j.opts)), uintptr(unsafe.Pointer(&j.opts[0])), uintptr(unsafe.Pointer(&j.vals[0])))
	runtime.KeepAlive(img)
	if r != success {
		e := d.error(&d.own.moduleLoadDataEx, r)
		e.Log = strings.TrimSpace(gpu.CBytes(j.errLog[:]))
		return 0, e
	}
	return h, nil
}
