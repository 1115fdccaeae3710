// Package nativegen writes the Go source that `qd gen` puts beside a
// kernel file: per kernel, the kernel's own body, its top-level parallel
// loops handed to package native to run in parallel chunks on the CPU
// backend's workers, its parameters read from the launch, and a check of
// the launch's stop flag at the top of every loop body. Everything else is
// the kernel's text, copied under /*line*/ directives so that failures and
// the race detector name the kernel file's lines.
//
// The generator works on the front end's type-checked syntax
// (frontend.File.Syntax), so that it only ever sees kernels qd accepts.
// A kernel it cannot express (a parameter type or a top-level loop form
// outside the table in gen.go) is left to the closure compiler, with the
// reason in the generated file and in qd gen's output.
package nativegen
