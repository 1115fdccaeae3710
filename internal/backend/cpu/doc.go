// Package cpu is the CPU backend: a backend.Device whose streams are real
// in-order asynchronous queues, so that the stream code users write for a GPU
// overlaps on the CPU too.
//
// Each stream drains its queue on a goroutine that exists only while the
// queue holds work. Events are completion markers: recording one enqueues a
// marker op, and waiting on one (from the host, or from another stream's
// queue) blocks until that op has run. Kernels come from
// internal/codegen/cpu as closures; a parallel task is split into chunks that
// the stream's goroutine and up to GOMAXPROCS-1 helper goroutines take from a
// shared counter. Helpers come from a pool whose goroutines outlive a task
// (helpers.go), so that a loop of launches does not wait for a thread to
// wake at each one. The stream's goroutine takes chunks itself and needs no
// helper to finish, so a kernel that spins waiting for another stream's
// kernel, holding helpers, never starves it.
package cpu
