package nccl

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Result is an ncclResult_t, the code every NCCL function returns.
type Result int32

// The codes of nccl.h. RCCL has the same values (its older releases stop
// at RemoteError).
const (
	Success            Result = 0
	UnhandledCudaError Result = 1
	SystemError        Result = 2
	InternalError      Result = 3
	InvalidArgument    Result = 4
	InvalidUsage       Result = 5
	RemoteError        Result = 6
	InProgress         Result = 7
	Timeout            Result = 8
)

// success and inProgress are the codes as SyscallN results carry them.
const (
	success    = int32(Success)
	inProgress = int32(InProgress)
)

var resultNames = [...]string{
	"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress", "ncclTimeout",
}

func (r Result) String() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("ncclResult(%d)", int32(r))
}

// Error is a failing result of an NCCL call.
type Error struct {
	Lib  string // "NCCL" or "RCCL"
	Call string // the function that returned Code, e.g. "ncclAllReduce"
	Code Result
	Text string // ncclGetErrorString(Code)
	Last string // ncclGetLastError: NCCL's own account of the failure, often the useful part; may be empty
	// Async says the code came from ncclCommGetAsyncError: the
	// communicator failed while its work ran (a peer gone, a network or
	// device fault), not in the call that reports it.
	Async bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Lib)
	if e.Async {
		b.WriteString(": the communicator failed while its work ran (reported by ")
		b.WriteString(e.Call)
		b.WriteString(")")
	} else {
		b.WriteString(": ")
		b.WriteString(e.Call)
		b.WriteString(" failed")
	}
	b.WriteString(": ")
	if e.Text != "" {
		b.WriteString(e.Text)
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "(%s, code %d)", e.Code, int32(e.Code))
	if last := strings.TrimSpace(e.Last); last != "" {
		b.WriteString(": ")
		b.WriteString(last)
	}
	if hint := resultHint(e.Code); hint != "" {
		b.WriteString("; ")
		b.WriteString(hint)
	}
	return b.String()
}

// resultHint says what a code usually means for a qd program.
func resultHint(r Result) string {
	switch r {
	case RemoteError:
		return "another rank failed or left; every rank must recreate its communicator"
	case SystemError:
		return "a system call or the network failed (NCCL_DEBUG=WARN prints NCCL's log)"
	case UnhandledCudaError:
		return "a CUDA call inside NCCL failed (NCCL_DEBUG=WARN prints NCCL's log)"
	case InvalidUsage:
		return "the ranks disagree on the calls, or a call was made in a state that forbids it"
	case Timeout:
		return "NCCL timed out waiting for other ranks"
	}
	return ""
}

// newError builds the Error of code r returned by call. It must run on the
// OS thread that made the failing call (under Device.Do, or with the
// thread locked), where ncclGetLastError keeps its text. comm is the
// communicator, or 0.
func (l *Lib) newError(call string, r int32, comm uintptr) *Error {
	e := &Error{Lib: l.vendor, Call: call, Code: Result(r)}
	if l.f.getErrorString.Bound() {
		e.Text = cString(purego.SyscallN(l.f.getErrorString.Addr, uintptr(r)))
	}
	if l.f.getLastError.Bound() {
		e.Last = cString(purego.SyscallN(l.f.getLastError.Addr, comm))
	}
	return e
}

// cString copies the C string a function returned in r1.
func cString(r1, _, _ uintptr) string {
	if r1 == 0 {
		return ""
	}
	// Converted through memory, not as uintptr → unsafe.Pointer: the
	// address is C memory, which the Go garbage collector never moves.
	return gpu.GoString(*(**byte)(unsafe.Pointer(&r1)))
}

// errClosed is Run's error after Close.
var errClosed = backend.ClosedError("nccl: communicator closed")
