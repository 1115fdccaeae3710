// Package ptx compiles a lowered kernel (lower.Plan) to PTX text, which the
// CUDA driver JIT-compiles; no LLVM or NVRTC is involved.
//
// Each task of the plan becomes one .entry, named and laid out by package
// kabi: its .param list is exactly the task's kabi slots, in order (a scalar,
// an array's device address, an extent as int64, the temporaries' address),
// so the launcher passes a pointer to each value through cuLaunchKernel's
// kernelParams. Generate computes the layout and writes the text.
//
// # Parallel tasks
//
// A parallel loop over 1 to 3 extents is a grid-stride loop over the
// row-major flattening of its range: correct for any grid size, and a launch
// whose total is ≤ 0 exits at once. The extents are evaluated once at kernel
// start. The flat index and its division into the loop variables are 32-bit
// when, for this launch, the total and the grid's thread count are both below
// 2^31, and 64-bit otherwise; the kernel decides this itself from the values
// (one uniform predicate), so no separate variant or parameter exists and
// totals of 2^31 and more stay correct. kabi.Task.HostTotal gives the
// launcher the total when the extents depend only on scalar parameters,
// array shapes and constants.
//
// A 1-D task whose body is simple — straight-line declarations, assignments
// to its own locals and stores, with no atomic and no transcendental call,
// and small (maxUnrollNodes) — runs a main loop that does unroll (2)
// iterations per trip, i, i+stride, ..., followed by the one-element loop for
// the rest. The iterations are interleaved statement by statement (all
// right-hand sides, so all loads, of a statement before its stores), which
// gives each thread several loads in flight. This reorders memory accesses
// only across iterations, which are independent in any race-free kernel;
// within an iteration the order is kept. Setting unroll to 1 turns it off.
//
// # Serial tasks
//
// A serial task runs on one thread (launched 1×1; any extra thread leaves).
// Locals that live across tasks are per-launch temporaries: slot s of
// plan.TempSlot is 8 bytes at offset 8·s of the temporaries buffer, holding
// the value in its natural width (bools as one byte 0 or 1). A task loads
// the temporaries it uses at entry; a serial task writes back those it set at
// its end, a parallel one at each assignment.
//
// # Semantics
//
// Arithmetic follows Go: integers wrap; / and % truncate, and MinInt / -1 is
// MinInt with remainder 0; shifts by a count of at least the width give 0 (or
// the sign for >> of a negative signed value); float operations are IEEE,
// correctly rounded (add/sub/mul/div .rn, sqrt.rn), never contracted into an
// fma, and never .approx; float compares are ordered except != (setp.neu);
// min and max propagate NaN and order -0 before +0; && and || branch so the
// right operand runs only when needed. These are the rules of package
// codegen/gosem, whose table the tests run through a model of the PTX
// ISA (gosem_test.go). Where Go panics the GPU cannot:
//
//   - integer division by zero gives an unspecified value (PTX leaves it to
//     the hardware; no trap);
//   - array indices are not checked against the extents: an index out of
//     range reads or writes whatever lies there, or faults the launch;
//   - float-to-integer conversion out of range saturates and NaN gives 0
//     (Go leaves both implementation-defined).
//
// atom.add.f32 flushes subnormal inputs and results to zero (PTX ISA); the
// other atomics are exact. Float atomic min and max are compare-and-swap
// loops.
//
// The transcendental functions (exp, sin, pow, ...) are .func subroutines
// from package devmath, emitted once per module before the entries and
// called with call (call.uni in serial tasks).
//
// # Values
//
// An array of records (Go structs and fixed arrays) is addressed a leaf
// at a time: the element's address (row-major index times Rec.Size) plus
// the leaf's offset, an immediate of the access. The 8- and 16-bit
// integers live in 32-bit registers, sign- or zero-extended from their
// width, and move at their own width; bit casts are register moves
// (values.go). On sm_90 with PTX ISA 8.1, two or four atomic float32 adds
// in a row on adjacent leaves of one element become one vector add
// (vecred.go).
//
// # Target
//
// TargetFor picks .target sm_XY equal to the device's compute capability and
// the lowest .version that knows that target and every instruction used,
// checked against what the driver accepts.
package ptx
