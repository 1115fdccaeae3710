// Package gpu is the GPU runtime, written once for every vendor: devices,
// streams with priorities, wrapped streams, events and timing, device
// memory with copies and zero fill, the stream-ordered temporaries of
// launches, the launcher (Begin, Run, End), tracing with timing events, and
// the raw-launch reference of `qd bench`. A Device implements
// backend.Device over a Driver.
//
// # Drivers
//
// A Driver is what a vendor supplies: its bound functions (Calls), how it
// classifies and names result codes, how it opens a device and makes it
// current on a thread, and how it turns a lowered kernel into loaded code
// (Build, then Load). The vendors' APIs match call for call — the same
// arguments in the same order for streams, events, memory, modules and
// launches — so the table holds function addresses and the runtime calls
// them with purego.SyscallN directly: the hot path is one SyscallN per
// driver call, and a failing result is classified (Driver.Classify) only on
// failure. Each Fn carries the C name it was bound as, so an error names
// the function that failed without the call site spelling it again.
//
// Libraries are opened with OpenLibrary through the operating system's
// loader (dlopen on Unix, LoadLibrary on Windows), so binaries build with
// CGO_ENABLED=0 and run where no driver is installed.
//
// # Threads and the current device
//
// The current device (a context) is per OS thread and goroutines move
// between threads, so every call path locks its goroutine to its thread,
// makes the device current with one Calls.MakeCurrent, makes its driver
// calls and unlocks.
//
// # Errors
//
// A failing result becomes a *DriverError naming the driver function, the
// vendor's name and text for the code, and its Class. The classes map to
// the neutral sentinels of package backend (ErrOutOfMemory, ErrDeviceLost,
// ErrUnsupported) and to ErrInvalidCode and ErrNoDevice. A Fatal code (an
// illegal address, a trap) marks the device lost: every later call fails
// fast with an error wrapping backend.ErrDeviceLost and the first failure.
//
// # Launches
//
// Compile asks the driver to Build the plan (the kernel's kabi layout and
// its image), loads it and looks up every task's entry. Modules are not
// cached here: package qd keeps one cache per Program.
//
// A launch is Begin (pack every task's parameter values into a pooled
// per-call block, size the grids with kabi.GridFor, take the temporaries),
// Run per task (one Calls.LaunchKernel with the block's parameter pointers)
// and End (give the temporaries back). A block belongs to one call from
// Begin to End, so launches of one kernel on different streams at once
// never share argument storage, and a steady stream of launches allocates
// nothing. Temporaries are allocated in stream order (MemAllocAsync and
// MemFreeAsync where the device has memory pools), else from a free list of
// blocks recycled once an event recorded by End shows the launch that used
// them is done.
//
// # Tests
//
// The package's external tests run one corpus against every driver with a
// device (today CUDA) and against the fake driver of package fakedriver,
// which simulates a device on the host so that the runtime's driver paths
// run on every machine; tests of what kernels compute skip on it, and a
// test that leaves anything allocated on it fails. Tests that need a GPU
// skip without one; with QD_GPU_RUN=1 they fail instead, so a run on a GPU
// machine cannot pass by skipping.
package gpu
