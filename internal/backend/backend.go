package backend

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/trace"
)

// Sentinel errors every backend wraps, so that callers test them with
// errors.Is whatever the backend (package qd re-exports them).
var (
	// ErrUnsupported is returned (wrapped) for an operation a backend does
	// not offer. It also matches the standard library's
	// errors.ErrUnsupported.
	ErrUnsupported error = unsupportedError{}
	// ErrOutOfMemory: an allocation failed for lack of device (or host)
	// memory; it may succeed once memory is freed.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrDeviceLost: a fault (an illegal address, a trap) left the device's
	// context unusable; every later call on it fails with this error, for
	// the rest of the process.
	ErrDeviceLost = errors.New("device lost after a fault")
	// ErrCapturing is matched by a backend's refusal of what a graph
	// capture cannot hold (a host wait for a capturing stream, a wait
	// across a capture's boundary). Package qd refuses such calls itself,
	// in the user's terms, before the backend sees them; the match keeps a
	// refusal that gets through a qd error all the same.
	ErrCapturing = errors.New("not allowed during a graph capture")
)

// ErrClosed is matched by a backend's refusal to use a handle it has
// released. Package qd checks its objects before it uses their handles;
// the match keeps a use that gets through a qd error all the same.
var ErrClosed = errors.New("use of a closed object")

// ClosedError is an error with text msg that matches ErrClosed.
func ClosedError(msg string) error { return closedError(msg) }

type closedError string

func (e closedError) Error() string        { return string(e) }
func (e closedError) Is(target error) bool { return target == ErrClosed }

// CaptureError is an error with text msg that matches ErrCapturing.
func CaptureError(msg string) error { return captureError(msg) }

type captureError string

func (e captureError) Error() string        { return string(e) }
func (e captureError) Is(target error) bool { return target == ErrCapturing }

// unsupportedError is ErrUnsupported: a value of its own, so that a
// wrapped ErrUnsupported keeps matching it, which also matches
// errors.ErrUnsupported.
type unsupportedError struct{}

func (unsupportedError) Error() string { return "not supported by this backend" }

func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Device is one device of a backend.
type Device interface {
	// Arch names the backend: "cpu", "cuda", "amdgpu".
	Arch() string
	// Describe says what the device is, for messages and `qd devices`.
	Describe() string
	// Info describes the device as Backend.Devices lists it.
	Info() DeviceInfo
	// PriorityRange gives the stream priorities the device accepts: least
	// (lowest priority, the default) and greatest, where a lower number is a
	// higher priority as in CUDA. Backends without priorities return 0, 0.
	PriorityRange() (least, greatest int)
	// NewStream makes a non-blocking stream of the given priority, already
	// clamped into PriorityRange.
	NewStream(priority int) (Stream, error)
	// WrapStream wraps a stream made outside qd; the result's Close must not
	// destroy it.
	WrapStream(handle uintptr) (Stream, error)
	// NewEvent makes an event; timing events can measure Elapsed.
	NewEvent(timing bool) (Event, error)
	// Alloc allocates device memory of the given size in bytes (at least 1).
	Alloc(bytes int) (Buffer, error)
	// AllocOn allocates bytes (at least 1) in the order of s, from the
	// device's memory pool where it has one; the buffer is usable by work
	// enqueued on s from now on (and by other streams ordered after it).
	// Free it with FreeOn.
	AllocOn(s Stream, bytes int) (Buffer, error)
	// AllocHost allocates bytes (at least 1) of host memory the device can
	// copy from and to asynchronously: page-locked on a GPU, plain memory
	// on the CPU. It starts zeroed.
	AllocHost(bytes int) (HostBuffer, error)
	// Compile compiles a lowered kernel for the device.
	Compile(plan *lower.Plan, opts CompileOptions) (Module, error)
	// Close releases the device. Every handle it made is closed first by
	// package qd.
	Close() error
}

// CompileOptions choose how code is generated.
type CompileOptions struct {
	// FastMath lets a GPU code generator contract multiplies and adds into
	// fused ones and use approximate division, square roots and
	// transcendentals (qd.WithFastMath). The CPU keeps Go's semantics.
	FastMath bool
	// Debug makes GPU kernels check every array index (qd.WithDebug): an
	// access out of range is skipped, and the first of a launch is
	// reported, with its kernel, array and position, by the next
	// Synchronize of the launch's stream. The CPU always checks.
	Debug bool
	// Native says whether the CPU backend runs the kernel as `qd gen`
	// generated it (lower.Plan.Native), where the plan has it
	// (qd.WithNative): NativeAuto measures both paths on the first
	// launches and keeps the faster.
	Native NativeMode
}

// NativeMode is CompileOptions.Native.
type NativeMode uint8

const (
	NativeAuto NativeMode = iota // measure, keep the faster
	NativeOn                     // the generated code always
	NativeOff                    // the closures always
)

