// Package vulkan is the Vulkan backend: a backend.Device over a Vulkan
// 1.2+ device with timeline semaphores and buffer device addresses,
// through the purego bindings of package vk, so that binaries build with
// CGO_ENABLED=0 and run where no Vulkan loader is installed (Devices and
// Open then say so, with an error wrapping vk.ErrNoLoader).
//
// # Devices
//
// The process makes one Vulkan instance, on first use, and keeps it.
// Devices lists the physical devices that have a compute queue family,
// in the loader's order, which gives their ordinals; Open makes a
// logical device with every queue of the compute family (the family
// with the most queues, preferring one without graphics).
//
// # Streams and events
//
// A stream is a queue of the compute family (round robin when there are
// more streams than queues) and a timeline semaphore of its own. Every
// operation enqueued records a command buffer from the stream's command
// pool and submits it at once, signalling the semaphore to the stream's
// next value and waiting for its previous one: that wait is what orders
// a stream, whether its queue overlaps submits or other streams share
// it, and the signal and wait make the earlier work's writes visible to
// the later work. Submits to one VkQueue hold the queue's mutex, which
// Vulkan requires; a stream's pool and values are used under the
// stream's mutex. Command buffers are reused once the semaphore shows
// them done. Host work that must follow the device's (freeing staging
// buffers, FreeOn, the module code's launch ends) hangs on the stream as
// hooks run once the semaphore reaches a value: by Synchronize, by a
// Query that sees it, by later submits, and by Close.
//
// An event is a point of a stream: its semaphore and the value of its
// last submit when the event was recorded. Synchronize and Query wait
// for, and read, that semaphore; WaitEvent adds a wait for the value to
// the stream's next submit. A submit only ever waits for values already
// submitted — the stream's own previous one, an event's recorded point —
// because a wait for a signal queued behind it deadlocks a device of one
// queue (as lavapipe showed). Timing events own a query pool of one
// timestamp, written by a command buffer their Record submits; Elapsed
// converts the ticks by the device's timestampPeriod. Semaphores live
// until the device closes (a closed stream's goes to the next new
// stream, which continues its values), so an event outlives its stream.
//
// # Memory
//
// A buffer is a VkBuffer bound to its own memory, device-local where the
// device has such memory; views share it. Copies and fills are transfer
// commands (vkCmdCopyBuffer, vkCmdFillBuffer, with the unaligned ends of
// a fill copied from a staging buffer). Host buffers (AllocHost) are
// mapped host-visible, host-coherent memory; the device keeps them by
// address, so that a copy with memory inside one runs on the device,
// asynchronously, while a copy with other host memory goes through a
// staging buffer (synchronously for CopyToHost). Vulkan has no
// stream-ordered allocator: AllocOn allocates at once and FreeOn frees
// from a hook.
//
// # Errors
//
// A failed call's error names the Vulkan function and result; out of
// device or host memory matches backend.ErrOutOfMemory, a lost device
// backend.ErrDeviceLost and marks the device lost, so that every later
// call fails fast. Closed objects' errors match backend.ErrClosed.
//
// # Kernels, and what is not here yet
//
// Kernels (Compile, Module, Launch) are module.go's, over the SPIR-V of
// internal/codegen/spirv; they record dispatches through Stream.submit
// and hang launch ends on Stream.onComplete. Graphs are capture.go's.
//
// # Between devices
//
// Waits for another device's events and copies between two devices'
// buffers (backend.Peer) are peer.go's relays: a goroutine does the host's
// part (a wait for the other device's semaphore, a copy through staging
// memory of both devices) while the stream's later submits are held on
// the host, so that no queue waits for a signal not submitted yet.
//
// # Tracing
//
// The trace timer (backend.Tracing, trace.go) writes a timestamp query
// per mark; in a capture a mark is a node of the graph, whose traced
// replays are recorded afresh with a query pool of their own.
//
// Not here yet: stream priorities and wrapped streams.
package vulkan
