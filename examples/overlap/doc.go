// Overlap is the pattern streams exist for: an array too large to process
// at once goes through the device in chunks, each copied in from page-locked
// host memory, worked on by a kernel and copied back, with the chunks spread
// over several streams so that one chunk's copies overlap another's kernel.
// Rows views give each chunk its slice of one Ndarray and one HostArray, so
// no extra buffers are needed. The result is checked against plain Go, and
// the time on N streams is printed beside the time on one.
//
//	go run ./examples/overlap
package main
