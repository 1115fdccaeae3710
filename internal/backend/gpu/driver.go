package gpu

import (
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// Driver is what a vendor supplies to the runtime: its bound functions, how
// it classifies and names result codes, how it opens a device and makes it
// current, and how it turns a lowered kernel into loaded device code.
// Everything else (streams, events, memory, launches, tracing) is written
// once, in this package, against the Calls table.
type Driver interface {
	// Arch names the backend: "cuda", "amdgpu".
	Arch() string
	// Calls is the driver's bound function table. It is read on every call
	// path and must not change after the first Open.
	Calls() *Calls
	// Codes gives the result codes the runtime tests on hot paths.
	Codes() Codes
	// Classify says what a failing result code means. It runs only on
	// failure, never on a hot path.
	Classify(code int32) Class
	// ErrorText is the driver's name and description of code, for
	// messages; either may be empty.
	ErrorText(code int32) (name, msg string)
	// OpenDevice prepares device ordinal (retaining its context where the
	// vendor has one) and reads its properties. CloseDevice ends that use;
	// lost says a fatal error made the context unusable, which the driver
	// resets once its last user closes, so that a later OpenDevice gets a
	// working one.
	OpenDevice(ordinal int) (*Props, error)
	CloseDevice(p *Props, lost bool) error
	// Build generates device code for plan on the device of p: the kernel's
	// layout (kabi.Layout) and an image the driver can Load.
	Build(plan *lower.Plan, p *Props, opts backend.CompileOptions) (*Image, error)
	// Load loads img into the device's context and returns the module
	// handle. It runs on a call path (the context is current on the thread)
	// and returns failures of the load with the compiler's log.
	Load(img *Image) (module uintptr, err error)
}

// Fn is one bound driver function: the C name it was bound as and its
// address. Every call goes through an Fn, so a failure names the function
// that failed without the caller spelling the name again.
type Fn struct {
	Name string
	Addr uintptr
}

// Bound reports whether the function was found in the library.
func (f *Fn) Bound() bool { return f.Addr != 0 }

// Calls is the part of a vendor's API the runtime calls. CUDA's driver API
// and HIP's module API match call for call: the same arguments in the same
// order with the same meaning (handles and device addresses as uintptr, a
// stream as the last argument of asynchronous calls), so one runtime drives
// both. Each field's comment gives the C signature; T* is an out-parameter.
type Calls struct {
	// MakeCurrent(arg): makes the device current on the calling OS thread
	// (cuCtxSetCurrent(ctx), hipSetDevice(ordinal)); arg is Props.CurrentArg.
	MakeCurrent Fn
	// Synchronize(): waits for all work of the current device.
	Synchronize Fn

	StreamCreate      Fn // (stream*, flags u32, priority i32)
	StreamDestroy     Fn // (stream)
	StreamSynchronize Fn // (stream)
	StreamQuery       Fn // (stream): success or Codes.NotReady
	StreamWaitEvent   Fn // (stream, event, flags u32)

	EventCreate      Fn // (event*, flags u32)
	EventDestroy     Fn // (event)
	EventRecord      Fn // (event, stream)
	EventQuery       Fn // (event): success or Codes.NotReady
	EventSynchronize Fn // (event)
	EventElapsed     Fn // (ms *f32, start, end)
	// EventRecordWithFlags(event, stream, flags u32): with
	// Codes.EventRecordExternal on a capturing stream, an event-record
	// node of the graph (traced graphs, graphtrace.go); optional.
	EventRecordWithFlags Fn

	MemAlloc       Fn // (ptr*, bytes)
	MemFree        Fn // (ptr)
	MemAllocAsync  Fn // (ptr*, bytes, stream); optional: stream-ordered pools
	MemFreeAsync   Fn // (ptr, stream); optional, bound with MemAllocAsync
	CopyHtoDAsync  Fn // (dst ptr, src host*, bytes, stream)
	CopyDtoHAsync  Fn // (dst host*, src ptr, bytes, stream)
	CopyDtoDAsync  Fn // (dst ptr, src ptr, bytes, stream)
	MemsetD8Async  Fn // (dst ptr, value u8, bytes, stream)
	MemsetD16Async Fn // (dst ptr, value u16, count, stream): count 2-byte words, dst 2-byte aligned
	MemsetD32Async Fn // (dst ptr, value u32, count, stream): count 4-byte words, dst 4-byte aligned
	HostAlloc      Fn // (host**, bytes, flags u32): page-locked host memory
	HostFree       Fn // (host*)

	// Peer access between devices and copies across them (peer.go). The
	// vendors take the same arguments in the same order; each names a
	// device by what the runtime keeps in Props.
	CanAccessPeer    Fn // (can *i32, dev, peer): Props.DeviceArg of each
	EnablePeerAccess Fn // (peer, flags u32 = 0): the current device gains access to peer (its Props.CurrentArg)
	CopyPeerAsync    Fn // (dst ptr, dstDev, src ptr, srcDev, bytes, stream): Props.CurrentArg of each
	// MemPoolSetAccess(pool, desc *memAccessDesc, count): lets another
	// device use a memory pool's blocks; optional, bound with the pools.
	MemPoolSetAccess Fn

	ModuleGetFunction Fn // (function*, module, name *char)
	ModuleUnload      Fn // (module)
	// FuncLoad(function): finishes loading a function that the driver
	// loads lazily (CUDA ≥ 12.4; lazy loading is the default since 12.2);
	// optional. Compile calls it, so that the first launch of a kernel
	// does not load it, which may wait for the device's running work.
	FuncLoad Fn
	// LaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ,
	// sharedBytes, stream, params **void, extra **void).
	LaunchKernel Fn
	// LaunchKernelEx(config *launchConfig, f, params **void, extra
	// **void): a launch with attributes; optional. The runtime uses it
	// only inside a capture, for programmatic dependent launches
	// (Codes.ProgrammaticLaunch), and only for entries that wait for their
	// predecessors (kabi.Module.AwaitsPredecessors).
	LaunchKernelEx Fn

	// Graphs (graph.go), optional: a driver without every one of them but
	// GraphExecUpdate has no graphs (backend.ErrUnsupported).
	StreamBeginCapture Fn // (stream, mode u32): mode is Codes.CaptureRelaxed
	StreamEndCapture   Fn // (stream, graph*)
	GraphInstantiate   Fn // (exec*, graph, flags u64)
	GraphLaunch        Fn // (exec, stream)
	GraphExecDestroy   Fn // (exec)
	GraphDestroy       Fn // (graph)
	// StreamGetCaptureInfo(stream, status*, id*, graph*, deps**, ndeps*):
	// the nodes a capturing stream's next work will depend on (the _v2
	// signature of both vendors); optional, for traced graphs.
	StreamGetCaptureInfo Fn
	// GraphExecEventRecordNodeSetEvent(exec, node, event): the event a
	// node of the exec records from its next launch on; optional, for
	// traced graphs.
	GraphExecEventRecordNodeSetEvent Fn
	// GraphExecUpdate(exec, graph, out1*, out2*): HIP's (and CUDA 11's)
	// (exec, graph, errorNode*, result*), or CUDA 12's (exec, graph,
	// resultInfo*), which ignores the fourth argument; optional (without
	// it every Update rebuilds).
	GraphExecUpdate Fn
}

// Codes are the result codes and flags the runtime uses on hot paths. The
// vendors agree on most of them (success is 0 everywhere); a driver states
// its own rather than the runtime assuming.
type Codes struct {
	NotReady           int32   // "not yet" from a query: not an error
	InvalidValue       int32   // an argument the driver refused
	StreamNonBlocking  uintptr // StreamCreate flag: no implicit sync with the legacy stream
	EventDisableTiming uintptr // EventCreate flag: a cheaper event that cannot time
	HostAllocPortable  uintptr // HostAlloc flag: usable from every context of the process
	CaptureRelaxed     uintptr // StreamBeginCapture mode: relaxed (graph.go says why)
	// ProgrammaticLaunch is the LaunchKernelEx attribute that lets a
	// kernel start before the one before it on its stream ends (it waits
	// for it inside, launch.go); 0 if the driver has none.
	ProgrammaticLaunch uint32
	// EventRecordExternal is EventRecordWithFlags' flag that makes a
	// record on a capturing stream a node of the graph; 0 if none.
	EventRecordExternal uintptr
	// PeerAccessAlreadyEnabled from EnablePeerAccess: another user of the
	// device (a library, another Program) enabled it first. Not an error.
	PeerAccessAlreadyEnabled int32
}

// Class is what a failing result code means to the runtime.
type Class uint8

const (
	// Failed is any failure the runtime has no special handling for.
	Failed Class = iota
	// OutOfMemory: the device (or pinned host memory) is exhausted; the
	// call may succeed later.
	OutOfMemory
	// Fatal: the context is unusable (illegal address, launch failure, a
	// kernel trap). Every later call fails fast with ErrDeviceLost.
	Fatal
	// InvalidCode: the driver rejected generated code.
	InvalidCode
	// NotSupported: the device or driver lacks the feature.
	NotSupported
	// NoDevice: no device, or an ordinal that does not exist.
	NoDevice
)

// Props describe an open device: what OpenDevice read, and the argument of
// Calls.MakeCurrent.
type Props struct {
	Ordinal    int
	CurrentArg uintptr // Calls.MakeCurrent's argument (a context, an ordinal)
	DeviceArg  uintptr // how Calls.CanAccessPeer names the device (a CUdevice, an ordinal)
	// Pool is the device's default memory pool (Calls.MemAllocAsync's), 0
	// without pools: a peer copy lets the other device use it.
	Pool uintptr
	// Info is the device as the backend lists it (qd devices).
	Info     backend.DeviceInfo
	Name     string // "NVIDIA H200"
	Target   string // what code is generated for: "sm_90", "gfx90a"
	Describe string // one line for messages and `qd devices`
	// Units is the number of multiprocessors (compute units); each holds
	// ThreadsPerUnit threads at once. Grids are sized from both.
	Units          int
	ThreadsPerUnit int
	MaxBlockDim    int    // largest block the device launches
	WarpSize       int    // threads that run in lockstep (32 or 64)
	MemoryBytes    uint64 // total device memory
	MemPools       bool   // MemAllocAsync/MemFreeAsync usable on this device
	// PriorityLeast and PriorityGreatest bound stream priorities (a lower
	// number is a higher priority).
	PriorityLeast, PriorityGreatest int
	// ContextChecked: a call that names a stream or a function of the
	// device (a launch, a stream-ordered allocation, free, copy or fill,
	// an event record or wait) made while the device is not current on
	// the thread (no context, or another one) fails instead of acting
	// elsewhere. While the process has this one context open, such calls
	// go without MakeCurrent first and are retried after it on failure
	// (Device.runOn). True for CUDA; not for HIP, whose threads default
	// to device 0.
	ContextChecked bool
	// Driver holds state the vendor needs later (its device handle, its
	// version), opaque to the runtime.
	Driver any
}

// Image is generated device code with its layout.
type Image struct {
	Layout *kabi.Module
	Code   []byte // what Driver.Load takes: PTX text, a code object, ...
}
