package cuda

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
)

// Every function of the runtime's table and of the driver's own is bound
// by exactly one entry, and every name is bound once.
func TestBindingsComplete(t *testing.T) {
	var c gpu.Calls
	var o own
	seen := map[*gpu.Fn]string{}
	names := map[string]bool{}
	for _, b := range bindings(&c, &o) {
		if len(b.Names) == 0 {
			t.Errorf("an entry has no name")
			continue
		}
		if prev, dup := seen[b.Fn]; dup {
			t.Errorf("%s and %s bind the same function", prev, b.Names[0])
		}
		seen[b.Fn] = b.Names[0]
		for _, n := range b.Names {
			if names[n] {
				t.Errorf("%s is bound twice", n)
			}
			names[n] = true
		}
	}
	for _, v := range []reflect.Value{reflect.ValueOf(&c).Elem(), reflect.ValueOf(&o).Elem()} {
		for i := range v.NumField() {
			f := (*gpu.Fn)(unsafe.Pointer(v.Field(i).UnsafeAddr()))
			if _, ok := seen[f]; !ok {
				t.Errorf("%s.%s is not bound", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
}

// The functions the backend needs are all bound, required unless the
// design says optional.
func TestBindingsRequired(t *testing.T) {
	required := []string{
		"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
		"cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
		"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent",
		"cuCtxSynchronize", "cuCtxGetStreamPriorityRange",
		"cuStreamCreateWithPriority", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamQuery", "cuStreamWaitEvent",
		"cuEventCreate", "cuEventDestroy_v2", "cuEventRecord", "cuEventQuery", "cuEventSynchronize", "cuEventElapsedTime_v2",
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
		"cuMemsetD8Async", "cuMemHostAlloc", "cuMemFreeHost", "cuModuleLoadDataEx", "cuModuleGetFunction", "cuModuleUnload", "cuLaunchKernel",
		"cuDeviceCanAccessPeer", "cuCtxEnablePeerAccess", "cuMemcpyPeerAsync",
	}
	optional := []string{"cuMemAllocAsync", "cuMemFreeAsync", "cuDeviceGetDefaultMemPool", "cuMemPoolSetAttribute", "cuMemPoolTrimTo",
		"cuMemPoolSetAccess", "cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy", "cuGraphDestroy", "cuGraphExecUpdate_v2"}
	byName := map[string]gpu.Binding{}
	for _, b := range bindings(new(gpu.Calls), new(own)) {
		byName[b.Names[0]] = b
	}
	for _, n := range required {
		b, ok := byName[n]
		if !ok {
			t.Errorf("%s is not bound (as a first choice)", n)
		} else if b.Optional {
			t.Errorf("%s is optional, want required", n)
		}
	}
	for _, n := range optional {
		if b, ok := byName[n]; !ok || !b.Optional {
			t.Errorf("%s: bound %v, want optional", n, ok)
		}
	}
}

// notInResearchTable are bound names that go-tech.md §4's table does not
// list: plain functions that cuda.h 13.0 declares under these names, with no
// versioned variant (CUresult cuDeviceGetCount(int*), cuDeviceGetName(char*,
// int, CUdevice)); cuMemHostAlloc(void**, size_t, unsigned) and
// cuMemFreeHost(void*), which the table names only in its notes; and the
// memory-pool calls of CUDA 11.2 (cuDeviceGetDefaultMemPool(CUmemoryPool*,
// CUdevice), cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute,
// void*), cuMemPoolTrimTo(CUmemoryPool, size_t), cuMemPoolSetAccess(
// CUmemoryPool, const CUmemAccessDesc*, size_t)); the peer calls of
// CUDA 4.0, whose only other exports are per-thread-stream variants
// (cuMemcpyPeerAsync_ptsz, which cuda.h maps to only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM): cuDeviceCanAccessPeer(int*,
// CUdevice, CUdevice), cuCtxEnablePeerAccess(CUcontext, unsigned),
// cuMemcpyPeerAsync(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
// CUstream); the graph calls the table names only in its notes
// (cuGraphExecDestroy(CUgraphExec), cuGraphDestroy(CUgraph)); and graph
// update, which cuda.h 12.0 declares as cuGraphExecUpdate_v2(CUgraphExec,
// CUgraph, CUgraphExecUpdateResultInfo*) and maps cuGraphExecUpdate to,
// the unversioned export being CUDA 11's (CUgraphExec, CUgraph,
// CUgraphNode*, CUgraphExecUpdateResult*), bound as a fallback because the
// runtime's call suits both; and those of traced graphs:
// cuEventRecordWithFlags(CUevent, CUstream, unsigned) (CUDA 11.1; the
// table notes only that it exists), cuStreamGetCaptureInfo_v2(CUstream,
// CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
// size_t*) (CUDA 11.3, bound by its versioned name: CUDA 12.3 added a _v3
// with edge data, and CUDA 13 maps the plain name to that) and
// cuGraphExecEventRecordNodeSetEvent(CUgraphExec, CUgraphNode, CUevent)
// (CUDA 11.1); cuFuncLoad(CUfunction) (CUDA 12.4), which finishes a
// lazily loaded function; and cuMemsetD16Async(CUdeviceptr, unsigned short,
// size_t, CUstream), the table's D8/D32 pair's 16-bit sibling, unversioned
// as they are.
var notInResearchTable = []string{"cuDeviceGetCount", "cuDeviceGetName", "cuMemHostAlloc", "cuMemFreeHost",
	"cuDeviceGetDefaultMemPool", "cuMemPoolSetAttribute", "cuMemPoolTrimTo", "cuMemPoolSetAccess",
	"cuDeviceCanAccessPeer", "cuCtxEnablePeerAccess", "cuMemcpyPeerAsync",
	"cuGraphExecDestroy", "cuGraphDestroy", "cuGraphExecUpdate_v2", "cuGraphExecUpdate",
	"cuEventRecordWithFlags", "cuStreamGetCaptureInfo_v2", "cuGraphExecEventRecordNodeSetEvent", "cuFuncLoad",
	"cuMemsetD16Async"}

// Every bound name is a dlsym name of go-tech.md §4's table (or one of the
// few above), and none is the legacy unversioned export of a function the
// table says to bind by its versioned name, unless the table names it as a
// fallback. The table is read from a snapshot in testdata; when the
// research file is reachable the snapshot must still match it.
func TestSymbolNamesMatchResearch(t *testing.T) {
	snap, err := os.ReadFile("testdata/go-tech-s4.md")
	if err != nil {
		t.Fatal(err)
	}
	if live, err := os.ReadFile("../../../../shared/research/go-tech.md"); err == nil {
		if !strings.Contains(string(live), strings.TrimSpace(string(snap))) {
			t.Errorf("testdata/go-tech-s4.md no longer matches §4 of shared/research/go-tech.md: refresh it and recheck the bindings")
		}
	}
	documented, legacy := parseSymbolTable(t, string(snap))
	if len(documented) < 40 {
		t.Fatalf("parsed only %d names from the table", len(documented))
	}
	var boundNames []string
	for _, b := range bindings(new(gpu.Calls), new(own)) {
		boundNames = append(boundNames, b.Names...)
	}
	for _, name := range boundNames {
		if !documented[name] && !slices.Contains(notInResearchTable, name) {
			t.Errorf("%s is bound but not a dlsym name of go-tech.md §4", name)
		}
		if legacy[name] && !documented[name] {
			t.Errorf("%s is a legacy ABI: bind the versioned name", name)
		}
	}
}

// parseSymbolTable returns the names in the dlsym column (and the "also
// exported" row), and the unversioned bases of versioned dlsym names.
func parseSymbolTable(t *testing.T, text string) (documented, legacy map[string]bool) {
	documented, legacy = map[string]bool{}, map[string]bool{}
	ident := regexp.MustCompile("`(cu[A-Za-z0-9_]+)`")
	version := regexp.MustCompile(`^(cu[A-Za-z0-9]+)_v[0-9]+$`)
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| cu") && !strings.HasPrefix(line, "| also exported") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) < 3 {
			t.Fatalf("short table row %q", line)
		}
		for _, m := range ident.FindAllStringSubmatch(cols[2], -1) {
			documented[m[1]] = true
			if v := version.FindStringSubmatch(m[1]); v != nil {
				legacy[v[1]] = true
			}
		}
	}
	return documented, legacy
}

func TestAvailableWithoutDriver(t *testing.T) {
	err := Available()
	if err == nil {
		t.Skip("a CUDA driver and device are present: nothing to check here")
	}
	t.Logf("Available: %v", err)
	if gputest.Required() {
		t.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
	}
	if !errors.Is(err, gpu.ErrNoDriver) && !errors.Is(err, gpu.ErrNoDevice) && !errors.Is(err, gpu.ErrDriverTooOld) {
		t.Errorf("Available() = %v, which wraps none of the sentinels", err)
	}
	if Available() != err {
		t.Error("Available does not keep its first answer")
	}
	if _, oerr := Open(0); !errors.Is(oerr, err) {
		t.Errorf("Open(0) = %v, want the same error as Available", oerr)
	}
}

// On a machine without libcuda the error is ErrNoDriver and carries the
// dlerror text for each name tried.
func TestNoDriverMessage(t *testing.T) {
	err := Available()
	if err == nil || !errors.Is(err, gpu.ErrNoDriver) {
		t.Skip("libcuda is present here")
	}
	for _, n := range libNames() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not mention %s", err, n)
		}
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{13000: "13.0", 12040: "12.4", 11020: "11.2", 12090: "12.9"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for code, want := range map[int32]gpu.Class{
		errOutOfMemory: gpu.OutOfMemory, errInvalidValue: gpu.Failed,
		errNoDevice: gpu.NoDevice, errInvalidDevice: gpu.NoDevice,
		errInvalidPTX: gpu.InvalidCode, errUnsupportedPTX: gpu.InvalidCode, errJITNotFound: gpu.InvalidCode,
		errInvalidHandle: gpu.Failed, errIllegalAddress: gpu.Fatal, errLaunchFailed: gpu.Fatal,
		errMisalignedAddr: gpu.Fatal, errOutOfResources: gpu.Failed, // a bad launch configuration is not sticky
		errAssert: gpu.Fatal, errLaunchTimeout: gpu.Fatal, errHardwareStack: gpu.Fatal, errIllegalInstr: gpu.Fatal,
		errInvalidAddrSpace: gpu.Fatal, errInvalidPC: gpu.Fatal,
		errNotReady: gpu.Failed, errNotSupported: gpu.NotSupported, errNotPermitted: gpu.Failed,
	} {
		if got := classify(code); got != want {
			t.Errorf("classify(%s) = %d, want %d", errorNames[code], got, want)
		}
	}
}

// Without the library the local table names the code.
func TestErrorTextFallback(t *testing.T) {
	var d *driver
	if name, msg := d.ErrorText(errOutOfMemory); name != "CUDA_ERROR_OUT_OF_MEMORY" || msg != "" {
		t.Errorf("fallback: %q, %q", name, msg)
	}
	e := gpu.NewDriverError(&driver{}, "cuMemAlloc_v2", errOutOfMemory)
	if e.Arch != "cuda" || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" || e.Class != gpu.OutOfMemory {
		t.Errorf("NewDriverError: %+v", e)
	}
}
