package cuda

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// libNames are tried in order: what the driver installs on Linux
// (libcuda.so.1; plain libcuda.so is a development symlink that is often
// absent) and on Windows (nvcuda.dll).
func libNames() []string {
	if runtime.GOOS == "windows" {
		return []string{"nvcuda.dll"}
	}
	return []string{"libcuda.so.1", "libcuda.so"}
}

// minDriverVersion is the oldest driver (cuDriverGetVersion) qd accepts:
// CUDA 11.0. Everything bound as required exists there; memory pools
// (cuMemAllocAsync, 11.2) are optional.
const minDriverVersion = 11000

// maxConnectionsEnv is read by the driver once, at cuInit: with its default
// (8) more than 8 streams share hardware queues and serialize falsely.
const maxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS"

// own holds the CUDA functions outside the runtime's table: initialisation,
// device queries, the primary context, error names and the JIT loader.
type own struct {
	getErrorName       gpu.Fn
	getErrorString     gpu.Fn
	init               gpu.Fn
	driverVersion      gpu.Fn
	deviceGet          gpu.Fn
	deviceGetCount     gpu.Fn
	deviceGetName      gpu.Fn
	deviceGetAttribute gpu.Fn
	deviceTotalMem     gpu.Fn
	primaryCtxRetain   gpu.Fn
	primaryCtxRelease  gpu.Fn
	ctxPriorityRange   gpu.Fn
	moduleLoadDataEx   gpu.Fn
	defaultMemPool     gpu.Fn // optional: memory pools (driver ≥ 11.2)
	memPoolSetAttr     gpu.Fn // optional
	memPoolTrimTo      gpu.Fn // optional
}

