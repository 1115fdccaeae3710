//go:build !amd64 || purego || race

package cpu

import "unsafe"

// No SIMD loops here: the Go loops of ops.go run.
var (
	simd32 *floatLoops[float32]
	simd64 *floatLoops[float64]
)

var (
	simdSel32 func(d []uint32, c []bool, t, e []uint32)
	simdSel64 func(d []uint64, c []bool, t, e []uint64)
)

var (
	simdFill32 func(d []uint32, v uint32)
	simdFill64 func(d []uint64, v uint64)

	simdFillRuns32 func(d []uint32, src unsafe.Pointer, stride int64, n int)
	simdFillRuns64 func(d []uint64, src unsafe.Pointer, stride int64, n int)
)
