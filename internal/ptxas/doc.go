// Package ptxas finds NVIDIA's PTX assembler and runs it, so that tests can
// check every PTX text qd emits without a GPU (docs/semantics.md#testing). CI installs ptxas
// with .ci/install-ptxas.sh; where it is absent, callers skip with Reason.
package ptxas
