package difftest

import (
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffcheck"
)

// outOfRangeSrc indexes local arrays with indices out of their range, which
// Go answers with a panic and the native run cannot compare: until the IR
// has an index check, a read out of range gives the zero value and a write
// does nothing, on every backend.
const outOfRangeSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func oor(idx []int32, out [][]float32) {
	for i := range len(idx) {
		a := [3]float32{1, 2, 3}
		m := qd.Mat2[float32]{{4, 5}, {6, 7}}
		j := idx[i]
		a[j] = 10
		m[j][1] += 100
		out[i][0] = a[0] + a[1] + a[2]
		out[i][1] = a[j]
		out[i][2] = m[1][j] + m[0][1] + m[1][1]
	}
}
`

func TestDynamicIndexOutOfRange(t *testing.T) {
	diffcheck.OnEachArch(t, func(t *testing.T, p *qd.Program, _ *qd.Stream) {
		{
			mod, err := qd.Compile(p, outOfRangeSrc)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close()
			k, err := mod.Kernel("oor")
			if err != nil {
				t.Fatal(err)
			}
			idx := []int32{-1, 3, 1 << 30, -1 << 31, 0, 1, 2}
			out := zeros[float32](len(idx), 3)
			if err := k.Launch(idx, out); err != nil {
				t.Fatal(err)
			}
			for i, j := range idx {
				a := [3]float32{1, 2, 3}
				m := [2][2]float32{{4, 5}, {6, 7}}
				want := [3]float32{6, 0, 5 + 7}
				if j >= 0 && j < 3 {
					a[j] = 10
					want[0], want[1] = a[0]+a[1]+a[2], 10
				}
				if j >= 0 && j < 2 {
					m[j][1] += 100
					want[2] = m[1][j] + m[0][1] + m[1][1]
				}
				if j == 2 {
					want[2] = m[0][1] + m[1][1] // m[1][2] reads zero
				}
				for c := range 3 {
					if out[i][c] != want[c] {
						t.Errorf("index %d: out[%d] = %v, want %v", j, c, out[i][c], want[c])
					}
				}
			}
		}
	})
}
