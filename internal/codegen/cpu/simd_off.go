//go:build !amd64 || purego || race

package cpu

// No SIMD loops here: the Go loops of ops.go run.
var (
	simd32 *floatLoops[float32]
	simd64 *floatLoops[float64]
)

var (
	simdSel32 func(d []uint32, c []bool, t, e []uint32)
	simdSel64 func(d []uint64, c []bool, t, e []uint64)
)
