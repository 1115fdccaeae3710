// Package fakedriver is a test double of the GPU runtime's driver seam
// (gpu.Driver), for tests only: nothing outside _test.go files imports it.
//
// # The fake driver
//
// New returns a Driver whose every Calls function is a Go callback
// (purego.NewCallback) that simulates one device synchronously on the
// host, so the runtime's driver paths run on machines without a GPU, CI
// included. Device memory is Go memory kept reachable by the fake, so
// device addresses are real and copies and fills are memory moves.
// Streams, events, modules and functions are handles from a counter. Work
// is done when it is enqueued: queries report done, synchronizations
// return at once, and Elapsed reports a small positive time from a logical
// clock (it ticks once per call), never a measurement.
//
// The fake cannot run kernels: a launch checks its function, grid, block,
// stream and every parameter (array and temporaries addresses must lie in
// live device memory) and then does nothing. Tests that check what a
// kernel computes, or that two kernels meet (a rendezvous), skip on it;
// Driver.RunsKernels says so.
//
// Calls the runtime should never make (an unknown handle, memory out of
// any allocation, a free of a view) fail with an invalid-value or
// invalid-handle code and are recorded as misuses (Driver.Misuses), so a
// test can assert there were none.
//
// # Fault injection
//
// An Injector counts the calls of a driver's functions, makes the N-th
// call of a chosen one fail with a chosen code (Inject), and keeps count
// of what the calls create and destroy: streams, events, device and host
// allocations with their bytes, modules (Live). The fake driver has one;
// Wrap puts one in front of any other driver, a real one included, by
// copying its Calls table and replacing every bound function with a
// callback that counts, fails or forwards the call to the real function.
// Both go through the same callbacks and the same Injector (interpose.go),
// so what runs over a real GPU is what the fake exercises everywhere.
//
// A fatal code (one the driver classifies gpu.Fatal) injected into the fake
// poisons its context as a real fault would: every later call but
// MakeCurrent returns it,
// until the last device on the context closes, which resets the context
// (everything on it is released) as gpu.Driver.CloseDevice describes;
// SetSticky keeps it poisoned instead, for every device opened after, as
// CUDA keeps a lost primary context until the process ends.
//
// Each New and Wrap makes one callback per Calls function; a process can
// make only about 2000, for good. Make one driver per test binary and
// reuse it (Inject replaces the faults and restarts the counts).
package fakedriver
