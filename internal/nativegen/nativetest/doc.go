// Package nativetest holds kernels of every form qd gen handles, their
// generated native code (kernels_qdgen.go, written by go generate), and
// the tests that run them on the CPU natively and on the closure
// compiler, against the kernels called as plain Go.
package nativetest

//go:generate go run ../../../cmd/qd gen kernels.go
