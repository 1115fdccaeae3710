// Package cuda is the NVIDIA driver of the GPU runtime (package gpu):
// libcuda's functions bound by their versioned names, the primary context
// of each device, the CUresult table and its classes, device properties,
// and PTX generation (package codegen/ptx) JIT-compiled by the driver with
// its log in errors. Everything else — streams, events, memory, launches,
// tracing — is the runtime's.
//
// # Driver bindings
//
// libcuda.so.1 (nvcuda.dll on Windows) is opened once, on first use,
// through the system loader; every function is resolved by the versioned
// name the package is written against (cuMemAlloc_v2, cuStreamDestroy_v2,
// ...: the unversioned exports are legacy ABIs, not aliases); bindings
// lists them all. macOS has no CUDA driver: the backend says so. Before
// cuInit, CUDA_DEVICE_MAX_CONNECTIONS is set to 32 unless the user set it
// (with the default of 8, more than 8 streams share hardware queues and
// serialize falsely).
//
// # Contexts
//
// A device uses the primary context of its ordinal, shared with any other
// library in the process that uses the CUDA runtime API; the runtime makes
// it current with cuCtxSetCurrent on every call path. Fatal codes (illegal
// address, launch failure, ...) are classified gpu.Fatal: the runtime marks
// the device lost.
//
// # Code
//
// Build generates PTX for the device's compute capability with the oldest
// PTX ISA that knows it and that the driver accepts (ptx.TargetFor); Load
// JIT-compiles it with cuModuleLoadDataEx, returning the JIT's error log
// in the DriverError of a failure.
//
// With QD_CUDA_CODEGEN=csrc (package nvrtc), Build instead writes the kernel as
// the C source of package codegen/csrc with its CUDA prelude and has NVRTC
// (libnvrtc, opened like libcuda; QD_NVRTC names one) compile it to PTX,
// which Load takes as usual. That runs on NVIDIA GPUs the very source the
// AMD backend compiles with hiprtc, so the behaviour suite checks its
// semantics; an NVRTC failure reports NVRTC's log and the numbered source.
package cuda
