package qd

import (
	"strings"
	"testing"
)

// randKernelSrc draws from qd.NewRand in a kernel: a stream per element,
// several draws of each kind, under the block size that replaces the
// comment "// shape" (as written, the default).
const randKernelSrc = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func draw(seed uint64, u []uint32, f []float32, g []float64, z []float32) {
	// shape
	for i := range len(u) {
		r := qd.NewRand(seed, uint64(i))
		u[i] = r.Uint32() ^ uint32(r.Uint64()>>7)
		f[i] = r.Float32()
		g[i] = r.Float64() + r.NormFloat64()
		z[i] = r.NormFloat32()
	}
}
`

// TestRandInKernels: a kernel's random numbers are those of the native Go
// run, bit for bit, whatever the block size (and so the number of threads
// and how iterations map onto them), on every backend.
func TestRandInKernels(t *testing.T) {
	const n, seed = 5000, 0x9e3779b97f4a7c15
	want := struct {
		u []uint32
		f []float32
		g []float64
		z []float32
	}{make([]uint32, n), make([]float32, n), make([]float64, n), make([]float32, n)}
	for i := range n {
		r := NewRand(seed, uint64(i))
		want.u[i] = r.Uint32() ^ uint32(r.Uint64()>>7)
		want.f[i] = r.Float32()
		want.g[i] = r.Float64() + r.NormFloat64()
		want.z[i] = r.NormFloat32()
	}
	forEachArch(t, func(t *testing.T, p *Program) {
		for _, shape := range []string{"", "qd.LoopConfig(qd.BlockDim(32))", "qd.LoopConfig(qd.BlockDim(1024))"} {
			k := kernelOf(t, compileModule(t, p, strings.Replace(randKernelSrc, "// shape", shape, 1)), "draw")
			u, f := make([]uint32, n), make([]float32, n)
			g, z := make([]float64, n), make([]float32, n)
			check(t, k.Launch(uint64(seed), u, f, g, z))
			for i := range n {
				if u[i] != want.u[i] || f[i] != want.f[i] || g[i] != want.g[i] || z[i] != want.z[i] {
					t.Fatalf("%q: element %d: (%#x %v %v %v), native Go (%#x %v %v %v)", shape, i,
						u[i], f[i], g[i], z[i], want.u[i], want.f[i], want.g[i], want.z[i])
				}
			}
		}
	})
}
