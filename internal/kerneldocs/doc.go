// Package kerneldocs checks the examples of docs/kernels.md, the kernel
// language's reference page, so that the page cannot drift from the
// language. Its fenced Go blocks are of three kinds (Blocks):
//
//   - ```go with a //qd:kernel line: an example, the body of a kernel file
//     without its package clause (imports of qd and math, constants, type
//     aliases, helpers, kernels). The test (examples_test.go) compiles it
//     with qd.Compile and runs every kernel on every backend present
//     against the same Go code run natively, through internal/diffcheck,
//     the differential tests' harness;
//   - ```go refused: a kernel file that qd.Compile must refuse, with an
//     ERROR marker (/* ERROR "text" */ after the token the error is at, or
//     // ERROR "text" at the end of the line, for its last token) for each
//     error, whose message contains the text; errors and markers match one
//     to one;
//   - any other ```go block: a snippet (host code, a fragment), which must
//     parse as Go declarations or statements.
//
// Every Go block must be gofmt-formatted, since readers copy them.
//
// The native side is generated: Generate writes every example into
// examples_gen_test.go with its top-level names prefixed (examples reuse
// names), and a test fails when that file is stale. After editing the
// page, run go generate ./internal/kerneldocs.
//
// The inputs come from each kernel's signature (examples_test.go says
// which), so an example must be correct for them: index arrays within
// their lengths, and derive indices from the loop's variables or from
// integer data in [0, 100).
//
// Examples also returns the examples' sources for internal/codegencheck,
// which compiles every kernel qd's tests run with every code generator.
package kerneldocs

//go:generate go run ./gen
