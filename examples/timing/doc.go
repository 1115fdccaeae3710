// Timing measures work on the device with timing events: record one event
// before and one after the work on a stream, wait for the second, and
// qd.Elapsed gives the device time between them, without the host's
// enqueue time or scheduling noise. Events are made WithTiming() only where
// they are used for timing: timing makes recording slower on GPUs.
//
//	go run ./examples/timing
package main
