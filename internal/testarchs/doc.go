// Package testarchs chooses the backends a test binary's suites run on:
// the CPU always, and each GPU backend that opens on the machine. The GPUs
// are probed once per binary, and one handle of each GPU backend found
// stays open until the binary ends, so that the driver keeps its context
// and every test's own Init and Close cost microseconds instead of most of
// a second. With QD_GPU_RUN=1 (set by the GPU runner) a missing CUDA (the
// first GPU arch given to New) fails the tests that ask, so a run on a GPU
// machine cannot pass by running on the CPU alone.
//
// The behaviour suite (package qd's own tests) uses it, and so do the
// differential tests (internal/difftest) and the accuracy test
// (internal/codegencheck), which run kernels through qd's API.
// Package qd's tests cannot import a package that imports qd, so this one
// does not: the arch type and how to open an arch are the caller's (New).
// Only tests import it.
package testarchs
