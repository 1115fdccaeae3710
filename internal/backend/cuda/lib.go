package cuda

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libNames are tried in order. libcuda.so.1 is what the driver installs;
// plain libcuda.so is a development symlink that is often absent.
var libNames = []string{"libcuda.so.1", "libcuda.so"}

// minDriverVersion is the oldest driver (cuDriverGetVersion) Open accepts:
// CUDA 11.0. Everything bound as required exists there; memory pools
// (cuMemAllocAsync, 11.2) are optional.
const minDriverVersion = 11000

// maxConnectionsEnv is read by the driver once, at cuInit: with its default
// (8) more than 8 streams share hardware queues and serialize falsely.
const maxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS"

// symbols holds the address of every bound driver function. Each field is
// listed exactly once in symbolTable (a test checks this by reflection).
type symbols struct {
	getErrorName   uintptr
	getErrorString uintptr
	init           uintptr
	driverVersion  uintptr

	deviceGet          uintptr
	deviceGetCount     uintptr
	deviceGetName      uintptr
	deviceGetAttribute uintptr
	deviceTotalMem     uintptr

	primaryCtxRetain        uintptr
	primaryCtxRelease       uintptr
	ctxSetCurrent           uintptr
	ctxGetCurrent           uintptr
	ctxSynchronize          uintptr
	ctxGetStreamPriorityRng uintptr

	streamCreateWithPriority uintptr
	streamDestroy            uintptr
	streamSynchronize        uintptr
	streamQuery              uintptr
	streamWaitEvent          uintptr

	eventCreate      uintptr
	eventDestroy     uintptr
	eventRecord      uintptr
	eventQuery       uintptr
	eventSynchronize uintptr
	eventElapsedTime uintptr

	memAlloc          uintptr
	memFree           uintptr
	memAllocAsync     uintptr // optional: memory pools (driver ≥ 11.2)
	memFreeAsync      uintptr // optional, bound together with memAllocAsync
	memcpyHtoDAsync   uintptr
	memcpyDtoHAsync   uintptr
	memcpyDtoDAsync   uintptr
	memsetD8Async     uintptr
	moduleLoadDataEx  uintptr
	moduleGetFunction uintptr
	moduleUnload      uintptr
	launchKernel      uintptr
}

// symbol binds one field of symbols. names are tried in order: the first is
// the ABI this package is written against (the versioned export of
// go-tech.md §4); a later one is a fallback with the same signature.
type symbol struct {
	names    []string
	optional bool
	addr     *uintptr
}

