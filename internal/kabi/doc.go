// Package kabi is the kernel ABI shared by the GPU code generators and the
// GPU launcher: what one compiled kernel looks like from the host.
//
// A lowered kernel (lower.Plan) becomes one device entry per task. Layout
// computes, from the IR and before any code is written, each entry's name,
// its parameter slots, its block size and the host-side count of its
// iterations. A code generator (package codegen/ptx, codegen/csrc) writes an
// entry whose parameter list is exactly Task.Slots, in that order; the
// launcher (package backend/gpu) fills one value per slot for every launch.
// Neither discovers the layout on its own, so the two cannot disagree. What
// only the writing of code finds out goes through this package too: each
// index check a generator writes is registered with Module.AddSite, which
// numbers it for the launcher's report, and whether entries wait for their
// predecessors is a layout option (Options.AwaitsPredecessors) that the
// generator follows.
//
// # Slots
//
// An entry's parameters, in order: for each kernel parameter in declaration
// order that the task reads, a scalar's value (ScalarSlot: 4 bytes for bool
// and the 8-, 16- and 32-bit types, bool as 0 or 1, the small integers
// sign- or zero-extended to 32 bits; 8 bytes for the 64-bit types), or an
// array's device address (ArraySlot, 8 bytes; an array of records is its
// first byte, each element Rec.Size bytes) followed by those of its
// extents the task needs (DimSlot, int64: dimension d when the task reads
// len along d, and dimensions 1..rank-1 when it indexes the array, for the
// row-major offset); last, the address of the per-launch temporaries
// (TempsSlot) when the task touches a local that lives across tasks.
//
// # Grids
//
// Parallel tasks are grid-stride loops, correct for any number of blocks.
// GridFor sizes a launch from Task.HostTotal when the extents are known on
// the host, and MaxBlocks caps it at a few waves of the device; a serial task
// runs one block of one thread. Block sizes are the loop's own
// (qd.LoopConfig) or DefaultBlockDim, within 1..MaxBlockDim. What a block
// size means for occupancy (warps of 32, wavefronts of 64) belongs to the
// target, not here.
package kabi