// Stream is an in-order queue of work.
type Stream interface {
	// Handle is the native handle (a CUstream on CUDA), or an identifier.
	Handle() uintptr
	// Synchronize blocks until all work enqueued so far is done and returns
	// the first error that work reported since the last call, if any.
	Synchronize() error
	// Query reports whether all enqueued work is done, without blocking.
	Query() (bool, error)
	// WaitEvent makes work enqueued later on the stream wait for the most
	// recent Record of e, without blocking the host.
	WaitEvent(e Event) error
	// Close waits for the enqueued work, then releases the stream.
	Close() error
}

// Event marks a point in a stream.
type Event interface {
	// Record captures the work enqueued on s so far; the event completes when
	// that work is done. Recording again replaces the captured point.
	Record(s Stream) error
	// Synchronize blocks until the last recorded point is reached. An event
	// never recorded is complete.
	Synchronize() error
	// Query reports whether the last recorded point is reached.
	Query() (bool, error)
	// Elapsed is the time from this event to end; both must be timing events
	// whose recorded points are reached.
	Elapsed(end Event) (time.Duration, error)
	Close() error
}

// Peer is implemented by devices whose streams can be ordered after, and
// copy between, the objects of other devices of the same backend open in
// the process: other GPUs, or the same GPU opened again (by another
// Program). Package qd uses it for work of one Program that involves
// another's objects; work on one device's own objects goes through
// Stream.WaitEvent and Buffer.CopyFrom as before.
type Peer interface {
	// WaitPeerEvent makes work enqueued later on s, a stream of this
	// device, wait for the last Record of e, an event of another device of
	// the backend, without blocking the host. An event never recorded is
	// already reached.
	WaitPeerEvent(s Stream, e Event) error
	// CopyPeer enqueues on s, a stream of this device, a copy of the first
	// n bytes of src into dst, where each buffer belongs to this device or
	// another device of the backend. Where the two devices can reach each
	// other's memory, the first copy between them enables that (once per
	// pair, for the process) and the copy moves directly; otherwise the
	// driver stages it through host memory.
	CopyPeer(s Stream, dst, src Buffer, n int) error
}

// RawPeerCopier is implemented by GPU devices: the reference the peer-copy
// bandwidth of `qd bench` is held against.
type RawPeerCopier interface {
	// RawCopyPeer enqueues on s a copy of n bytes of src into dst through
	// the driver's peer copy and nothing else: no checks, no tracking, no
	// enabling of peer access.
	RawCopyPeer(s Stream, dst, src Buffer, n int) error
}

// Buffer is device memory. Copies are enqueued on a stream; the caller keeps
// host memory valid until the copy is done (it waits for the stream) and
// never frees a buffer while enqueued work may use it.
type Buffer interface {
	Bytes() int
	CopyFromHost(s Stream, src unsafe.Pointer, n int) error
	CopyToHost(s Stream, dst unsafe.Pointer, n int) error
	// CopyFrom enqueues a copy of the first n bytes of src, a buffer of the
	// same device, into this buffer.
	CopyFrom(s Stream, src Buffer, n int) error
	// View is bytes [off, off+n) of the buffer as a buffer of its own that
	// shares the memory; closing or freeing a view frees nothing.
	View(off, n int) (Buffer, error)
	// FreeOn frees the memory in the order of s: after the work enqueued on
	// s so far (the caller orders every other user before it). Only for
	// buffers from AllocOn; the buffer must not be used afterwards.
	FreeOn(s Stream) error
	// Close frees the memory at once.
	Close() error
}

// HostBuffer is host memory for asynchronous copies (Device.AllocHost).
// Pointer stays valid until Close.
type HostBuffer interface {
	Bytes() int
	Pointer() unsafe.Pointer
	// Close frees the memory at once; no enqueued copy may still use it.
	Close() error
}

// HostWrapper is implemented by devices that can use host memory directly
// (the CPU): a Go slice passed to a kernel is then wrapped, not copied.
type HostWrapper interface {
	WrapHost(p unsafe.Pointer, bytes int) (Buffer, error)
}

// HostPointer is implemented by buffers the host can address directly (the
// CPU's): host copies are then plain memory moves once the streams that use
// the buffer are waited for.
type HostPointer interface {
	HostPointer() unsafe.Pointer
}

// HostTasker is implemented by devices whose streams can run host
// functions in their order (the CPU's): the CPU transport of collectives
// runs its calls so, and a graph capture records them as it records
// copies (a replay runs fn again). An error fn returns is reported by the
// stream, as a failed copy's is.
type HostTasker interface {
	EnqueueHost(s Stream, fn func() error) error
}

// Zeroer is implemented by buffers that can fill themselves with zero bytes
// on the device, in the order of a stream.
type Zeroer interface {
	Zero(s Stream) error
}

