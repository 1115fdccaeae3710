// Command qd is qd's tool: it lists the backends and devices, runs the demo
// and the performance suite, renders traces and shows generated code.
//
//	qd devices [-json]                 backends, devices, and why one is unavailable
//	qd demo [-arch auto|cpu|cuda|amdgpu] [-trace FILE] [sizes]
//	                                   four ways streams pay off, each against plain Go
//	qd bench [-arch ...] [-json] [-quick]
//	                                   every performance figure beside its reference and bar
//	qd trace [-o out.svg] FILE.json    a recorded trace as an SVG timeline
//	qd compile [-arch cuda|cpu] [-sm 90] [-fast-math] [-o DIR] FILE.go
//	                                   the PTX (or IR) of each kernel, with its launch shape
//
// Every verb takes -h. Usage errors exit with status 2, failures with 1.
package main
