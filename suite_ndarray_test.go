package qd

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// TestNdarrayBasics: shapes, zero filling (also of reused device memory),
// host copies in and out, and bad inputs.
func TestNdarrayBasics(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		fill := build(t, p, suitekernels.Fill(ir.F32))
		for range 3 {
			x := newNdarray[float32](t, p, 4096)
			allEqual(t, "new array", toSlice(t, x), 0)
			check(t, fill.Launch(x, float32(7)))
			check(t, x.Close())
		}
		m := newNdarray[int64](t, p, 2, 3, 4)
		if got := m.Shape(); len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 || m.Len() != 24 {
			t.Fatalf("Shape = %v, Len = %d", got, m.Len())
		}
		src := make([]int64, 24)
		for i := range src {
			src[i] = int64(i * i)
		}
		check(t, m.CopyFromHost(src))
		got := toSlice(t, m)
		for i := range src {
			if got[i] != src[i] {
				t.Fatalf("round trip [%d] = %d, want %d", i, got[i], src[i])
			}
		}
		wantErr(t, m.CopyFromHost(src[:3]), ErrInvalidArgument)
		wantErr(t, m.CopyToHost(make([]int64, 25)), ErrInvalidArgument)
		for _, shape := range [][]int{{}, {1, 2, 3, 4, 5}, {-1}, {1 << 40, 1 << 40}} {
			if _, err := NewNdarray[float64](p, shape...); err == nil {
				t.Errorf("NewNdarray%v succeeded", shape)
			}
		}
		// 2^40 float32 (4 TiB): more than any device here has.
		_, err := NewNdarray[float32](p, 1<<40)
		wantErr(t, err, ErrOutOfMemory)
		_, err = NewNdarray[float32](nil, 4)
		wantErr(t, err, ErrInvalidArgument)
		empty := newNdarray[bool](t, p, 0)
		if v := toSlice(t, empty); len(v) != 0 {
			t.Fatalf("empty array gave %v", v)
		}
		var nilArr *Ndarray[float32]
		_, err = nilArr.ToSlice()
		wantErr(t, err, ErrInvalidArgument)
		check(t, nilArr.Close())
	})
}
