// Saxpy is the smallest qd program: compile a Go kernel, copy two arrays to
// the device, launch, read the result back and check it.
//
//	go run ./examples/saxpy
package main
