// Package gosem is the one table of Go's semantics that every qd code
// generator implements where the target's own operation differs from Go's
// or Go leaves the result to the implementation: integer division and
// remainder by zero, signed division's truncation and MinInt / -1, shift
// counts at or past the width and negative ones, float-to-integer
// conversion out of range and of NaN, and min and max with NaN or zeros of
// both signs.
//
// A rule (Rules) says what Go does (defines the result, panics, or leaves
// it to the implementation) and what each backend does: give the value qd
// requires, raise a run-time error (the CPU, where Go panics), leave the
// value unspecified (PTX's integer division by zero, which the hardware
// decides), give the host's own Go result, or decline to evaluate (kabi's
// host evaluator). Its cases (Cases) are data: an operation, its types,
// its operands and the result qd requires, as ir.Const bit patterns.
// Reference computes each case natively in Go from the same data, so
// where Go defines the result the table is checked against Go itself.
//
// Every backend runs the whole table in its tests through Verify: the
// CPU's closure compiler (package codegen/cpu) executes each case's
// kernels; the C generator's source (package codegen/csrc) is compiled and
// run on the host; the PTX (package codegen/ptx) is assembled by ptxas and
// executed by a model of the PTX ISA's documented semantics; and kabi's
// host evaluator, which sizes grids with the GPU's semantics, evaluates
// each case's expression. A new rule or case is therefore tested on every
// backend at once; the SPIR-V generator's modules run it on a Vulkan device
// (package backend/vulkan's TestGoSemantics, on lavapipe in CI).
//
// The package sits beside the generators because it binds them, and
// depends on package ir only, so that kabi, below them, can be checked
// against it too. It holds the data, the native reference, and Saturate,
// FloatToInt's required result as a function, with which kabi's host
// evaluator converts; the generators import it in their tests only, and
// their code names in comments the rules it implements.
package gosem
