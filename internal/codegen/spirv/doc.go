// Package spirv compiles a lowered kernel (lower.Plan) to SPIR-V for qd's
// Vulkan backend, in pure Go: no glslang or shaderc at run time. Module is
// a word-level builder (types and constants made once per value, the
// sections in the order the specification requires); Generate writes one
// compute shader per task of the plan with it.
//
// # Entries
//
// Each task is a module of its own with one GLCompute entry point, "main".
// Its parameters are exactly the task's kabi slots, as push constants laid
// out in slot order, each at an offset aligned to its size: a scalar's
// bits (4 or 8 bytes), an array's 64-bit device address (Vulkan's buffer
// device address: SPIR-V 1.5's PhysicalStorageBuffer64 addressing), an
// extent as int64, the temporaries' address. Entry.Push says where each
// sits, so the launcher writes the block and pushes it with the dispatch.
//
// A parallel task is a grid-stride loop over the row-major flattening of
// its 1 to 3 extents, as in the other GPU generators; a serial task runs
// on one invocation. Locals that live across tasks are 8-byte slots of
// the launch's temporaries buffer.
//
// # Semantics
//
// The rules of package gosem where SPIR-V leaves a result undefined (the
// comment in expr.go lists them); float + - * are decorated NoContraction.
// Atomics are relaxed, at device scope; float add is the device's
// (SPV_EXT_shader_atomic_float_add, Options) or a compare-and-swap loop.
// Index checks (Options.Bounds) are the other GPU generators': the first
// index out of range of a launch is recorded in the violation record.
//
// Block loops (qd.Blocks) are a work group per block (blocks.go): shared
// arrays are Workgroup variables, a barrier follows each thread loop, and
// the collectives fold through a scratch array in a fixed order. A block
// size the launch computes is generated when a launch asks for it
// (Options.BlockSize, Entry.Deferred).
//
// # Tests
//
// internal/codegencheck validates the module of every kernel the tests
// run with spirv-val (from .ci/install-vulkan.sh); the Vulkan backend's
// tests run them on lavapipe, the whole gosem table included
// (TestGoSemantics), and the differential tests against native Go.
package spirv
