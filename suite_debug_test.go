package qd

import (
	"regexp"
	"testing"
)

// Index checks: the CPU always checks array indices, GPU kernels under
// WithDebug. An index out of range is reported by the next Synchronize of
// the launch's stream, with the kernel, the array, the index, the extent
// and the position, in the same words on every backend. On a GPU the
// access does not happen: a load reads zero and a store or an atomic is
// skipped; the CPU stops the task.

const checkedSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func shift(x, y []float32, at int) {
	for i := range len(y) {
		y[i] = x[i+at]
	}
}

//qd:kernel
func put(m [][]float32, r, c int) {
	for i := range 1 {
		m[r][c+i] = 1
	}
}

//qd:kernel
func tally(n []int64, at uint64) {
	for i := range 4 {
		qd.AtomicAdd(&n[at], int64(i))
	}
}
`

func TestIndexChecks(t *testing.T) {
	forEachChecked(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, checkedSrc, WithFilename("k.go"))
		shift := kernelOf(t, m, "shift")
		put := kernelOf(t, m, "put")
		tally := kernelOf(t, m, "tally")
		x := newNdarray[float32](t, p, 8)
		y := newNdarray[float32](t, p, 8)
		mat := newNdarray[float32](t, p, 2, 4)
		n := newNdarray[int64](t, p, 1)
		check(t, x.CopyFromHost([]float32{1, 2, 3, 4, 5, 6, 7, 8}))
		s := newStream(t, p)

		cases := []struct {
			name   string
			launch func() error
			want   string // "" when in range; else the message as a regular expression (lanes race to report)
		}{
			{"in range", func() error { return shift.LaunchOn(s, x, y, 0) }, ""},
			{"past the end", func() error { return shift.LaunchOn(s, x, y, 7) }, `k\.go:8:3: kernel shift: index (8|9|1[0-4]) out of range \[0:8\) in dimension 0 of x`},
			{"negative", func() error { return shift.LaunchOn(s, x, y, -9) }, `k\.go:8:3: kernel shift: index -[2-9] out of range \[0:8\) in dimension 0 of x`},
			{"row", func() error { return put.LaunchOn(s, mat, 2, 0) }, `k\.go:15:3: kernel put: index 2 out of range \[0:2\) in dimension 0 of m`},
			{"column", func() error { return put.LaunchOn(s, mat, 1, 4) }, `k\.go:15:3: kernel put: index 4 out of range \[0:4\) in dimension 1 of m`},
			{"negative row", func() error { return put.LaunchOn(s, mat, -1, 0) }, `k\.go:15:3: kernel put: index -1 out of range \[0:2\) in dimension 0 of m`},
			{"uint64 atomic", func() error { return tally.LaunchOn(s, n, uint64(1<<63)) }, `k\.go:22:3: kernel tally: index 9223372036854775808 out of range \[0:1\) in dimension 0 of n`},
		}
		for _, c := range cases {
			check(t, c.launch())
			err := s.Synchronize()
			switch {
			case c.want == "":
				check(t, err)
			case err == nil || !regexp.MustCompile("^"+c.want+"$").MatchString(err.Error()):
				t.Errorf("%s: Synchronize = %v, want %s", c.name, err, c.want)
			}
			check(t, s.Synchronize()) // reported once
		}
		check(t, p.Synchronize())

		if p.Arch() != CPU {
			// The accesses out of range did not happen.
			check(t, y.FillOn(s, -1))
			check(t, n.FillOn(s, 5))
			check(t, shift.LaunchOn(s, x, y, 7))
			check(t, tally.LaunchOn(s, n, uint64(1)))
			wantOnce(t, "Synchronize", s.Synchronize())
			gy, gn := make([]float32, 8), make([]int64, 1)
			check(t, y.CopyToHost(gy))
			check(t, n.CopyToHost(gn))
			allEqualOf(t, "y", gy, []float32{8, 0, 0, 0, 0, 0, 0, 0})
			allEqualOf(t, "n", gn, []int64{5})
		}

		// Launches never synchronized: their reports are collected as they
		// pile up, and the stream's next Synchronize reports the first.
		for range 1100 {
			check(t, shift.LaunchOn(s, x, y, 7))
		}
		wantOnce(t, "Synchronize after many launches", s.Synchronize())
		check(t, s.Synchronize())
	})
}

func allEqualOf[T comparable](t *testing.T, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d elements, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s = %v, want %v", name, got, want)
		}
	}
}
