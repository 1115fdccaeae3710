package suitekernels

// Kernel20 is the Go source of a 20-line kernel (the lines from //qd:kernel
// to the closing brace), the size of the compile-time bars in
// docs/performance.md: from source to PTX in ≤ 5 ms, a cached Compile in
// ≤ 20 µs. It is the one kernel of the compile benchmarks, so that their
// figures compare: the root package's BenchmarkCompile20Lines and its
// kin, internal/frontend's BenchmarkParse20Lines, and the compile rows of
// internal/benchsuite (qd bench). No behaviour test runs it.
const Kernel20 = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func step(dt float32, pos, vel [][]float32, mass []float32, hits []int32) {
	for i := range len(pos) {
		m := mass[i]
		if m <= 0 {
			continue
		}
		for d := range len(pos[0]) {
			v := vel[i][d] - 9.81*dt/m
			p := pos[i][d] + v*dt
			if p < 0 {
				p, v = -p, -v
				qd.AtomicAdd(&hits[0], 1)
			}
			pos[i][d], vel[i][d] = p, qd.Sqrt(v*v)
		}
	}
}
`
