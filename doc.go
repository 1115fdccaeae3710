// Package qd is a GPU compute framework for Go: kernels written in Go syntax
// are compiled at run time for NVIDIA GPUs (PTX through the CUDA driver),
// AMD GPUs (C source through HIP's hiprtc; compiled and checked for gfx90a,
// gfx942 and gfx1100 without AMD hardware, never yet run on an AMD GPU) or
// the CPU, and run on streams, ordered by events, so that independent work
// overlaps. Without an AMD GPU, WithArch(AMDGPU) returns an error wrapping
// [ErrUnsupported] that says so, and [Auto] skips it.
//
// A [Program] owns one device and everything made on it. Kernels are Go
// functions marked //qd:kernel, usually in a file of their own embedded with
// //go:embed; [Compile] turns them into a [Module]:
//
//	p, err := qd.Init()            // CUDA if present, else AMDGPU, else the CPU
//	defer p.Close()
//	mod, err := qd.Compile(p, src) // src holds func axpy(a float32, x, y []float32)
//	axpy, err := mod.Kernel("axpy")
//	x, err := qd.NewNdarray[float32](p, 1024)
//	y, err := qd.NewNdarray[float32](p, 1024)
//	s, err := p.NewStream()
//	err = axpy.LaunchOn(s, float32(2), x, y) // enqueue on s; returns at once
//	err = s.Synchronize()                    // wait for it
//	out, err := y.ToSlice()                  // a copy of y's elements
//
// The package example runs this program. ARCHITECTURE.md in the repository
// maps how a kernel goes from Go source to a launch, and docs/ has a page per
// backend and the decided semantics (docs/semantics.md).
//
// # Host API and kernel language
//
// The package holds two things: the host API (Init, Program, Stream, Event,
// Ndarray, HostArray, Compile, Module, Kernel, Graph, and their options and
// errors) and the kernel language, the functions and types kernels call
// ([StreamParallel], [Serial], [NDRange], [AtomicAdd], [Sqrt] and the other
// math functions). The kernel language's functions are ordinary Go with native
// implementations, so a kernel called from Go runs serially as a
// reference; docs/kernels.md is its reference page.
//
// # Streams and events
//
// Every launch names its stream ([Kernel.LaunchOn]) or uses the Program's
// default stream ([Kernel.Launch]); there is no hidden "current stream".
// Work on one stream runs in order; work on different streams may overlap.
// Streams are ordered with each other only by events: e.Record(s1);
// s2.WaitEvent(e) makes later work on s2 wait for the work recorded on s1,
// without blocking the host ([Event.Record], [Stream.WaitEvent],
// [Stream.WaitStream]). In this package "Wait" names only such device-side
// ordering; the host waits with Synchronize ([Stream.Synchronize],
// [Event.Synchronize], [Program.Synchronize] for everything), or with
// SynchronizeContext to give up when a context is done.
//
// Host access is safe without extra calls: [Ndarray.CopyToHost] and
// [Ndarray.ToSlice] return data that includes every write enqueued before
// them on any stream, and [Ndarray.Close] frees memory only after the work
// that uses it. [HostArray.Data] is the page-locked memory itself, not a
// copy: it waits for the copies enqueued that use it.
//
// # Several devices
//
// [WithDevice] chooses the device; a program that uses several GPUs opens a
// Program per device. A stream may wait for an event or a stream of another
// Program of the same backend (on the device, across GPUs), and
// [Ndarray.CopyFromOn] copies between their arrays (a peer copy between
// GPUs, direct where the devices reach each other's memory). Objects of
// another backend's Program are [ErrForeign]. See docs/multigpu.md and
// examples/multigpu.
//
// # Stream-parallel kernels
//
// A kernel whose top-level statements are all [StreamParallel] blocks runs
// each block on its own stream: the first on the launch stream, the others
// on streams borrowed from the Program's pool, forked from and joined back
// into the launch stream with events, so the host never waits.
//
// # Graphs
//
// [Stream.Capture] records, without running it, the work a function
// enqueues on a stream and on the streams forked from it by events
// (stream-parallel kernels included) and joined back; [Graph.LaunchOn]
// replays it on any stream with one call, at the host cost of about one
// launch, and [Graph.Update] re-captures it with other arguments. A call
// that would make the host wait for a capturing stream fails with
// [ErrCapturing], and so does the capture. The CPU backend records and
// replays graphs too, so the same code runs on every backend.
//
// # Stopping work
//
// [Kernel.LaunchContext] takes a context. On the CPU, when it is done, the
// launch's kernel stops at its next loop iteration (or block of parallel
// iterations) and the launch fails with the context's error; on GPUs the
// context is checked only before the launch is enqueued, since a running
// GPU kernel cannot be stopped. [Stream.SynchronizeContext] gives up
// waiting when its context is done. [Program.Close] stops the CPU work
// still in flight, so a kernel that never ends cannot block it.
//
// # Errors and resources
//
// Every call that can fail returns an error, and every error matches one
// of the sentinel errors with errors.Is or is an [*ArgumentError]:
// [ErrClosed] (a closed object), [ErrInvalidArgument] (bad input; every
// ArgumentError matches it), [ErrForeign] (an object of an unrelated
// Program), [ErrUnsupported] (what the backend cannot do; it also matches
// errors.ErrUnsupported), [ErrOutOfMemory], [ErrDeviceLost] (a GPU context
// a fault has poisoned, for the rest of the process) and [ErrCapturing] (a
// call a graph capture cannot hold). Bad kernel arguments are
// *ArgumentError values naming the kernel and the parameter. Every object
// has an idempotent Close; objects dropped without Close are released by a
// cleanup once unreachable, at a time the garbage collector chooses. On a
// GPU such a release of an array from NewNdarray waits for the whole device
// (cuMemFree does), so kernels launched around it run one after the other:
// close arrays when kernels must overlap.
package qd
