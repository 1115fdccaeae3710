package frontend

import "testing"

// kernel20 is a 20-line kernel: the size of the compile-time bar in SPEC §7.
var kernel20 = []byte(`package kernels

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
`)

// BenchmarkParse20Lines measures source → IR for a 20-line kernel.
func BenchmarkParse20Lines(b *testing.B) {
	if _, err := Parse("step.go", kernel20); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("step.go", kernel20); err != nil {
			b.Fatal(err)
		}
	}
}
