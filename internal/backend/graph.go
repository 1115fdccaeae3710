package backend

import (
	"time"

	"github.com/quadrants-go/qd/internal/trace"
)

// Capturer is implemented by devices that can capture the work enqueued on
// streams into a graph and replay it (qd.Stream.Capture).
//
// Every backend follows CUDA's stream-capture rules. BeginCapture(s) puts
// s in capture mode: work enqueued on it from then on is recorded, not
// run. An event recorded on a capturing stream marks a point of the
// capture; a stream that waits for such an event joins the capture, and
// its later work is recorded too. EndCapture(s) ends the capture: every
// joined stream must have its recorded work ordered before s's last point
// (joined back into s by an event s waited for). While a stream captures,
// neither it nor an event recorded in the capture may be synchronized,
// queried or waited for by a stream outside the capture, and a capturing
// stream may not wait for an event recorded outside its capture: package
// qd refuses all of that before reaching the backend, and a backend
// returns an error for it rather than hang or crash.
//
// Work is recorded with its arguments as they are when it is enqueued:
// the addresses of device and host memory, scalar values, sizes. A
// stream-ordered allocation (Device.AllocOn) on a capturing stream
// allocates memory that exists only while the graph runs; the caller frees
// it (Buffer.FreeOn) on a stream of the same capture before the capture
// ends.
type Capturer interface {
	// BeginCapture starts capturing on s, which must not be capturing.
	BeginCapture(s Stream) error
	// EndCapture ends the capture begun on s. Every stream that joined the
	// capture leaves capture mode, also when EndCapture fails (the capture
	// broke a rule, or joined streams were not joined back), in which case
	// no graph is returned.
	EndCapture(s Stream) (Graph, error)
}

// Graph is captured work, not yet executable.
type Graph interface {
	// Instantiate makes an executable graph of the captured work. The
	// Graph may be closed afterwards: the GraphExec does not depend on it.
	Instantiate() (GraphExec, error)
	// Close releases the graph. It is idempotent.
	Close() error
}

// GraphExec is an executable graph.
type GraphExec interface {
	// Launch enqueues one replay of the graph on s, ordered after the work
	// enqueued on s before it; work enqueued on s later waits for the
	// replay. Replays of one GraphExec run one after another, in the order
	// of their Launch calls, whatever their streams. Errors raised by the
	// replay's work (the CPU's index checks) are reported on s.
	Launch(s Stream) error
	// Update makes the exec replay g, a capture of the same shape (the
	// same operations with the same dependencies; their arguments may
	// differ), from the next Launch on; replays already enqueued are not
	// affected. It returns false when it cannot (a different shape, or an
	// update the backend does not support): the caller then instantiates g
	// anew and closes this exec, which a failed update may have left
	// partly updated.
	Update(g Graph) (bool, error)
	// Close releases the exec; replays already enqueued run to their end.
	// It is idempotent.
	Close() error
}

// Traced graphs. While a trace is on, package qd brackets the tasks it
// enqueues on a capturing stream with TraceTimer Begin and End as it does
// outside captures, when the timer is a CaptureTracer that traces
// captures. The marks then become part of the capture (on a GPU,
// event-record nodes), each Begin/End pair one captured span, numbered in
// the order of their End calls; the graph's execs implement TracedExec.

// CaptureTracer is implemented by TraceTimers whose Begin and End may
// mark a capturing stream.
type CaptureTracer interface {
	// TracesCaptures reports whether Begin and End on a capturing stream
	// capture their marks (the driver has what it takes).
	TracesCaptures() bool
}

// TracedExec is implemented by the execs of graphs that can hold
// captured spans.
type TracedExec interface {
	// TracedSpans is the number of spans captured in the exec's graph.
	TracedSpans() int
	// LaunchTraced is Launch, with t recording this replay's times of the
	// captured spans: spans[i] (Start and End filled in) for the i-th
	// captured span. len(spans) must be TracedSpans().
	LaunchTraced(s Stream, t TraceTimer, spans []trace.Span) error
}

// RawGraphLauncher is implemented by GPU graph execs: the reference the
// graph host-cost figure of `qd bench` is held against.
type RawGraphLauncher interface {
	// RawLaunchCost is the mean host time of one replay launched straight
	// through the driver's bindings, over n launches on s with a
	// synchronization every syncEvery launches.
	RawLaunchCost(s Stream, n, syncEvery int) (time.Duration, error)
}
