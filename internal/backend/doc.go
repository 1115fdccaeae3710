// Package backend is the seam between the public API (package qd) and the
// backends that run kernels: the CPU (backend/cpu), and CUDA (backend/cuda)
// and HIP (backend/hip) over one GPU runtime (backend/gpu). A backend
// implements Device and the handle types it returns;
// package qd builds everything users see on top of them (argument checking,
// host-slice transfers, buffer-use tracking, the stream pool and the
// stream-parallel fork/join), so a new backend touches no public API.
//
// Every method may be called from any goroutine. Handles are owned by the
// Device that made them; package qd passes one Device's handle to another
// Device only through the Peer interface (waits for another device's
// events and copies between devices of one backend), which devices that
// cannot do so do not implement.
package backend
