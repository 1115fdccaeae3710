// Package trace records what qd's runtime launched, on which stream and
// when, and turns the record into files people can look at.
//
// The runtime owns a *Recorder while tracing is on and calls Span once per
// task it ran (a kernel's serial or parallel task, a copy, a fill) and
// Span with Instant set for point events (an event record, a stream wait).
// Start and End are durations since the Recorder's Epoch, read from the
// host's monotonic clock on the CPU backend and from timing events on a GPU.
// Recording is lock-free on the common path and allocates one slab per
// 1024 spans, so it costs tens of nanoseconds; a nil *Recorder records
// nothing, but the runtime should test for nil before it reads any clock so
// that tracing costs nothing at all when off.
//
// Recorder.WriteTo and WriteChrome write the Chrome trace-event format
// (the JSON Object Format: {"traceEvents":[...],"displayTimeUnit":"ns",
// "otherData":{...}}) that Perfetto and chrome://tracing open: one complete
// event ("ph":"X") per task with ts and dur in microseconds, one instant
// event ("ph":"i") per point event, and metadata events that name the
// process (the device) and one thread per stream, so every stream is a
// named track. Output is deterministic: equal traces give equal bytes.
//
// ReadChrome parses such files back into a Trace (also the JSON Array
// Format, a gzip-compressed file, and B/E duration pairs that other tools
// write), within Limits on the JSON and the events it takes in, so that a
// gzip bomb or an endless input fails instead of exhausting memory;
// Validate checks the format's rules that this package relies on,
// and RenderSVG draws a Trace as an SVG timeline with one lane per stream;
// the qd command's trace verb is a thin wrapper around the last two.
package trace
