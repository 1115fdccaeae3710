package fakedriver

import "github.com/quadrants-go/qd/internal/backend/gpu"

// The fake's result codes. They have CUDA's values, and Classify treats
// them as the CUDA driver does, so a failure reads the same on the fake as
// on a GPU.
const (
	CodeInvalidValue   int32 = 1   // an argument the runtime should never pass
	CodeOutOfMemory    int32 = 2   // the device (or host) memory is used up
	CodeInvalidContext int32 = 201 // MakeCurrent of a context that is not the device's
	CodeInvalidImage   int32 = 200 // rejected device code (gpu.InvalidCode)
	CodeInvalidHandle  int32 = 400 // a handle that is not live
	CodeIllegalState   int32 = 401 // a call out of order (a capture begun twice)
	CodeNotFound       int32 = 500 // a function the module lacks
	CodeNotReady       int32 = 600 // not an error: queries (the fake never returns it)
	CodeIllegalAddress int32 = 700 // a fault (gpu.Fatal): poisons the context
	CodeLaunchFailed   int32 = 719 // a fault (gpu.Fatal)
	CodeNotSupported   int32 = 801
	// Stream capture (graph.go).
	CodeStreamCaptureUnsupported int32 = 900 // a call a capturing stream cannot take
	CodeStreamCaptureInvalidated int32 = 901 // EndCapture of a capture a misuse broke
	CodeStreamCaptureUnmatched   int32 = 904 // EndCapture on a stream that did not begin one
	CodeStreamCaptureIsolation   int32 = 906 // a wait across a capture's boundary
	CodeStreamCaptureUnjoined    int32 = 908 // EndCapture with a member not joined back
	CodeGraphExecUpdateFailure   int32 = 910 // GraphExecUpdate of another shape
	CodeUnknown                  int32 = 999
)

var codeNames = map[int32]string{
	CodeInvalidValue:             "FAKE_ERROR_INVALID_VALUE",
	CodeOutOfMemory:              "FAKE_ERROR_OUT_OF_MEMORY",
	CodeInvalidContext:           "FAKE_ERROR_INVALID_CONTEXT",
	CodeInvalidImage:             "FAKE_ERROR_INVALID_IMAGE",
	CodeInvalidHandle:            "FAKE_ERROR_INVALID_HANDLE",
	CodeNotFound:                 "FAKE_ERROR_NOT_FOUND",
	CodeNotReady:                 "FAKE_ERROR_NOT_READY",
	CodeIllegalAddress:           "FAKE_ERROR_ILLEGAL_ADDRESS",
	CodeLaunchFailed:             "FAKE_ERROR_LAUNCH_FAILED",
	CodeNotSupported:             "FAKE_ERROR_NOT_SUPPORTED",
	CodeIllegalState:             "FAKE_ERROR_ILLEGAL_STATE",
	CodeStreamCaptureUnsupported: "FAKE_ERROR_STREAM_CAPTURE_UNSUPPORTED",
	CodeStreamCaptureInvalidated: "FAKE_ERROR_STREAM_CAPTURE_INVALIDATED",
	CodeStreamCaptureUnmatched:   "FAKE_ERROR_STREAM_CAPTURE_UNMATCHED",
	CodeStreamCaptureIsolation:   "FAKE_ERROR_STREAM_CAPTURE_ISOLATION",
	CodeStreamCaptureUnjoined:    "FAKE_ERROR_STREAM_CAPTURE_UNJOINED",
	CodeGraphExecUpdateFailure:   "FAKE_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
	CodeUnknown:                  "FAKE_ERROR_UNKNOWN",
}

var codeTexts = map[int32]string{
	CodeInvalidValue:             "invalid argument",
	CodeOutOfMemory:              "out of memory",
	CodeInvalidContext:           "invalid device context",
	CodeInvalidImage:             "device kernel image is invalid",
	CodeInvalidHandle:            "invalid resource handle",
	CodeNotFound:                 "named symbol not found",
	CodeNotReady:                 "device not ready",
	CodeIllegalAddress:           "an illegal memory access was encountered",
	CodeLaunchFailed:             "unspecified launch failure",
	CodeNotSupported:             "operation not supported",
	CodeIllegalState:             "operation not permitted in this state",
	CodeStreamCaptureUnsupported: "operation not permitted when stream is capturing",
	CodeStreamCaptureInvalidated: "operation failed due to a previous error during capture",
	CodeStreamCaptureUnmatched:   "the capture was not initiated in this stream",
	CodeStreamCaptureIsolation:   "a dependency would cross the capture sequence boundary",
	CodeStreamCaptureUnjoined:    "the capture sequence contains a fork that was not joined to the primary stream",
	CodeGraphExecUpdateFailure:   "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update",
	CodeUnknown:                  "unknown error",
}

// classify says what a code means, as the CUDA driver does for the same
// values: 2 is out of memory, the 7xx faults are fatal, 200, 209, 218 and
// 221–223 reject device code.
func classify(code int32) gpu.Class {
	switch {
	case code == CodeOutOfMemory:
		return gpu.OutOfMemory
	case code == 700 || code == 702 || (code >= 714 && code <= 719):
		return gpu.Fatal
	case code == 200 || code == 209 || code == 218 || (code >= 221 && code <= 223):
		return gpu.InvalidCode
	case code == CodeNotSupported:
		return gpu.NotSupported
	case code == 100 || code == 101:
		return gpu.NoDevice
	}
	return gpu.Failed
}