// Filler is implemented by buffers that can fill their first count
// elements of size bytes (1, 2 or 4) with the low bytes of pattern on the
// device, in the order of a stream. A fill needs no kernel then, and so no
// module to load.
type Filler interface {
	Fill(s Stream, pattern uint32, size, count int) error
}

// Module is a compiled kernel.
type Module interface {
	// Begin starts one launch of the kernel: it takes the per-launch resources
	// (argument values, temporaries) in the order of stream s. The Args are
	// not kept after Begin returns.
	Begin(s Stream, args *Args) (Launch, error)
	Close() error
}

// Launch is one launch of a Module in progress.
type Launch interface {
	// Run enqueues task number task of the plan on s.
	Run(task int, s Stream) error
	// End releases the launch's resources in the order of s, after every task
	// enqueued so far on s. Every task must have been ordered before that
	// point on s (by running on s or by an event s waits for). End is called
	// exactly once, also after a failed Run.
	//
	// Errors that tasks raise while they run belong to the launch, wherever
	// they ran: the backend reports them on s when End's point is reached
	// (the next Synchronize of s returns them), never on the streams of
	// stream-parallel groups, and never through events. So each is
	// reported once, to the launch's stream, and pooled streams stay clean.
	End(s Stream) error
}

// Reusable is implemented by a Launch that can be enqueued again: when
// Reusable reports true, the launch holds nothing but its packed
// arguments, so Run may enqueue its tasks again, on any stream, for later
// launches of the module with the same arguments; its End, which only
// recycles the argument storage, may come on any stream, unordered with
// its tasks, or never (the launch is then dropped). These are the
// exceptions to Launch's End contract. Package qd keeps such a launch per
// kernel and reruns it while the arguments repeat (relaunch.go).
type Reusable interface {
	Reusable() bool
}

// RawLauncher is implemented by GPU modules: the reference the launch
// host-cost figure of `qd bench` is held against.
type RawLauncher interface {
	// RawLaunchCost is the mean host time of one launch of the module's
	// first task straight through the driver's bindings (arguments packed
	// once, nothing else on the path), over n launches on s with a
	// synchronization every syncEvery launches.
	RawLaunchCost(args *Args, s Stream, n, syncEvery int) (time.Duration, error)
}

// Args are the arguments of one launch, indexed by parameter position.
type Args struct {
	// Scalars are the scalar values as ir.Const bit patterns: signed
	// integers (int8 and int16 too) sign-extended to 64 bits, unsigned
	// ones zero-extended, bools 0 or 1, float32 in the low 32 bits (see
	// kabi.ScalarSlot for what a GPU entry receives). Unused for arrays.
	Scalars []uint64
	Arrays  []ArrayArg // unused for scalars
	// Ctx, when not nil, is the launch's context (Kernel.LaunchContext):
	// a backend that can stop running work (Stopper) ends the launch's
	// tasks once Ctx is done, with an error wrapping context.Cause(Ctx).
	// Others ignore it.
	Ctx context.Context
}

// Stopper is implemented by devices that can stop work in flight (the
// CPU's): tasks check between chunks of work, and their loops at every
// iteration, whether they must stop.
type Stopper interface {
	// Stop makes every task of every launch, queued or running, end at its
	// next check with an error wrapping cause; launches begun later stop at
	// once. It cannot be undone: the Program is closing.
	Stop(cause error)
}

// ArrayArg is an array argument: its buffer and its shape, up to
// ir.MaxDims dimensions (unused dimensions are 1).
type ArrayArg struct {
	Buf   Buffer
	Shape [4]int
}

// Tracing is implemented by devices that can time the work on their streams
// for a runtime trace (qd.WithTrace, Program.StartTrace). It is the only
// tracing seam: package qd checks one atomic pointer per launch and, only
// when a trace is on, brackets each task and copy it enqueues with Begin
// and End on the stream it enqueues it on. A launch with tracing off never
// reaches this interface, so it costs nothing there.
type Tracing interface {
	// NewTraceTimer starts timing for rec: spans go to rec with Start and
	// End relative to rec.Epoch().
	NewTraceTimer(rec *trace.Recorder) (TraceTimer, error)
}

// TraceTimer times work on streams. Its methods are safe for concurrent
// use.
type TraceTimer interface {
	// Begin marks, on s, the start of the work enqueued next on s.
	Begin(s Stream) (TraceMark, error)
	// End marks, on s, the end of the work enqueued since Begin returned m,
	// and records span with Start and End set from the two marks once both
	// are reached (on the CPU when the end mark runs; on a GPU when Flush
	// resolves the timing events, or earlier).
	End(s Stream, m TraceMark, span trace.Span) error
	// Flush records every span whose marks were enqueued before it, waiting
	// for their work if it must.
	Flush() error
	// Close releases the timer's resources; spans not flushed are lost.
	Close() error
}

// TraceMark is a start mark returned by TraceTimer.Begin, opaque to the
// caller.
type TraceMark any
