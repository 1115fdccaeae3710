// Package cpu compiles a lowered kernel (*lower.Plan) into Go closures that
// the CPU backend runs.
//
// Compilation happens once per plan; running never walks the IR and never
// uses reflection. To keep closure-call overhead away from the per-element
// cost, a parallel task runs a batch of up to Batch consecutive iterations
// ("lanes") through each closure: an expression closure fills a lane vector
// with one tight Go loop, so one indirect call is paid per batch, not per
// element.
//
// Values are either uniform (the same for every lane of a batch: constants,
// scalar parameters, array lengths, temporaries, the outer indices of a
// row-aligned batch, and operations over those), computed by a scalar closure,
// or varying, computed into a lane vector. The innermost parallel index is
// also known to be contiguous (lane k holds base+k), so loads and stores
// indexed by it (plus a uniform offset) become a bounds check on the two end
// lanes and a copy, or no copy at all.
//
// Three fast paths keep common kernels close to hand-written loops: a
// contiguous store computes its value straight into the array (and an
// assignment straight into the variable) when every lane is active; x*s + y
// with s uniform is one loop (rounded like two operations, never fused);
// and comparing the contiguous index with a uniform value yields a lane
// set (one run of lanes, or all lanes but one run), and so do !, && and ||
// of such comparisons, so an if guard such as j > 0 && j < m-1, or a border
// test such as i == 0 || j == 0 || i == n-1 || j == m-1, costs no per-lane
// test: when every lane is active, each branch runs over its runs as
// batches of their own (frame.sub), keeping the fast paths above, and
// otherwise narrows the mask by slicing (ranges.go). A declaration whose
// zero value is never read (var r T, then r assigned on every path, as an
// inlined helper's result is) compiles to nothing (deadinit.go).
//
// Short rows (2-D and 3-D ranges with an innermost extent below rowMin)
// run as flat batches that span rows; an access a[i][j] by the loop's own
// indices is still contiguous there when the array's inner lengths are
// the inner extents (access.flat).
//
// Control flow runs SIMT style. The active lanes are a mask, kept as a sorted
// list of lane numbers plus an "all lanes" flag so the straight-line body of
// a kernel pays nothing for masking. If runs each branch on the lanes that
// take it and skips a branch no lane takes; a serial loop runs while any lane
// is still in it; break and continue record, per lane, which loop the lane is
// leaving, and every block drops such lanes after the statement that made
// them leave. && and || evaluate their right operand only on the lanes that
// need it. Loads, stores, atomics, integer division and shifts by a signed
// count touch only active lanes, because inactive lanes may hold garbage;
// pure arithmetic runs over the whole vector, which is cheaper than testing
// the mask.
//
// Locals that hold the same value in every lane (the counter of an inner
// loop with a uniform trip count) live in scalar slots instead of lane
// registers (uniform.go), so loops on them need no mask.
//
// Serial tasks run as a single lane through the same machinery. They hold
// little work in practice (set-up code between parallel loops), and one code
// path means one set of semantics to test; all their locals are uniform,
// so they run as scalar closures, a few closure calls per statement.
//
// An atomic add, min or max whose result is unused, at an address the
// same for every lane of a batch, is a reduction (SPEC §3): the batch's
// values combine in lane order and one atomic per batch writes the total
// (reduce.go).
//
// Runtime errors (index out of range, integer division by zero, negative
// shift counts) are recorded in the frame and returned by Task.Run as
// *ir.Error values positioned at the statement; nothing panics out of Run.
// Frames (lane registers and mask storage) are pooled per task, so Run does
// not allocate in steady state.
package cpu
