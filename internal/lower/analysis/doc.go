// Package analysis answers the questions a code generator asks of a
// lowered task before it chooses how to write a loop: which bodies may be
// unrolled, which loops are counted, which 1-D bodies are elementwise,
// which indices are affine in the loop variables, and which loads may be
// issued ahead of a trip's stores. The answers are facts of the IR and of
// the plan (lower.Plan's temporaries, lower.Task's reductions), the same
// for every target; what a generator does with them (unroll factors,
// vector widths, size limits, register budgets) is its own and stays in
// its package. Package codegen/ptx asks them today; csrc, and a SPIR-V
// generator, can ask the same functions instead of deriving the rules
// again.
//
// The functions are queries, computed when asked, so a backend that does
// not ask (the CPU's closure compiler) pays nothing for them; they read
// the IR and never change it.
//
// # Unrolling
//
// Unrollable is the parallel-loop question (may the statements of several
// iterations be interleaved?) and Counted the serial one (is this a loop
// v := a; v < e; v++ whose trips may be run several at a time?). Both
// report the body's size so that a generator can bound the code it adds.
//
// # Elementwise bodies
//
// Elementwise finds a 1-D loop that touches every array only at [i], i its
// variable, with one element size, reading each element before its one
// store: then runs of consecutive iterations may move their elements with
// one wide load and one wide store per array.
//
// # Affine indices
//
// An index is affine when it is a loop variable of type int64, or a local
// declared (never assigned) as one plus or minus integer constants,
// directly or through other such locals. ParallelAffine finds the accesses
// of a multi-dimensional parallel body whose indices all are, so that each
// is a per-trip base plus a constant offset; SerialAffine does the same
// for the 1-D arrays of a counted serial loop over its counter;
// HoistableLoads lists the affine loads a straight-line body makes before
// its first store, which may be issued before the previous iteration's
// stores (iterations of a parallel loop are unordered).
package analysis
