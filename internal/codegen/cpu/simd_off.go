//go:build !amd64 || purego || race

package cpu

// No SIMD loops here: the Go loops of ops.go run.
var (
	simd32 *floatLoops[float32]
	simd64 *floatLoops[float64]
)
