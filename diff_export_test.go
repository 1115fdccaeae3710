package qd

import "testing"

// SuiteArchs lets the external test package (qd_test: the differential and
// Go-source tests, whose kernels must import qd) run on the archs of the
// behaviour suite, with the same GPU probe, the same kept-alive contexts and
// the same rule: with QD_GPU_RUN=1 a missing CUDA fails the test.
func SuiteArchs(t *testing.T) []Arch { return suiteArchs(t) }
