// Package cuda is the NVIDIA backend: bindings to the CUDA driver API
// (libcuda, opened at run time through purego, so the package builds with
// CGO_ENABLED=0 and a binary runs on machines without a GPU) and a
// backend.Device on top of them.
//
// # Driver bindings
//
// libcuda.so.1 (or libcuda.so) is opened once, on first use; every symbol is
// resolved with Dlsym, by the versioned name the package is written against
// (cuMemAlloc_v2, cuStreamDestroy_v2, ...: the unversioned exports are
// legacy ABIs, not aliases). symbolTable lists them all. Every call goes
// through purego.SyscallN, never through reflection-based RegisterFunc
// wrappers: a launch costs about 0.1 µs of call overhead instead of 1 µs.
// Hot paths (launch, event record, stream wait, async copies, queries)
// pass argument slices that already exist (pooled frames, per-launch
// blocks, per-object read-only lists), so they do not allocate.
//
// Device addresses are uint64/uintptr, never unsafe.Pointer. Go memory
// handed to the driver is heap memory kept alive across the call.
//
// Every CUresult other than success becomes a *DriverError carrying the
// driver's name and text for the code (and the JIT log for PTX failures).
// Fatal codes (illegal address, launch failure, ...) poison the device:
// every later call fails fast with an error wrapping ErrContextPoisoned.
//
// # Threads and the context
//
// The device uses the primary context of its ordinal (shared with any other
// library in the process that uses the runtime API). The current context is
// per OS thread and goroutines move between threads, so every call path
// locks its goroutine to the thread, makes the context current, makes its
// driver calls and unlocks. Making it current is a single cuCtxSetCurrent
// (ctxCheckFirst switches to a cuCtxGetCurrent compare). Before cuInit,
// CUDA_DEVICE_MAX_CONNECTIONS is set to 32 unless the user set it.
//
// # Launches
//
// Compile generates PTX (package codegen/ptx) for the device's compute
// capability and driver, JIT-loads it with cuModuleLoadDataEx and looks up
// every task's entry. Loaded modules are cached by the plan's hash and kept
// until Device.Close; Module.Close only ends that handle's use.
//
// A launch is Begin (pack every task's parameter values into a pooled
// per-call block, size the grids, take the temporaries), Run per task
// (cuLaunchKernel with the block's kernelParams) and End (give the
// temporaries back). Temporaries are allocated in stream order:
// cuMemAllocAsync/cuMemFreeAsync where the device supports memory pools,
// else a free list of blocks recycled once an event recorded by End shows
// the launch that used them is done.
//
// # Tests
//
// Tests that need a GPU skip without one; with QD_GPU_RUN=1 they fail
// instead, so a run on a GPU machine cannot pass by skipping.
package cuda
