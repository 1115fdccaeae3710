// Package backend is the seam between the public API (package qd) and the
// backends that run kernels: the CPU (backend/cpu), CUDA (backend/cuda) and,
// later, HIP. A backend implements Device and the handle types it returns;
// package qd builds everything users see on top of them (argument checking,
// host-slice transfers, buffer-use tracking, the stream pool and the
// stream-parallel fork/join), so a new backend touches no public API.
//
// Every method may be called from any goroutine. Handles are owned by the
// Device that made them; package qd never passes one Device's handle to
// another Device.
package backend
