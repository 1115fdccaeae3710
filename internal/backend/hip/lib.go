package hip

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/rtc"
)

// libNames are the HIP runtime's names: unversioned (a development
// symlink), then the sonames of ROCm 7, 6 and 5; on Windows the HIP SDK's
// DLLs.
func libNames() []string {
	if runtime.GOOS == "windows" {
		return []string{"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"}
	}
	return []string{"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}
}

// rtcNames are hiprtc's own library: ROCm 6 split it out of libamdhip64,
// ROCm 7 removed it from there. ROCm 5 has only libamdhip64's exports.
func rtcNames() []string {
	if runtime.GOOS == "windows" {
		return []string{"hiprtc0700.dll", "hiprtc0605.dll", "hiprtc0604.dll", "hiprtc0603.dll", "hiprtc0602.dll", "hiprtc0601.dll", "hiprtc.dll"}
	}
	return []string{"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6"}
}

// own holds the HIP functions outside the runtime's table. The tag is the
// exported name each is bound by; "opt" marks those a runtime may lack.
type own struct {
	init           gpu.Fn `hip:"hipInit"`
	deviceCount    gpu.Fn `hip:"hipGetDeviceCount"`
	attribute      gpu.Fn `hip:"hipDeviceGetAttribute"`
	name           gpu.Fn `hip:"hipDeviceGetName"`
	totalMem       gpu.Fn `hip:"hipDeviceTotalMem"`
	priorities     gpu.Fn `hip:"hipDeviceGetStreamPriorityRange"`
	propsR0600     gpu.Fn `hip:"hipGetDevicePropertiesR0600,opt"`
	propsR0000     gpu.Fn `hip:"hipGetDeviceProperties"`
	runtimeVersion gpu.Fn `hip:"hipRuntimeGetVersion"`
	moduleLoad     gpu.Fn `hip:"hipModuleLoadData"`
	defaultMemPool gpu.Fn `hip:"hipDeviceGetDefaultMemPool,opt"` // with the pools (ROCm 5.1 and later)
	errName        gpu.Fn `hip:"hipGetErrorName"`
	errString      gpu.Fn `hip:"hipGetErrorString"`
}

// callNames bind the runtime's table (package gpu) to HIP's module API,
// which matches CUDA's driver API call for call.
var callNames = map[string]string{
	"MakeCurrent":       "hipSetDevice", // HIP's current device is per thread, like a CUDA context
	"Synchronize":       "hipDeviceSynchronize",
	"StreamCreate":      "hipStreamCreateWithPriority",
	"StreamDestroy":     "hipStreamDestroy",
	"StreamSynchronize": "hipStreamSynchronize",
	"StreamQuery":       "hipStreamQuery",
	"StreamWaitEvent":   "hipStreamWaitEvent",
	"EventCreate":       "hipEventCreateWithFlags",
	"EventDestroy":      "hipEventDestroy",
	"EventRecord":       "hipEventRecord",
	"EventQuery":        "hipEventQuery",
	"EventSynchronize":  "hipEventSynchronize",
	"EventElapsed":      "hipEventElapsedTime",
	"MemAlloc":          "hipMalloc",
	"MemFree":           "hipFree",
	"MemAllocAsync":     "hipMallocAsync,opt", // ROCm 5.3 and later
	"MemFreeAsync":      "hipFreeAsync,opt",
	"CopyHtoDAsync":     "hipMemcpyHtoDAsync",
	"CopyDtoHAsync":     "hipMemcpyDtoHAsync",
	"CopyDtoDAsync":     "hipMemcpyDtoDAsync",
	"MemsetD8Async":     "hipMemsetD8Async",
	"MemsetD16Async":    "hipMemsetD16Async",
	"MemsetD32Async":    "hipMemsetD32Async",
	"HostAlloc":         "hipHostMalloc", // (ptr**, bytes, flags): hipHostAlloc is deprecated
	"HostFree":          "hipHostFree",
	"CanAccessPeer":     "hipDeviceCanAccessPeer",
	"EnablePeerAccess":  "hipDeviceEnablePeerAccess", // the current device gains access to the peer's memory
	"CopyPeerAsync":     "hipMemcpyPeerAsync",        // (dst, dstDevice, src, srcDevice, bytes, stream)
	"MemPoolSetAccess":  "hipMemPoolSetAccess,opt",
	"ModuleGetFunction": "hipModuleGetFunction",
	"ModuleUnload":      "hipModuleUnload",
	"LaunchKernel":      "hipModuleLaunchKernel",
	// ROCm 6.2; unused, as HIP has no programmatic dependent launch
	// (Codes.ProgrammaticLaunch is 0).
	"LaunchKernelEx": "hipDrvLaunchKernelEx,opt",
	// HIP has no call that finishes loading a function; "-" leaves the
	// optional entry unbound.
	"FuncLoad": "-",
	// Graphs: optional, so that a runtime without them still loads.
	"StreamBeginCapture": "hipStreamBeginCapture,opt",
	"StreamEndCapture":   "hipStreamEndCapture,opt",
	"GraphInstantiate":   "hipGraphInstantiateWithFlags,opt",
	"GraphLaunch":        "hipGraphLaunch,opt",
	"GraphExecDestroy":   "hipGraphExecDestroy,opt",
	"GraphDestroy":       "hipGraphDestroy,opt",
	"GraphExecUpdate":    "hipGraphExecUpdate,opt", // (exec, graph, errorNode*, result*)
	// Traced graphs.
	"EventRecordWithFlags":             "hipEventRecordWithFlags,opt",
	"StreamGetCaptureInfo":             "hipStreamGetCaptureInfo_v2,opt",
	"GraphExecEventRecordNodeSetEvent": "hipGraphExecEventRecordNodeSetEvent,opt",
}

// unbound is the callNames entry of an optional function HIP lacks.
const unbound = "-"

// bindings lists every function the backend binds from libamdhip64, each
// once: the fields of own by their tags, the runtime's table by callNames
// (but for those HIP lacks).
func bindings(c *gpu.Calls, o *own) []gpu.Binding {
	var bs []gpu.Binding
	add := func(f *gpu.Fn, spec string) {
		if spec == unbound {
			return
		}
		name, opt := strings.CutSuffix(spec, ",opt")
		bs = append(bs, gpu.Binding{Fn: f, Names: []string{name}, Optional: opt})
	}
	ov := reflect.ValueOf(o).Elem()
	for i := range ov.NumField() {
		add((*gpu.Fn)(unsafe.Pointer(ov.Field(i).UnsafeAddr())), ov.Type().Field(i).Tag.Get("hip"))
	}
	cv := reflect.ValueOf(c).Elem()
	for i := range cv.NumField() {
		add(cv.Field(i).Addr().Interface().(*gpu.Fn), callNames[cv.Type().Field(i).Name])
	}
	return bs
}

// library is libamdhip64 (and hiprtc) opened and bound. Opening needs no
// device: the compiler works on any machine with the libraries, and the
// tests run it without an AMD GPU.
type library struct {
	lib     *gpu.Library
	rtcLib  *gpu.Library // where hiprtc was found (libhiprtc or libamdhip64)
	calls   gpu.Calls
	own     own
	rtc     rtc.Compiler
	version int // hipRuntimeGetVersion, e.g. 50221153 for 5.2.21153

	// childSwitch is the environment entry that switches a compiler child
	// ("": childEnv=1). Tests give one that makes the child crash, to check
	// that a child dying without an answer becomes an error.
	childSwitch string
}

var openLibrary = sync.OnceValues(func() (*library, error) {
	lib, err := gpu.OpenLibrary(libNames()...)
	if err != nil {
		return nil, fmt.Errorf("amdgpu: %w", err)
	}
	l := &library{lib: lib, rtc: rtc.Compiler{Arch: "amdgpu"}}
	if err := gpu.Bind(lib, bindings(&l.calls, &l.own)); err != nil {
		return nil, fmt.Errorf("amdgpu: %w", err)
	}
	if !l.calls.MemAllocAsync.Bound() || !l.calls.MemFreeAsync.Bound() {
		l.calls.MemAllocAsync.Addr, l.calls.MemFreeAsync.Addr = 0, 0 // both or neither
	}
	var v int32
	if r := gpu.Call(&l.own.runtimeVersion, uintptr(unsafe.Pointer(&v))); r == 0 {
		l.version = int(v)
	}
	if l.rtcLib, err = bindRTC(lib, &l.rtc.Calls); err != nil {
		return nil, err
	}
	return l, nil
})

// bindRTC binds hiprtc from its own library, else from libamdhip64.
func bindRTC(hip *gpu.Library, c *rtc.Calls) (*gpu.Library, error) {
	bs := c.Bindings("hiprtc", "GetCodeSize", "GetCode")
	if lib, err := gpu.OpenLibrary(rtcNames()...); err == nil {
		if err := gpu.Bind(lib, bs); err == nil {
			return lib, nil
		}
	}
	if err := gpu.Bind(hip, bs); err != nil {
		return nil, fmt.Errorf("amdgpu: hiprtc found neither in %v nor in %s: %w", rtcNames(), hip.Name, err)
	}
	return hip, nil
}

// versionString formats hipRuntimeGetVersion: 50221153 → "5.2.21153".
func versionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000)
}
