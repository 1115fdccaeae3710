package hip

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/codegen/csrc"
	"github.com/quadrants-go/qd/internal/lower"
)

// driver is the HIP runtime with at least one device: the GPU runtime's
// Driver for AMD GPUs.
type driver struct {
	*library
	devices int // hipGetDeviceCount
}

var _ gpu.Driver = (*driver)(nil)

// hipCodes are the codes and flags the runtime tests: hipErrorNotReady,
// hipErrorInvalidValue, hipStreamNonBlocking, hipEventDisableTiming,
// hipHostMallocPortable, hipErrorPeerAccessAlreadyEnabled,
// hipStreamCaptureModeRelaxed.
var hipCodes = gpu.Codes{NotReady: hipErrNotReady, InvalidValue: hipErrInvalidValue, StreamNonBlocking: 1, EventDisableTiming: 2,
	HostAllocPortable: 1, PeerAccessAlreadyEnabled: hipErrPeerAccessAlreadyEnabled, CaptureRelaxed: 2}

// EventRecordExternal stays 0, so traced captures are off on HIP (a
// replay is one span, as before): ROCm honours hipEventRecordExternal in
// a capture only from 7.0, and timing events recorded by graph nodes is
// an open ROCm issue; none of it has run here.

// Arch is the name Auto and WithArch know the backend by.
func (d *driver) Arch() string { return "amdgpu" }

// Calls is the runtime's table, bound by callNames.
func (d *driver) Calls() *gpu.Calls { return &d.calls }

// Codes gives hipCodes.
func (d *driver) Codes() gpu.Codes { return hipCodes }

// Classify reads the class from the codes table.
func (d *driver) Classify(code int32) gpu.Class { return classify(code) }

// ErrorText asks the runtime, falling back on the codes table.
func (d *driver) ErrorText(code int32) (name, msg string) { return d.errorText(code) }

// Where hipDeviceProp_t keeps gcnArchName ("gfx90a:sramecc+:xnack-"): the
// layout changed in ROCm 6, whose runtime exports the new one as
// hipGetDevicePropertiesR0600 beside the old one (offsets from compiling
// the headers of ROCm 5.2 and 6.3 with offsetof).
const (
	archOffsetR0000 = 396
	archOffsetR0600 = 1160
	propsBufferSize = 8 << 10 // larger than either struct (792 and 1472 bytes)
)

// fail is the DriverError of result r of fn.
func (l *library) fail(fn *gpu.Fn, r int32) *gpu.DriverError {
	e := &gpu.DriverError{Arch: "amdgpu", Op: fn.Name, Code: r, Class: classify(r)}
	e.Name, e.Msg = l.errorText(r)
	return e
}

// query reads the properties of device ordinal; it needs no current
// device, so listing devices changes nothing.
func (d *driver) query(ordinal int) (*gpu.Props, error) {
	if ordinal < 0 || ordinal >= d.devices {
		return nil, fmt.Errorf("amdgpu: %w: ordinal %d, the HIP runtime reports %d device(s)", gpu.ErrNoDevice, ordinal, d.devices)
	}
	p := &gpu.Props{Ordinal: ordinal, CurrentArg: uintptr(ordinal), DeviceArg: uintptr(ordinal)}
	pools := 0
	// hipDeviceAttribute_t values are the same in ROCm 5.2 and 6.3; an
	// attribute the runtime does not know (hipErrorInvalidValue) takes its
	// default.
	for _, a := range []struct {
		id       uintptr
		fallback int
		into     *int
	}{
		{63, 1, &p.Units},             // MultiprocessorCount (compute units)
		{57, 2048, &p.ThreadsPerUnit}, // MaxThreadsPerMultiProcessor
		{56, 1024, &p.MaxBlockDim},    // MaxThreadsPerBlock
		{87, 64, &p.WarpSize},         // WarpSize
		{88, 0, &pools},               // MemoryPoolsSupported
	} {
		var v int32
		switch r := gpu.Call(&d.own.attribute, uintptr(unsafe.Pointer(&v)), a.id, uintptr(ordinal)); r {
		case hipSuccess:
			*a.into = int(v)
		case hipErrInvalidValue:
			*a.into = a.fallback
		default:
			return nil, d.fail(&d.own.attribute, r)
		}
	}
	p.MemPools = pools != 0 && d.calls.MemAllocAsync.Bound()
	if p.MemPools && d.own.defaultMemPool.Bound() {
		if r := gpu.Call(&d.own.defaultMemPool, uintptr(unsafe.Pointer(&p.Pool)), uintptr(ordinal)); r != hipSuccess {
			return nil, d.fail(&d.own.defaultMemPool, r)
		}
	}
	name := make([]byte, 256)
	if r := gpu.Call(&d.own.name, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(ordinal)); r != hipSuccess {
		return nil, d.fail(&d.own.name, r)
	}
	p.Name = gpu.CBytes(name)
	if r := gpu.Call(&d.own.totalMem, uintptr(unsafe.Pointer(&p.MemoryBytes)), uintptr(ordinal)); r != hipSuccess {
		return nil, d.fail(&d.own.totalMem, r)
	}
	var err error
	if p.Target, err = d.arch(ordinal); err != nil {
		return nil, err
	}
	p.Describe = fmt.Sprintf("AMD GPU %d: %s (%s), %d CUs, wave %d, %.1f GiB, HIP %s",
		ordinal, p.Name, p.Target, p.Units, p.WarpSize, float64(p.MemoryBytes)/(1<<30), versionString(d.version))
	p.Info = backend.DeviceInfo{
		Ordinal: ordinal, Name: p.Name, Target: p.Target, Cores: p.Units,
		MemoryBytes: p.MemoryBytes, Driver: "HIP " + versionString(d.version),
	}
	for other := range d.devices {
		if other == ordinal {
			continue
		}
		var can int32
		if r := gpu.Call(&d.calls.CanAccessPeer, uintptr(unsafe.Pointer(&can)), uintptr(ordinal), uintptr(other)); r != hipSuccess {
			return nil, d.fail(&d.calls.CanAccessPeer, r)
		}
		if can != 0 {
			p.Info.Peers = append(p.Info.Peers, other)
		}
	}
	return p, nil
}

