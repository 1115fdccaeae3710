// Package suitekernels holds the kernels that the behaviour suite (package
// qd's own tests) builds with the IR builder of internal/ir, to test the
// runtime without the front end, the one Go source of the suite that is
// generated rather than written out (ReduceSource), and the source of the
// compile benchmarks' kernel (Kernel20).
//
// The suite's tests take their kernels from here, so that the checks of the
// code generators (internal/codegencheck: every kernel assembled by ptxas
// and compiled for AMD targets) compile the very same kernels: All lists
// every kernel built here. Three checks keep it that way: this package's
// test, that every exported constructor is called in All; the root
// package's TestSuiteKernelsCovered, that its tests build no kernel of
// their own (except ones meant to be rejected); and its buildKernel, which
// refuses a kernel that is not in All.
//
// Only tests import it, and internal/benchsuite for Kernel20.
package suitekernels
