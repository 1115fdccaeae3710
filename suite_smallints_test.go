package qd

import (
	"slices"
	"testing"
)

// 8- and 16-bit integer elements and scalars, and 4-D arrays: launched
// with Ndarrays and Go slices on every arch, with Go's wrap-around.

const smallIntsSrc = `package k

//qd:kernel
func wrap8(x []int8, y []uint8, n int8, m uint8) {
	for i := range len(x) {
		x[i] += n
		y[i] = y[i]*m + 1
	}
}

//qd:kernel
func shift16(s [][]int16, u [][]uint16, k uint) {
	for i := range len(s) {
		for j := range len(s[0]) {
			s[i][j] = s[i][j] << k >> 1
			u[i][j] = ^u[i][j] / 3
		}
	}
}

//qd:kernel
func sum4(x [][][][]int32, out []int64) {
	for i := range len(x) {
		for j := range len(x[0]) {
			for k := range len(x[0][0]) {
				for l := range len(x[0][0][0]) {
					x[i][j][k][l] += int32(1000*i + 100*j + 10*k + l)
				}
			}
		}
	}
	out[0] = int64(len(x[0][0][0]))
}
`

func TestSmallIntKernels(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, smallIntsSrc, WithFilename("k.go"))

		// Ndarray[int8] and Ndarray[uint8], filled, then wrapped.
		x := newNdarray[int8](t, p, arrayLen)
		defer x.Close()
		y := newNdarray[uint8](t, p, arrayLen)
		defer y.Close()
		check(t, x.FillOn(p.DefaultStream(), 127))
		check(t, y.FillOn(p.DefaultStream(), 200))
		check(t, kernelOf(t, m, "wrap8").Launch(x, y, int8(1), uint8(2)))
		allEqual(t, "x", toSlice(t, x), int8(-128)) // 127+1 wraps
		allEqual(t, "y", toSlice(t, y), uint8(145)) // 200*2+1 = 401 wraps to 145
		// Untyped-constant scalars convert as in a Go call.
		check(t, kernelOf(t, m, "wrap8").Launch(x, y, -1, 0))
		allEqual(t, "x", toSlice(t, x), int8(127))
		allEqual(t, "y", toSlice(t, y), uint8(1))

		// Ndarray[int16] filled with FillOn (2-byte fill) and Go slices of
		// [][]uint16, copied back after the launch.
		s := newNdarray[int16](t, p, 4, 8)
		defer s.Close()
		check(t, s.FillOn(p.DefaultStream(), -3))
		u := make([][]uint16, 4)
		for i := range u {
			u[i] = slices.Repeat([]uint16{5}, 8)
		}
		check(t, kernelOf(t, m, "shift16").Launch(s, u, uint(14)))
		// int16(-3) << 14 is -49152, which wraps to 16384; >> 1 is 8192.
		allEqual(t, "s", toSlice(t, s), int16(8192))
		for i := range u {
			allEqual(t, "u[i]", u[i], uint16((0xffff^5)/3))
		}
		check(t, kernelOf(t, m, "shift16").Launch(s, u, uint(40)))
		allEqual(t, "s", toSlice(t, s), int16(0)) // shifts past the width

		// Go slices of [][]uint8 through the same kinds of parameters.
		b := [][]uint8{{250, 251}, {252, 253}}
		b8 := make([]int8, 2)
		check(t, kernelOf(t, m, "wrap8").Launch(b8, b[0], int8(-128), uint8(3)))
		if want := []uint8{239, 242}; !slices.Equal(b[0], want) || !slices.Equal(b8, []int8{-128, -128}) {
			t.Fatalf("got %v and %v, want %v and [-128 -128]", b[0], b8, want)
		}
	})
}

func TestFourDimArrays(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, smallIntsSrc, WithFilename("k.go"))
		x := newNdarray[int32](t, p, 2, 3, 4, 5)
		defer x.Close()
		if got := x.Shape(); !slices.Equal(got, []int{2, 3, 4, 5}) {
			t.Fatalf("Shape() = %v", got)
		}
		out := make([]int64, 1)
		check(t, kernelOf(t, m, "sum4").Launch(x, out))
		got := toSlice(t, x)
		n := 0
		for i := range 2 {
			for j := range 3 {
				for k := range 4 {
					for l := range 5 {
						if want := int32(1000*i + 100*j + 10*k + l); got[n] != want {
							t.Fatalf("x[%d][%d][%d][%d] = %d, want %d", i, j, k, l, got[n], want)
						}
						n++
					}
				}
			}
		}
		if out[0] != 5 {
			t.Fatalf("len(x[0][0][0]) = %d, want 5", out[0])
		}
		// A Go slice [][][][]int32 too, and a 4-D Reshape and Rows view.
		g := make([][][][]int32, 1)
		g[0] = [][][]int32{{{1, 2}}}
		check(t, kernelOf(t, m, "sum4").Launch(g, out))
		if g[0][0][0][0] != 1 || g[0][0][0][1] != 3 || out[0] != 2 {
			t.Fatalf("got %v and %d", g, out[0])
		}
		r := must(x.Reshape(1, 2, 3, 20))(t)
		if got := r.Shape(); !slices.Equal(got, []int{1, 2, 3, 20}) {
			t.Fatalf("Reshape: Shape() = %v", got)
		}
		rows := must(x.Rows(1, 2))(t)
		if got := toSlice(t, rows); len(got) != 60 || got[0] != 1000 {
			t.Fatalf("Rows(1, 2): %d elements, first %d", len(got), got[0])
		}
		if _, err := NewNdarray[int32](p, 1, 1, 1, 1, 1); err == nil {
			t.Fatal("NewNdarray with 5 dimensions: no error")
		}
	})
}
