// Package comm is qd's process groups and collectives: the rendezvous that
// joins the processes of a group over TCP (rank 0 serves it on
// MASTER_ADDR:MASTER_PORT, torchrun's names), the watch that breaks the
// group when a member dies, and the transports that move the data of a
// collective. A transport runs calls (Call) on the streams of one backend:
// the CPU's moves host memory between processes over TCP (ring.go, the
// fallback that makes programs and tests run without GPUs); NCCL's (and
// RCCL's, the same API on AMD) drives the GPUs (package comm/nccl).
//
// Package qd builds Comm on top of it: argument checks in the user's
// terms, the ordering of calls on qd streams, the arrays' use tracking.
package comm