// bindings lists every function the backend binds, each exactly once: the
// versioned export it is written against (go-tech.md §4: the unversioned
// exports are legacy ABIs, not aliases), then any fallback with the same
// signature.
func bindings(c *gpu.Calls, o *own) []gpu.Binding {
	req := func(f *gpu.Fn, names ...string) gpu.Binding { return gpu.Binding{Fn: f, Names: names} }
	opt := func(f *gpu.Fn, names ...string) gpu.Binding {
		return gpu.Binding{Fn: f, Names: names, Optional: true}
	}
	return []gpu.Binding{
		req(&o.getErrorName, "cuGetErrorName"),
		req(&o.getErrorString, "cuGetErrorString"),
		req(&o.init, "cuInit"),
		req(&o.driverVersion, "cuDriverGetVersion"),
		req(&o.deviceGet, "cuDeviceGet"),
		req(&o.deviceGetCount, "cuDeviceGetCount"),
		req(&o.deviceGetName, "cuDeviceGetName"),
		req(&o.deviceGetAttribute, "cuDeviceGetAttribute"),
		req(&o.deviceTotalMem, "cuDeviceTotalMem_v2"),
		req(&o.primaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		req(&o.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		req(&o.ctxPriorityRange, "cuCtxGetStreamPriorityRange"),
		req(&o.moduleLoadDataEx, "cuModuleLoadDataEx"),

		req(&c.MakeCurrent, "cuCtxSetCurrent"),
		req(&c.Synchronize, "cuCtxSynchronize"),
		req(&c.StreamCreate, "cuStreamCreateWithPriority"),
		req(&c.StreamDestroy, "cuStreamDestroy_v2"),
		req(&c.StreamSynchronize, "cuStreamSynchronize"),
		req(&c.StreamQuery, "cuStreamQuery"),
		req(&c.StreamWaitEvent, "cuStreamWaitEvent"),
		req(&c.EventCreate, "cuEventCreate"),
		req(&c.EventDestroy, "cuEventDestroy_v2"),
		req(&c.EventRecord, "cuEventRecord"),
		req(&c.EventQuery, "cuEventQuery"),
		req(&c.EventSynchronize, "cuEventSynchronize"),
		// The CUDA 13 header maps cuEventElapsedTime to _v2; older drivers
		// export only the original, with the same signature.
		req(&c.EventElapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		req(&c.MemAlloc, "cuMemAlloc_v2"),
		req(&c.MemFree, "cuMemFree_v2"),
		opt(&c.MemAllocAsync, "cuMemAllocAsync"),
		opt(&c.MemFreeAsync, "cuMemFreeAsync"),
		req(&c.CopyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		req(&c.CopyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		req(&c.CopyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		req(&c.MemsetD8Async, "cuMemsetD8Async"),
		req(&c.MemsetD16Async, "cuMemsetD16Async"),
		req(&c.MemsetD32Async, "cuMemsetD32Async"),
		req(&c.HostAlloc, "cuMemHostAlloc"),
		req(&c.HostFree, "cuMemFreeHost"),
		opt(&o.defaultMemPool, "cuDeviceGetDefaultMemPool"),
		opt(&o.memPoolSetAttr, "cuMemPoolSetAttribute"),
		opt(&o.memPoolTrimTo, "cuMemPoolTrimTo"),
		req(&c.CanAccessPeer, "cuDeviceCanAccessPeer"),
		req(&c.EnablePeerAccess, "cuCtxEnablePeerAccess"),
		req(&c.CopyPeerAsync, "cuMemcpyPeerAsync"),
		opt(&c.MemPoolSetAccess, "cuMemPoolSetAccess"),
		req(&c.ModuleGetFunction, "cuModuleGetFunction"),
		opt(&c.FuncLoad, "cuFuncLoad"), // CUDA 12.4
		req(&c.ModuleUnload, "cuModuleUnload"),
		req(&c.LaunchKernel, "cuLaunchKernel"),
		opt(&c.LaunchKernelEx, "cuLaunchKernelEx"), // CUDA 12.0
		// Graphs (CUDA 11.4: cuGraphInstantiateWithFlags); absent, a
		// Capture fails with ErrUnsupported.
		opt(&c.StreamBeginCapture, "cuStreamBeginCapture_v2"),
		opt(&c.StreamEndCapture, "cuStreamEndCapture"),
		opt(&c.GraphInstantiate, "cuGraphInstantiateWithFlags"),
		opt(&c.GraphLaunch, "cuGraphLaunch"),
		opt(&c.GraphExecDestroy, "cuGraphExecDestroy"),
		opt(&c.GraphDestroy, "cuGraphDestroy"),
		// CUDA 12's form, then CUDA 11's: the runtime's call suits both
		// (gpu.Calls.GraphExecUpdate).
		opt(&c.GraphExecUpdate, "cuGraphExecUpdate_v2", "cuGraphExecUpdate"),
		// Traced graphs (CUDA 11.3).
		opt(&c.EventRecordWithFlags, "cuEventRecordWithFlags"),
		opt(&c.StreamGetCaptureInfo, "cuStreamGetCaptureInfo_v2"),
		opt(&c.GraphExecEventRecordNodeSetEvent, "cuGraphExecEventRecordNodeSetEvent"),
	}
}

var (
	loadOnce  sync.Once
	loaded    *driver
	loadError error
)

// load opens libcuda, binds its functions and runs cuInit, once per
// process. The error, if any, is kept: a process without a driver does not
// retry on every call.
func load() (*driver, error) {
	loadOnce.Do(func() { loaded, loadError = open() })
	return loaded, loadError
}

func open() (*driver, error) {
	if runtime.GOOS == "darwin" {
		return nil, fmt.Errorf("%w: NVIDIA has no CUDA driver for macOS", gpu.ErrNoDriver)
	}
	lib, err := gpu.OpenLibrary(libNames()...)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	d := &driver{lib: lib}
	if err := gpu.Bind(lib, bindings(&d.calls, &d.own)); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if !d.calls.MemAllocAsync.Bound() || !d.calls.MemFreeAsync.Bound() {
		d.calls.MemAllocAsync.Addr, d.calls.MemFreeAsync.Addr = 0, 0 // both or neither
	}
	if _, set := os.LookupEnv(maxConnectionsEnv); !set {
		// os.Setenv reaches the C environment libcuda reads (purego's
		// fakecgo provides _cgo_setenv), as long as cuInit has not run.
		os.Setenv(maxConnectionsEnv, "32")
	}
	if r := gpu.Call(&d.own.init, 0); r != success {
		return nil, initError(d.error(&d.own.init, r))
	}
	var v int32
	if r := gpu.Call(&d.own.driverVersion, uintptr(unsafe.Pointer(&v))); r != success {
		return nil, d.error(&d.own.driverVersion, r)
	}
	d.version = int(v)
	if d.version < minDriverVersion {
		return nil, fmt.Errorf("cuda: %w: driver supports CUDA %s, qd needs %s or newer",
			gpu.ErrDriverTooOld, versionString(d.version), versionString(minDriverVersion))
	}
	var n int32
	if r := gpu.Call(&d.own.deviceGetCount, uintptr(unsafe.Pointer(&n))); r != success {
		return nil, d.error(&d.own.deviceGetCount, r)
	}
	if n <= 0 {
		return nil, fmt.Errorf("cuda: %w: the driver reports no device", gpu.ErrNoDevice)
	}
	d.devices = int(n)
	d.primaries = make([]primary, n)
	return d, nil
}

// initError explains the usual cuInit failures.
func initError(e *gpu.DriverError) error {
	switch e.Code {
	case errNoDevice:
		return fmt.Errorf("%w: cuInit found no device (%w)", gpu.ErrNoDevice, e)
	case errStubLibrary:
		return fmt.Errorf("%w: libcuda is the toolkit's stub library, not a driver (%w)", gpu.ErrNoDriver, e)
	}
	return e
}

// versionString formats a cuDriverGetVersion number: 12040 → "12.4".
func versionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// Available reports whether CUDA can be used: nil, or an error that says
// why not (wrapping gpu.ErrNoDriver, gpu.ErrNoDevice or gpu.ErrDriverTooOld).
func Available() error {
	_, err := load()
	return err
}

// Driver returns the CUDA driver for the GPU runtime, or why there is none.
func Driver() (gpu.Driver, error) {
	d, err := load()
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Open opens CUDA device ordinal on the GPU runtime.
func Open(ordinal int) (*gpu.Device, error) {
	d, err := load()
	if err != nil {
		return nil, err
	}
	return gpu.Open(d, ordinal)
}
