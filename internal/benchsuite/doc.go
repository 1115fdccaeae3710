// Package benchsuite is qd's performance suite (docs/semantics.md#performance-bars): every
// figure measured in one run on one Program, each printed beside its
// reference, measured in the same run, and the bar the ratio must meet.
// `qd bench` prints it; the root package's BenchmarkGPUSuite wraps it for
// `go test -bench`.
//
// Host costs are wall-clock means over many iterations (bursts of
// syncEvery launches between synchronizations, so the driver's queue never
// fills and the launch, not the GPU, is timed), best of several
// repetitions. Device times come from the GPU's timing events around
// repeated launches. The references that qd's API cannot express (a raw
// kernel launch, a device-to-device copy) go through a second handle on the
// same device (the registered backend's Open(0): the same context) and the
// same driver bindings (internal/backend/gpu).
//
// On the CPU the GPU-only rows are skipped with the reason, and the rest
// run, quickly with Options.Quick; the CPU rows (cpu_rows.go) time construct
// kernels, and the block kernels (cpu_blocks.go), on one core and on two
// against the same loops or algorithms in plain Go, and are skipped on a
// GPU.
package benchsuite
