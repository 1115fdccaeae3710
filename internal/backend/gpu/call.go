package gpu

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Driver calls go through purego.SyscallN on the Fn's address, never
// through reflection-based wrappers: a call costs about 0.1 µs instead of
// 1 µs. Hot paths (launch, event record, stream wait, asynchronous copies,
// queries) pass argument slices that already exist (pooled frames,
// per-launch blocks, per-object read-only lists), so they do not allocate.
// Device addresses are uint64/uintptr, never unsafe.Pointer. Go memory
// handed to the driver is heap memory kept alive across the call.

// Call calls fn off the hot paths and returns its result code (a C enum,
// in the low 32 bits). Every driver and compiler binding calls through it
// rather than wrapping SyscallN itself.
//
// Arguments are often Go pointers converted to uintptr (out-parameters such
// as &h). The directive below makes the compiler keep what they point to
// on the heap and alive for the call, as it does for purego.SyscallN
// itself: without it a pointer to a local stays on the goroutine's stack,
// which may move while the driver runs, and the driver writes into the old
// stack (seen as a module handle the CUDA driver called invalid, and as
// NVRTC's "invalid program" for a program handle never written).
//
//go:uintptrescapes
func Call(fn *Fn, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn.Addr, args...)
	return int32(uint32(r))
}

// res extracts a result code (a C enum, returned in the low 32 bits of the
// result register) from a SyscallN result.
func res(r1, _, _ uintptr) int32 { return int32(uint32(r1)) }

// frame is per-call argument storage for SyscallN on hot paths. Passing a
// slice that already exists to the variadic SyscallN allocates nothing;
// building the arguments in the call expression allocates the variadic
// slice (purego's go:uintptrescapes forces it to the heap). Frames come from
// a pool so that concurrent calls never share one; being heap objects they
// never move, so their addresses may be passed as uintptr.
type frame struct {
	a   [8]uintptr
	out [2]uint64 // out-parameters written by the driver
}

var framePool = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame  { return framePool.Get().(*frame) }
func putFrame(f *frame) { framePool.Put(f) }

// outAddr is the address of f.out[i], to pass as a T* out-parameter.
func (f *frame) outAddr(i int) uintptr { return uintptr(unsafe.Pointer(&f.out[i])) }

// GoString copies the NUL-terminated C string at p (at most 4 KiB).
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < 4096 && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// CString returns s as a NUL-terminated byte slice for a driver.
func CString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// CBytes returns b up to its first NUL, as a string.
func CBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
