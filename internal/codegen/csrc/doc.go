// Package csrc compiles a lowered kernel (lower.Plan) to one C source: HIP
// for AMD GPUs, compiled by hiprtc at run time (package backend/hip) or by
// clang offline in the tests, and, from the same kernels with another
// prelude, CUDA for NVRTC (the CUDA backend's QD_CUDA_CODEGEN=csrc), which
// is how the source's semantics are run on NVIDIA hardware.
//
// The source is header-free: a small prelude of qd's own (prelude.go)
// defines the types, the thread and block indices, the exact floating
// primitives, bit casts and atomics for the target's vendor, and the helpers
// that give C Go's semantics. The source is C++17 in a C style (hiprtc and
// NVRTC compile C++); CompilerOptions and ClangOptions give the compiler
// options its meaning depends on (no fma contraction, IEEE division and
// sqrt, no type-based alias analysis). Options choose what Generate writes.
//
// # Entries
//
// Each task of the plan becomes one extern "C" entry, named and laid out by
// package kabi: its parameters are exactly the task's slots, in order — a
// scalar by value (bools as a 32-bit 0 or 1), an array's device address,
// an extent as int64, the temporaries' address — so the launcher passes a
// pointer to each value, as for PTX. The block size is a launch bound
// (amdgpu_flat_work_group_size, launch_bounds). A Unit collects the
// entries of several kernels into one source (tests compile every kernel
// of the behaviour suite in a few compiler runs); Compile and Generate
// make the source of one kernel.
//
// # Parallel tasks, serial tasks, groups
//
// A parallel loop over 1 to 3 extents is a grid-stride loop over the
// row-major flattening of its range, as in package ptx: correct for any
// grid, with 32-bit index arithmetic when the launch's total and stride
// both fit in 31 bits (one flag decided per launch) and 64-bit otherwise,
// in a single loop so the body is written once. A serial task runs on one
// thread. Locals that live across tasks are 8-byte slots of the launch's
// temporaries buffer, loaded at entry and written back as the PTX path
// does. Stream-parallel groups need nothing here: every task is its own
// entry, and the launcher runs each group's entries on its stream.
//
// # Block tasks
//
// A block loop (qd.Blocks, ir.Blocks) runs one GPU block of exactly its
// size per qd block, the entry striding over the blocks the grid does not
// cover (blocks.go). Its shared arrays are one __shared__ buffer, zeroed
// by all threads at the start of each block; every thread runs the
// block-level statements alike and each thread loop's body once, then a
// barrier. The collectives (BlockReduce, BlockScan) shuffle within warps
// (shfl.sync on CUDA, with redux.sync for 32-bit integers on sm_80 and
// later; ds_bpermute on AMD, wavefronts of the target's width), then meet
// once in a double-buffered scratch of one entry per warp; a reduction's
// result has the same bits in every thread. Shared-memory atomics are
// their own primitives (atom.shared on CUDA, work-group scope on AMD);
// index checks cover shared arrays, with their constant extents.
//
// # Semantics
//
// Every value is computed into a local declared at the top of the entry,
// operands before their operation, because C leaves the order of operand
// evaluation unspecified and Go does not (it shows once an operand is an
// atomic); && and || run their right side only when Go would. Where C's
// meaning differs from Go's the source calls a prelude helper, one per
// rule of package codegen/gosem, whose table the tests run on the host
// (gosem_test.go):
//
//   - integer + - * wrap (computed on unsigned types: signed overflow is
//     undefined in C); / and % truncate, MinInt / -1 is MinInt with
//     remainder 0; division by zero, which Go panics on and the GPU cannot
//     trap, gives all ones (remainder: the dividend) rather than C's
//     undefined behaviour;
//   - shifts by a count of the width or more give 0 (or the sign for >> of
//     a negative signed value); a negative signed count counts as huge;
//   - float to integer conversion truncates, saturates out of range and
//     gives 0 for NaN, as PTX's cvt.rzi;
//   - min and max of floats are NaN when either operand is, and order -0
//     before +0; math.Round rounds half away from zero without double
//     rounding;
//   - float + - * / are IEEE and correctly rounded, never contracted.
//
// Array indices are not checked on the GPU, as in the PTX path.
//
// An array of records (Go structs and fixed arrays) arrives as bytes and
// is accessed a leaf at a time through a pointer of the leaf's type; the
// 8- and 16-bit integers are C's char and short types, whose conversions
// are Go's, except from floats, which go through int32 as Go converts
// (values.go).
//
// # Atomics
//
// The prelude's atomics are relaxed at device scope, as PTX's atom: on AMD
// clang's __hip_atomic_* builtins, on CUDA inline PTX atom and red (red
// where the old value is unused). Signed integer add, and, or, xor use the
// unsigned forms (the same bits); exchange and compare-and-swap work on
// the bits of floats; float min and max are compare-and-swap loops with
// Go's min and max, as in the PTX path.
//
// # Reductions
//
// A reduction of scope Whole (lower.Reduction: an add, min or max whose
// address is the same in every iteration and whose old value is unused)
// is folded into a per-thread accumulator, combined per block in shared
// memory between barriers, and written by one atomic per block
// (reduce.go). Reductions of scope Innermost keep their per-iteration
// atomics.
//
// # Math
//
// The exact functions (sqrt, abs, floor, ceil, trunc, round) are prelude
// primitives. The transcendental ones are package devmath's instruction
// lists rendered as C (devmath.CFunc): the same operations as the PTX path,
// one C statement per instruction, so they compute the same bits given
// exact primitives (checked on the host against devmath's interpreter).
// On AMD the primitives are clang's builtins; their exactness (sqrt
// correctly rounded) is LLVM's AMDGPU lowering's, not checked on hardware
// here (docs/amd.md).
//
// # Targets
//
// TargetFor reads a processor name: gfx9 parts (CDNA: gfx90a, gfx942) run
// wavefronts of 64, RDNA parts (gfx10 and later, e.g. gfx1100) 32 in HIP's
// default mode, NVIDIA warps 32. The width is a per-target constant of the
// prelude (QD_WAVE_SIZE), checked against the AMD compiler's own at
// compile time.
package csrc
