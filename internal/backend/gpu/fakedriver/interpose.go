package fakedriver

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// What the fake driver and Wrap share: the list of driver functions, one
// callback per function that passes the call through an Injector and on to
// the function behind it, and the same for Driver.Load.

// call is one function of gpu.Calls, or Driver.Load.
type call int

const (
	cMakeCurrent call = iota
	cSynchronize
	cStreamCreate
	cStreamDestroy
	cStreamSynchronize
	cStreamQuery
	cStreamWaitEvent
	cEventCreate
	cEventDestroy
	cEventRecord
	cEventQuery
	cEventSynchronize
	cEventElapsed
	cEventRecordWithFlags
	cMemAlloc
	cMemFree
	cMemAllocAsync
	cMemFreeAsync
	cCopyHtoDAsync
	cCopyDtoHAsync
	cCopyDtoDAsync
	cMemsetD8Async
	cMemsetD16Async
	cMemsetD32Async
	cHostAlloc
	cHostFree
	cModuleGetFunction
	cModuleUnload
	cFuncLoad
	cLaunchKernel
	cLaunchKernelEx
	cCanAccessPeer
	cEnablePeerAccess
	cCopyPeerAsync
	cMemPoolSetAccess
	cStreamBeginCapture
	cStreamEndCapture
	cGraphInstantiate
	cGraphLaunch
	cGraphExecDestroy
	cGraphDestroy
	cGraphExecUpdate
	cStreamGetCaptureInfo
	cGraphExecEventRecordNodeSetEvent
	cLoad // Driver.Load, a Go method: not in Calls
	numCalls
)

// Load names Driver.Load in a Fault and in Injector.Count: loading a module
// is a Go method of the driver, not a Calls function.
const Load = "Load"

// calls gives each call's gpu.Calls field and its number of arguments (the
// C signatures in gpu.Calls' comments).
var calls = [numCalls]struct {
	field string
	arity int
}{
	cMakeCurrent:                      {"MakeCurrent", 1},
	cSynchronize:                      {"Synchronize", 0},
	cStreamCreate:                     {"StreamCreate", 3},
	cStreamDestroy:                    {"StreamDestroy", 1},
	cStreamSynchronize:                {"StreamSynchronize", 1},
	cStreamQuery:                      {"StreamQuery", 1},
	cStreamWaitEvent:                  {"StreamWaitEvent", 3},
	cEventCreate:                      {"EventCreate", 2},
	cEventDestroy:                     {"EventDestroy", 1},
	cEventRecord:                      {"EventRecord", 2},
	cEventQuery:                       {"EventQuery", 1},
	cEventSynchronize:                 {"EventSynchronize", 1},
	cEventElapsed:                     {"EventElapsed", 3},
	cEventRecordWithFlags:             {"EventRecordWithFlags", 3},
	cMemAlloc:                         {"MemAlloc", 2},
	cMemFree:                          {"MemFree", 1},
	cMemAllocAsync:                    {"MemAllocAsync", 3},
	cMemFreeAsync:                     {"MemFreeAsync", 2},
	cCopyHtoDAsync:                    {"CopyHtoDAsync", 4},
	cCopyDtoHAsync:                    {"CopyDtoHAsync", 4},
	cCopyDtoDAsync:                    {"CopyDtoDAsync", 4},
	cMemsetD8Async:                    {"MemsetD8Async", 4},
	cMemsetD16Async:                   {"MemsetD16Async", 4},
	cMemsetD32Async:                   {"MemsetD32Async", 4},
	cHostAlloc:                        {"HostAlloc", 3},
	cHostFree:                         {"HostFree", 1},
	cModuleGetFunction:                {"ModuleGetFunction", 3},
	cModuleUnload:                     {"ModuleUnload", 1},
	cFuncLoad:                         {"FuncLoad", 1},
	cLaunchKernel:                     {"LaunchKernel", 11},
	cLaunchKernelEx:                   {"LaunchKernelEx", 4},
	cCanAccessPeer:                    {"CanAccessPeer", 3},
	cEnablePeerAccess:                 {"EnablePeerAccess", 2},
	cCopyPeerAsync:                    {"CopyPeerAsync", 6},
	cMemPoolSetAccess:                 {"MemPoolSetAccess", 3},
	cStreamBeginCapture:               {"StreamBeginCapture", 2},
	cStreamEndCapture:                 {"StreamEndCapture", 2},
	cGraphInstantiate:                 {"GraphInstantiate", 3},
	cGraphLaunch:                      {"GraphLaunch", 2},
	cGraphExecDestroy:                 {"GraphExecDestroy", 1},
	cGraphDestroy:                     {"GraphDestroy", 1},
	cGraphExecUpdate:                  {"GraphExecUpdate", 4},
	cStreamGetCaptureInfo:             {"StreamGetCaptureInfo", 6},
	cGraphExecEventRecordNodeSetEvent: {"GraphExecEventRecordNodeSetEvent", 3},
	cLoad:                             {Load, 0},
}