// arch reads gcnArchName from the device's properties, from the layout of
// whichever hipGetDeviceProperties the runtime has.
func (d *driver) arch(ordinal int) (string, error) {
	buf := make([]byte, propsBufferSize)
	fn, off := &d.own.propsR0000, archOffsetR0000
	if d.own.propsR0600.Bound() {
		fn, off = &d.own.propsR0600, archOffsetR0600
	}
	if r := gpu.Call(fn, uintptr(unsafe.Pointer(&buf[0])), uintptr(ordinal)); r != hipSuccess {
		return "", d.fail(fn, r)
	}
	arch := gpu.CBytes(buf[off : off+256])
	if !bytes.HasPrefix([]byte(arch), []byte("gfx")) {
		return "", fmt.Errorf("amdgpu: device %d: %s gives no gfx target name at offset %d (%q): a hipDeviceProp_t layout qd does not know", ordinal, fn.Name, off, arch)
	}
	return arch, nil
}

// OpenDevice reads the device's properties and the stream priorities it
// takes. HIP has no context to retain: the device is made current per
// thread with hipSetDevice (Props.CurrentArg is the ordinal).
func (d *driver) OpenDevice(ordinal int) (*gpu.Props, error) {
	p, err := d.query(ordinal)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := gpu.Call(&d.calls.MakeCurrent, uintptr(ordinal)); r != hipSuccess {
		return nil, d.fail(&d.calls.MakeCurrent, r)
	}
	var least, greatest int32
	if r := gpu.Call(&d.own.priorities, uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest))); r != hipSuccess {
		return nil, d.fail(&d.own.priorities, r)
	}
	p.PriorityLeast, p.PriorityGreatest = int(least), int(greatest)
	return p, nil
}

// CloseDevice has nothing to release: HIP keeps no context per user.
func (d *driver) CloseDevice(*gpu.Props, bool) error { return nil }

// Build writes the HIP source of plan for the device's target and compiles
// it with hiprtc (in a child process, or from the disk cache). The C source
// keeps Go's semantics: backend.CompileOptions.FastMath is a permission
// this generator does not use; Debug adds index checks.
func (d *driver) Build(plan *lower.Plan, p *gpu.Props, opts backend.CompileOptions) (*gpu.Image, error) {
	t, err := csrc.TargetFor(p.Target)
	if err != nil {
		return nil, err
	}
	if t.WaveSize != p.WarpSize {
		return nil, fmt.Errorf("amdgpu: %s runs wavefronts of %d, qd's target table says %d", p.Target, p.WarpSize, t.WaveSize)
	}
	src, layout, err := csrc.Generate(plan, t, csrc.Options{Debug: opts.Debug})
	if err != nil {
		return nil, err
	}
	co, err := d.compile(src, layout.Name, p.Target)
	if err != nil {
		return nil, err
	}
	return &gpu.Image{Layout: layout, Code: co}, nil
}

// Load loads a code object with hipModuleLoadData.
func (d *driver) Load(img *gpu.Image) (uintptr, error) {
	if len(img.Code) == 0 {
		return 0, fmt.Errorf("amdgpu: empty code object")
	}
	var h uintptr
	r := gpu.Call(&d.own.moduleLoad, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img.Code[0])))
	runtime.KeepAlive(img)
	if r != hipSuccess {
		return 0, d.fail(&d.own.moduleLoad, r)
	}
	return h, nil
}

// loadDriver opens the library and initialises HIP, once per process; the
// error, if any, is kept.
var loadDriver = sync.OnceValues(func() (*driver, error) {
	l, err := openLibrary()
	if err != nil {
		return nil, err
	}
	if r := gpu.Call(&l.own.init, 0); r != hipSuccess {
		return nil, noDevice(l.fail(&l.own.init, r))
	}
	var n int32
	if r := gpu.Call(&l.own.deviceCount, uintptr(unsafe.Pointer(&n))); r != hipSuccess {
		return nil, noDevice(l.fail(&l.own.deviceCount, r))
	}
	if n <= 0 {
		return nil, fmt.Errorf("amdgpu: %w: the HIP runtime %s reports no AMD GPU", gpu.ErrNoDevice, versionString(l.version))
	}
	return &driver{library: l, devices: int(n)}, nil
})

// noDevice explains the failures of hipInit and hipGetDeviceCount on a
// machine without an AMD GPU (ROCm 5.2 answers 101 and 100 there).
func noDevice(e *gpu.DriverError) error {
	if e.Class == gpu.NoDevice {
		return fmt.Errorf("%w: no AMD GPU found (%w)", gpu.ErrNoDevice, e)
	}
	return e
}
