// Package mathref computes the exact values of the math functions that
// kernels support, with math/big, for the accuracy tests: the end-to-end
// test (internal/codegencheck, accuracy_test.go) and the devmath model
// tests measure results against it.
//
// Go's math is no yardstick for a ≤ 2 ulp promise: it is itself thousands
// of ulps off in places (Acos and Log2 near 1, Pow with large |y|, Sin of
// large arguments, Exp above 709.09 on amd64), so the references here work
// at Prec bits (100 beyond a double) and reduce trigonometric arguments with
// π to PiPrec bits, enough for any finite double. The constants come from
// series (π by Machin's formula, ln 2 and ln 10 from atanh), independently
// of the constants the code under test derives, so a wrong constant there
// cannot hide in the reference.
//
// It is test support, in non-test files only so that two test packages can
// share one copy; nothing in qd's production code imports it.
package mathref
