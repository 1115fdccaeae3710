package qd

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// TestAliasedSliceArguments: Go slices of one launch that share memory,
// where the kernel writes one of them, are refused with an *ArgumentError
// naming both (qd copies slices in and out, so the writes through one
// would not show through the other as they do natively); slices that are
// only read may overlap, and neighbouring slices of one array are fine.
func TestAliasedSliceArguments(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		alias := build(t, p, suitekernels.Alias())
		add := build(t, p, suitekernels.Add())
		grid := func() [][]float32 { return [][]float32{make([]float32, 3), make([]float32, 3)} }
		m := grid()
		shared := make([]float32, 3)
		backing := make([]float32, 6)
		x := []float32{1, 2, 3, 4}
		z := make([]float32, 4)
		cases := []struct {
			name   string
			k      *Kernel
			args   []any
			params []string // both parameters named in the error; nil: no error
		}{
			{"row of m", alias, []any{m, m[0]}, []string{"row", "m[0]"}},
			{"part of a row", alias, []any{m, m[1][1:]}, []string{"row", "m[1]"}},
			{"two rows alike", alias, []any{[][]float32{shared, shared}, make([]float32, 2)}, []string{"m[1]", "m[0]"}},
			{"written 1-D", add, []any{x, []float32{0, 0, 0, 0}, x[1:]}, []string{"c", "a"}},
			{"read twice", add, []any{x, x, z}, nil},
			{"neighbours", add, []any{x[:2], x[2:], make([]float32, 2)}, nil},
			{"rows of one array", alias, []any{[][]float32{backing[:3], backing[3:]}, make([]float32, 2)}, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := c.k.Launch(c.args...)
				if c.params == nil {
					check(t, err)
					return
				}
				var ae *ArgumentError
				if !errors.As(err, &ae) {
					t.Fatalf("got %v, want an *ArgumentError", err)
				}
				for _, want := range c.params {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("error %q does not name %s", err, want)
					}
				}
			})
		}
		for i := range z {
			if x[i] != float32(i+1) || z[i] != 2*x[i] {
				t.Fatalf("after the launches x = %v, z = %v; want x unchanged and z = x + x", x, z)
			}
		}
	})
}
