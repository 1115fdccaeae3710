package kernels

import "github.com/quadrants-go/qd"

// The normal generators of qd.Rand use math's bit casts, which need an IR
// operation of their own: the error is at the call in the kernel, naming
// the library function.
//
//qd:kernel
func k(seed uint64, x []float32) {
	for i := range len(x) {
		r := qd.NewRand(seed, uint64(i))
		x[i] = r.Float32() + r. /* ERRORx `math\.Float32bits is not supported in kernels yet: bit casts need an IR operation of their own .*\(in qd\.log32 at rand\.go:\d+:\d+, called from qd\.Rand\.NormFloat32\)` */ NormFloat32()
	}
}
