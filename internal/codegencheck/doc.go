// Package codegencheck checks qd's code generators on every kernel that
// the tests run, without a GPU where it can (docs/semantics.md#testing):
//
//   - ptxas_test.go assembles the PTX of every kernel with ptxas, for each
//     architecture the installed ptxas knows;
//   - localmem_test.go checks with ptxas -v that the kernels of vectors,
//     matrices and decompositions keep their values in registers: no local
//     memory, no stack frame, no spills;
//   - amd_test.go compiles the C source of every kernel for AMD GPUs with
//     clang and through the HIP backend's real hiprtc path, and its CUDA
//     flavour to PTX;
//   - accuracy_test.go measures every math function of the kernel language
//     on every backend present against Go's math and the exact values of
//     internal/mathref (on a GPU: the code generators' math routines).
//
// The kernels are those of the behaviour suite (internal/suitekernels, and
// the Go sources of the root package's tests, found by parsing them), of
// the differential tests (internal/difftest), of the accuracy test and
// the examples of docs/kernels.md (internal/kerneldocs), of the kernel
// files of examples/ and of qd bench (internal/benchsuite/testdata).
// The tools come from .ci/install-ptxas.sh and .ci/install-amd-tools.sh;
// without them the checks skip with a notice, and with
// QD_REQUIRE_AMD_TOOLS=1 (set by .ci/run) the AMD ones fail. The package
// has tests only.
package codegencheck
