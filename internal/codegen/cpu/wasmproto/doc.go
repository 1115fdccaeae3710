// Package wasmproto is the prototype of a candidate way to run CPU kernels
// that docs/cpu.md measured and set aside: lowering the IR to WebAssembly
// and running it through wazero's optimising compiler (pure Go, native
// code). It holds the saxpy, heat-step and 5-point-stencil kernels lowered
// by hand the way a code generator would lower qd's IR (every index checked,
// float32 operations one by one), the heat step also with row checks and
// row addresses hoisted out of the inner loop, and benchmarks against the
// same loops in plain Go, on one worker and on two sharing one memory:
//
//	cd internal/codegen/cpu/wasmproto && go test -bench .
//
// It is its own module, so that qd itself does not depend on wazero.
package wasmproto
