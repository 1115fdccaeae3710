// Package hip is the AMD GPU driver of the GPU runtime (package gpu): the
// HIP runtime's functions bound from libamdhip64, the hipError_t table and
// its classes, device properties, and code generation — package
// codegen/csrc's C source compiled by hiprtc for the device's gfx target,
// cached on disk, loaded with hipModuleLoadData. Everything else (streams
// with priorities, events, stream-ordered memory, zero fill, launches,
// tracing) is the runtime's: HIP's module API matches CUDA's driver API
// call for call, and callNames maps one to the other.
//
// What is verified, and how (docs/amd.md): every kernel the tests emit is
// compiled by clang for gfx90a, gfx942 and gfx1100 and by this package's
// hiprtc path for gfx90a (Debian's ROCm 5.2), and the no-device errors are
// checked, on machines without an AMD GPU. The semantics of the C source
// are run on NVIDIA GPUs through NVRTC (the CUDA backend's
// QD_CUDA_CODEGEN=csrc). Nothing here has run on an AMD GPU.
//
// # Libraries
//
// libamdhip64 (ROCm 7, 6 or 5; amdhip64_N.dll on Windows, untested) is
// opened on first use through the system loader. hiprtc is bound from
// libhiprtc where it exists (ROCm 6 split it out; ROCm 7 has it only
// there), else from libamdhip64 (ROCm 5). Opening needs no device, so the
// compiler works on any machine with the libraries. hipInit then decides
// whether there is a device: on a machine without one, ROCm 5.2 answers
// hipErrorInvalidDevice (101) and hipGetDeviceCount hipErrorNoDevice
// (100); either is an error wrapping gpu.ErrNoDevice that says no AMD GPU
// was found, so Auto moves on to the CPU and WithArch(AMDGPU) explains
// itself.
//
// # Devices
//
// HIP has no context to retain: a device is made current on a thread with
// hipSetDevice(ordinal). Properties come from hipDeviceGetAttribute (the
// attribute numbers are the same in ROCm 5.2 and 6.3), the target name
// (gcnArchName, e.g. "gfx90a:sramecc+:xnack-") from hipGetDeviceProperties,
// read at the offset of the struct layout the runtime exports (ROCm 6's
// hipGetDevicePropertiesR0600, else the ROCm 5 layout).
//
// # Compiling in a child process
//
// hiprtc runs LLVM inside the calling process, and a compiler crash takes
// that process with it: Debian's ROCm 5.2 hiprtc aborts (munmap_chunk():
// invalid pointer, in comgr) for gfx940, gfx942 and gfx1100. So every
// compile runs in a child process, and a child that dies without answering
// is an error (wrapping backend.ErrUnsupported, quoting the child's
// message) in a process that carries on.
//
// The child is this very executable, re-executed with QD_HIP_COMPILER_CHILD
// set: the init function of this package sees the variable, reads the
// request (source, name, options) as JSON on stdin, runs hiprtc, writes
// the code object or hiprtc's error with its log as JSON on stdout and
// exits before main. That was chosen over a helper binary because a helper
// would have to be built and shipped beside every program: any binary that
// can use this backend contains this package, so it can always compile
// for itself, with the same libraries and the same purego bindings. Its
// costs: a process start per compile (a few milliseconds beside hiprtc's
// 0.3–2 s, and only on a cache miss); the child runs the init functions
// of the packages initialised before this one; and the executable must
// still exist on disk (os.Executable).
//
// # Cache
//
// Code objects are cached in os.UserCacheDir()/qd/hip (QD_HIP_CACHE names
// another folder, "off" disables it), one file per key: the SHA-256 of the
// source, the compile options (which carry the target) and the compiler
// (the HIP runtime's version and hiprtc's library). A hit reads one file;
// files are written aside and renamed into place, so concurrent processes
// share the cache safely.
//
// # Floating point
//
// hiprtc compiles with contraction off and IEEE division and sqrt
// (csrc.CompilerOptions), so results match the CPU and PTX paths bit for
// bit where those are exact — to the extent that LLVM's AMDGPU lowering of
// sqrt and division is correctly rounded, which LLVM documents since
// version 17 (ROCm 6) and which was not checked on hardware here.
package hip