// maxArity is the most arguments a driver function takes (LaunchKernel).
const maxArity = 11

// args are a call's arguments; those past its arity are zero.
type args = [maxArity]uintptr

// callNamed returns the call whose field is name.
func callNamed(name string) (call, bool) {
	for c := range numCalls {
		if calls[c].field == name {
			return c, true
		}
	}
	return 0, false
}

func (c call) String() string {
	if c >= 0 && c < numCalls {
		return calls[c].field
	}
	return fmt.Sprintf("call(%d)", int(c))
}

// fnOf is c's entry in t (c is not cLoad).
func fnOf(t *gpu.Calls, c call) *gpu.Fn {
	return reflect.ValueOf(t).Elem().FieldByName(calls[c].field).Addr().Interface().(*gpu.Fn)
}

// ptr turns a pointer argument back into a pointer. Reading the integer
// through a pointer variable makes the unsafe.Pointer without the
// uintptr conversion go vet questions; the memory is the caller's, kept
// alive by the caller for the call (purego's SyscallN escapes its
// arguments, and the runtime passes heap or C memory only).
func ptr(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// interposer is one driver's table of callbacks: each function of the
// table becomes a callback that passes its call through the Injector (which
// may fail it) and then to next, the function behind it (the fake's
// simulation, or the real function of a wrapped driver).
type interposer struct {
	in       *Injector
	classify func(int32) gpu.Class
	next     func(c call, a *args) int32
	// poison, if set, is told of an injected fatal code: the fake then
	// fails every later call as a faulted context does. A wrapped real
	// driver's context is not faulted, but the runtime makes no calls on
	// a device it has marked lost.
	poison func(code int32)
	// faulted, if set, is told of every injected failure, with the call's
	// arguments: the fake ends a capture whose end failed, as CUDA does.
	faulted func(c call, a *args)
	calls   gpu.Calls
}

// bind fills ip.calls from base: every call keeps its name, and every
// bound one gets a callback into ip. It fails where purego cannot make
// callbacks (or the process has made its last).
func (ip *interposer) bind(base *gpu.Calls, bound func(c call) bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fakedriver: purego callbacks: %v", r)
		}
	}()
	for c := range cLoad {
		fn := fnOf(&ip.calls, c)
		fn.Name = fnOf(base, c).Name
		ip.in.names[c] = fn.Name
		if bound(c) {
			fn.Addr = callback(calls[c].arity, func(a *args) uintptr { return ip.handle(c, a) })
		}
	}
	return nil
}

// handle is one call through the table.
func (ip *interposer) handle(c call, a *args) uintptr {
	if code, ok := ip.in.fire(c, a); ok {
		ip.injected(code)
		if ip.faulted != nil {
			ip.faulted(c, a)
		}
		return uintptr(uint32(code))
	}
	r := ip.next(c, a)
	if r == 0 {
		ip.in.observe(c, a)
	}
	return uintptr(uint32(r))
}

func (ip *interposer) injected(code int32) {
	if ip.poison != nil && ip.classify(code) == gpu.Fatal {
		ip.poison(code)
	}
}

// load is Driver.Load through the Injector: drv names and classifies an
// injected code, load is the function behind it.
func (ip *interposer) load(drv gpu.Driver, img *gpu.Image, load func(*gpu.Image) (uintptr, error)) (uintptr, error) {
	if code, ok := ip.in.fire(cLoad, &args{}); ok {
		ip.injected(code)
		return 0, gpu.NewDriverError(drv, ip.in.names[cLoad], code)
	}
	h, err := load(img)
	if err == nil {
		ip.in.observe(cLoad, &args{h})
	}
	return h, err
}

// callback makes a C-callable function of n pointer-sized arguments that
// calls f with them.
func callback(n int, f func(a *args) uintptr) uintptr {
	switch n {
	case 0:
		return purego.NewCallback(func() uintptr { return f(&args{}) })
	case 1:
		return purego.NewCallback(func(a0 uintptr) uintptr { return f(&args{a0}) })
	case 2:
		return purego.NewCallback(func(a0, a1 uintptr) uintptr { return f(&args{a0, a1}) })
	case 3:
		return purego.NewCallback(func(a0, a1, a2 uintptr) uintptr { return f(&args{a0, a1, a2}) })
	case 4:
		return purego.NewCallback(func(a0, a1, a2, a3 uintptr) uintptr { return f(&args{a0, a1, a2, a3}) })
	case 6:
		return purego.NewCallback(func(a0, a1, a2, a3, a4, a5 uintptr) uintptr { return f(&args{a0, a1, a2, a3, a4, a5}) })
	case 11:
		return purego.NewCallback(func(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 uintptr) uintptr {
			return f(&args{a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10})
		})
	}
	panic(fmt.Sprintf("fakedriver: no callback of %d arguments", n))
}
