// Package nccl is the GPU transport of qd's collectives: NCCL on NVIDIA
// GPUs and RCCL, AMD's port with the same C API, on AMD GPUs. A Comm is one
// rank of an NCCL communicator bound to one gpu.Device; it implements
// comm.Transport, so package comm and package qd drive it like the CPU's
// TCP ring.
//
// The library is opened at run time (dlopen through package gpu), so
// binaries build with CGO_ENABLED=0 and run where NCCL is absent: Load then
// returns an error matching ErrNoLibrary, and the caller falls back or
// says that NCCL is needed.
//
// # Calls
//
// Every NCCL call runs under gpu.Device.Do: the goroutine locked to its OS
// thread with the device's context current. NCCL binds a communicator to
// the device that is current when it is created and launches its kernels
// in the current context; it also keeps per-thread state (the group depth
// of ncclGroupStart, the text of ncclGetLastError), which only means
// something while one goroutine stays on one thread.
//
// Run enqueues a batch of comm.Calls as one NCCL group (ncclGroupStart,
// the calls, ncclGroupEnd), so that a Send and a Recv of one batch progress
// together. A batch of one call goes without the explicit group: NCCL
// wraps every call in a group of its own, with the same effect, and the
// two calls saved are most of what qd adds to a small all-reduce. Calls
// are checked (types, counts against buffer sizes, roots and peers) before
// anything is enqueued, so a refused call leaves nothing half-issued.
// Groups of different goroutines never interleave: a mutex is held from
// the first call of a batch to ncclGroupEnd.
//
// The Run path allocates nothing for a batch that fits the Comm's
// argument frames (they grow once to the largest batch seen): the argument
// lists live in the Comm and are handed to purego.SyscallN as they are.
//
// # Communicators
//
// NewComm prefers ncclCommInitRankScalable, which takes the unique id by
// pointer. Where the library lacks it (older NCCL and RCCL releases) it
// calls ncclCommInitRank, whose id is a 128-byte struct passed by value:
// initrank.go lays that out by hand for purego, by the platform's C
// calling convention (see there for what of it is verified).
//
// No ncclConfig_t is passed: NCCL's defaults are what qd wants (a blocking
// communicator), and a config could not force blocking anyway, because
// NCCL_COMM_BLOCKING in the environment overrides the config's field.
// Where a communicator turns out non-blocking (that variable set to 0),
// calls that answer ncclInProgress are waited for by polling
// ncclCommGetAsyncError, so callers see blocking behaviour either way.
//
// # Failure
//
// Err polls ncclCommGetAsyncError, and a watch goroutine polls it every
// 100 ms for the communicator's life: an asynchronous error (a peer gone,
// a network fault) breaks the Comm and aborts the communicator
// (ncclCommAbort), which makes NCCL kernels that spin waiting for a dead
// peer exit, so that streams waiting for them finish with an error rather
// than hang. Abort does the same on the caller's word; see Comm.Abort for
// how it deals with a Run in progress.
//
// Close destroys the communicator with ncclCommDestroy, or aborts it when
// it is broken. It does not call ncclCommFinalize first: finalizing waits
// until every rank has flushed its work, a collective step, so one dead or
// slow peer would hang Close; ncclCommDestroy already waits for this
// rank's own work. Graphs that captured NCCL calls must be released before
// Close, and the Comm closed before its device.
package nccl