func symbolTable(s *symbols) []symbol {
	req := func(p *uintptr, names ...string) symbol { return symbol{names: names, addr: p} }
	opt := func(p *uintptr, names ...string) symbol { return symbol{names: names, optional: true, addr: p} }
	return []symbol{
		req(&s.getErrorName, "cuGetErrorName"),
		req(&s.getErrorString, "cuGetErrorString"),
		req(&s.init, "cuInit"),
		req(&s.driverVersion, "cuDriverGetVersion"),

		req(&s.deviceGet, "cuDeviceGet"),
		req(&s.deviceGetCount, "cuDeviceGetCount"),
		req(&s.deviceGetName, "cuDeviceGetName"),
		req(&s.deviceGetAttribute, "cuDeviceGetAttribute"),
		req(&s.deviceTotalMem, "cuDeviceTotalMem_v2"),

		req(&s.primaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		req(&s.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		req(&s.ctxSetCurrent, "cuCtxSetCurrent"),
		req(&s.ctxGetCurrent, "cuCtxGetCurrent"),
		req(&s.ctxSynchronize, "cuCtxSynchronize"),
		req(&s.ctxGetStreamPriorityRng, "cuCtxGetStreamPriorityRange"),

		req(&s.streamCreateWithPriority, "cuStreamCreateWithPriority"),
		req(&s.streamDestroy, "cuStreamDestroy_v2"),
		req(&s.streamSynchronize, "cuStreamSynchronize"),
		req(&s.streamQuery, "cuStreamQuery"),
		req(&s.streamWaitEvent, "cuStreamWaitEvent"),

		req(&s.eventCreate, "cuEventCreate"),
		req(&s.eventDestroy, "cuEventDestroy_v2"),
		req(&s.eventRecord, "cuEventRecord"),
		req(&s.eventQuery, "cuEventQuery"),
		req(&s.eventSynchronize, "cuEventSynchronize"),
		// The CUDA 13 header maps cuEventElapsedTime to _v2; older drivers
		// export only the original, with the same signature.
		req(&s.eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),

		req(&s.memAlloc, "cuMemAlloc_v2"),
		req(&s.memFree, "cuMemFree_v2"),
		opt(&s.memAllocAsync, "cuMemAllocAsync"),
		opt(&s.memFreeAsync, "cuMemFreeAsync"),
		req(&s.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		req(&s.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		req(&s.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		req(&s.memsetD8Async, "cuMemsetD8Async"),

		req(&s.moduleLoadDataEx, "cuModuleLoadDataEx"),
		req(&s.moduleGetFunction, "cuModuleGetFunction"),
		req(&s.moduleUnload, "cuModuleUnload"),
		req(&s.launchKernel, "cuLaunchKernel"),
	}
}

// driver is the loaded library: its symbols and the result of cuInit.
type driver struct {
	lib     uintptr // dlopen handle (tests resolve extra symbols with it)
	sym     symbols
	version int // cuDriverGetVersion, e.g. 13000
	devices int // cuDeviceGetCount
}

var (
	loadOnce  sync.Once
	loaded    *driver
	loadError error
)

// loadDriver opens libcuda, binds its symbols and runs cuInit, once per
// process. The error, if any, is kept: a process without a driver does not
// retry dlopen on every call.
func loadDriver() (*driver, error) {
	loadOnce.Do(func() { loaded, loadError = openDriver() })
	return loaded, loadError
}

func openDriver() (*driver, error) {
	lib, err := openLibrary()
	if err != nil {
		return nil, err
	}
	d := &driver{lib: lib}
	if err := bindSymbols(lib, &d.sym); err != nil {
		return nil, err
	}
	if _, set := os.LookupEnv(maxConnectionsEnv); !set {
		// os.Setenv reaches the C environment libcuda reads (purego's
		// fakecgo provides _cgo_setenv), as long as cuInit has not run.
		os.Setenv(maxConnectionsEnv, "32")
	}
	if r := call1(d.sym.init, 0); r != cudaSuccess {
		return nil, initError(d.err("cuInit", r))
	}
	var v int32
	if r := callRes(purego.SyscallN(d.sym.driverVersion, uintptr(unsafe.Pointer(&v)))); r != cudaSuccess {
		return nil, d.err("cuDriverGetVersion", r)
	}
	d.version = int(v)
	if d.version < minDriverVersion {
		return nil, fmt.Errorf("%w: driver supports CUDA %s, qd needs %s or newer",
			ErrDriverTooOld, versionString(d.version), versionString(minDriverVersion))
	}
	var n int32
	if r := callRes(purego.SyscallN(d.sym.deviceGetCount, uintptr(unsafe.Pointer(&n)))); r != cudaSuccess {
		return nil, d.err("cuDeviceGetCount", r)
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: the driver reports no device", ErrNoDevice)
	}
	d.devices = int(n)
	return d, nil
}

// initError explains the usual cuInit failures.
func initError(e *DriverError) error {
	switch e.Code {
	case cudaErrorNoDevice:
		return fmt.Errorf("%w: cuInit found no device (%v)", ErrNoDevice, e)
	case cudaErrorStubLibrary:
		return fmt.Errorf("%w: libcuda is the toolkit's stub library, not a driver (%v)", ErrNoDriver, e)
	}
	return e
}

func openLibrary() (uintptr, error) {
	var msgs []string
	for _, name := range libNames {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return lib, nil
		}
		msgs = append(msgs, err.Error())
	}
	return 0, fmt.Errorf("%w (%s)", ErrNoDriver, strings.Join(msgs, "; "))
}

// bindSymbols resolves every symbol with Dlsym (never RegisterLibFunc, which
// panics on a missing symbol). Optional symbols may stay 0. The memory-pool
// pair is bound both or neither.
func bindSymbols(lib uintptr, s *symbols) error {
	for _, sym := range symbolTable(s) {
		for _, name := range sym.names {
			if addr, err := purego.Dlsym(lib, name); err == nil && addr != 0 {
				*sym.addr = addr
				break
			}
		}
		if *sym.addr == 0 && !sym.optional {
			return fmt.Errorf("%w: libcuda lacks %s (driver too old?)", ErrNoDriver, sym.names[0])
		}
	}
	if s.memAllocAsync == 0 || s.memFreeAsync == 0 {
		s.memAllocAsync, s.memFreeAsync = 0, 0
	}
	return nil
}

// boundNames lists every name symbolTable may bind, fallbacks included.
func boundNames() []string {
	var names []string
	for _, sym := range symbolTable(new(symbols)) {
		names = append(names, sym.names...)
	}
	return names
}

// symbolFields returns the address of every field of s, for the
// completeness test.
func symbolFields(s *symbols) []*uintptr {
	v := reflect.ValueOf(s).Elem()
	out := make([]*uintptr, v.NumField())
	for i := range out {
		out[i] = (*uintptr)(unsafe.Pointer(v.Field(i).UnsafeAddr()))
	}
	return out
}

// err makes the DriverError for code, naming it through the driver.
func (d *driver) err(op string, code int32) *DriverError {
	return newDriverError(op, code, d.errorNames)
}

// errorNames asks the driver for the name and description of code. The
// driver returns pointers to static C strings through a const char**
// out-parameter; they are read by scanning for NUL (no uintptr→pointer
// conversion, so go vet stays quiet).
func (d *driver) errorNames(code int32) (name, msg string) {
	if d.sym.getErrorName == 0 || d.sym.getErrorString == 0 {
		return "", "" // not bound (tests of error paths without a driver)
	}
	var p *byte
	if r := callRes(purego.SyscallN(d.sym.getErrorName, uintptr(code), uintptr(unsafe.Pointer(&p)))); r == cudaSuccess {
		name = goString(p)
	}
	p = nil
	if r := callRes(purego.SyscallN(d.sym.getErrorString, uintptr(code), uintptr(unsafe.Pointer(&p)))); r == cudaSuccess {
		msg = goString(p)
	}
	return name, msg
}

// goString copies the NUL-terminated C string at p (at most 4 KiB).
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < 4096 && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString returns s as a NUL-terminated byte slice for the driver.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// callRes extracts the CUresult (a C enum, returned in the low 32 bits of
// the result register) from a SyscallN result.
func callRes(r1, _, _ uintptr) int32 { return int32(uint32(r1)) }

// call1 calls a driver function taking one plain (non-pointer) argument.
func call1(fn, a uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, a)
	return int32(uint32(r))
}

// versionString formats a cuDriverGetVersion number: 12040 → "12.4".
func versionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// Available reports whether CUDA can be used: nil, or an error that says
// why not (wrapping ErrNoDriver, ErrNoDevice or ErrDriverTooOld).
func Available() error {
	_, err := loadDriver()
	return err
}

// frame is per-call argument storage for SyscallN on hot paths. Passing a
// slice that already exists to the variadic SyscallN allocates nothing;
// building the arguments in the call expression allocates the variadic
// slice (purego's go:uintptrescapes forces it to the heap). Frames come from
// a pool so that concurrent calls never share one; being heap objects they
// never move, so their addresses may be passed as uintptr.
type frame struct {
	a   [8]uintptr
	out [2]uint64 // out-parameters written by the driver
}

var framePool = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame  { return framePool.Get().(*frame) }
func putFrame(f *frame) { framePool.Put(f) }

// outAddr is the address of f.out[i], to pass as a T* out-parameter.
func (f *frame) outAddr(i int) uintptr { return uintptr(unsafe.Pointer(&f.out[i])) }
