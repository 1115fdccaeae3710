// Package nvrtc is the CUDA backend's second code generator, chosen with
// QD_CUDA_CODEGEN=csrc: the C source of package codegen/csrc (the source
// the AMD backend compiles with hiprtc) with its CUDA prelude, compiled to
// PTX by NVRTC, opened at run time like libcuda (QD_NVRTC names one). It
// runs that C source, semantics and all, on NVIDIA GPUs, for tests and
// benchmarks; the default generator is package codegen/ptx.
package nvrtc
