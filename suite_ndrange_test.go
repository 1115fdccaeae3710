package qd

import (
	"math"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Multi-dimensional parallel loops and the accesses GPU code generators
// strength-reduce there (an element base per array plus a constant per
// access): neighbours at ± offsets in each dimension, indices through
// locals, a transposed access, a local that is assigned (the plain path),
// a 3-D loop. Every result is checked against the same loop in Go.

const ndrangeSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func stencil(in, out [][]float32) {
	for i0, j0 := range qd.NDRange(len(out)-2, len(out[0])-2) {
		i, j := i0+1, j0+1
		up := i - 1
		out[i][j] = in[up][j] + 2*in[i+1][j] + 3*in[i][j-1] + 4*in[i][j+1] + 5*in[i][j]
	}
}

//qd:kernel
func storeThenLoad(in, out, out2 [][]float32) {
	for i, j := range qd.NDRange(len(out), len(out[0])) {
		out[i][j] = in[i][j] + 1
		out2[i][j] = out[i][j]*2 + in[i][j]
	}
}

//qd:kernel
func inPlace(a [][]float32) {
	for i, j := range qd.NDRange(len(a), len(a[0])) {
		a[i][j] = a[i][j]*2 + 1
	}
}

//qd:kernel
func transpose(a, b [][]float32) {
	for i, j := range qd.NDRange(len(a), len(a[0])) {
		b[j][i] = a[i][j]
	}
}

//qd:kernel
func sum2(a [][]float32, out []float32, cnt []int32) {
	for i, j := range qd.NDRange(len(a), len(a[0])) {
		qd.AtomicAdd(&out[0], a[i][j])
		qd.AtomicAdd(&cnt[0], 1)
	}
}

//qd:kernel
func window(x, c, y []float32) {
	for i := range len(y) {
		acc := float32(0)
		for j := 0; j < len(c)-1; j++ {
			k := j + 1
			acc += c[j]*x[i] - c[k]
			y[i] = acc
		}
	}
}

//qd:kernel
func shiftBack(a, b [][]float32) {
	for i, j := range qd.NDRange(len(b), len(b[0])) {
		k := j
		if j > 0 {
			k = j - 1
		}
		b[i][j] = a[i][k]
	}
}
`

func grid(n, m int, f func(i, j int) float32) [][]float32 {
	g := make([][]float32, n)
	for i := range g {
		g[i] = make([]float32, m)
		for j := range g[i] {
			if f != nil {
				g[i][j] = f(i, j)
			}
		}
	}
	return g
}

func TestNDRangeAccesses(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, ndrangeSrc, WithFilename("k.go"))
		// Rows shorter and longer than a GPU tile's 32 columns, row counts
		// that are not multiples of a tile's rows; rows of 256 points and
		// more, which the PTX walks in chunks of rows (whole chunks issue
		// their loads first; a last chunk cut short does not), with a
		// column block cut short.
		for _, size := range [][2]int{{37, 53}, {37, 130}, {9, 200}, {50, 300}, {31, 517}} {
			n, w := size[0], size[1]
			in := grid(n, w, func(i, j int) float32 { return float32(i*w + j) })
			out := grid(n, w, nil)
			check(t, kernelOf(t, m, "stencil").Launch(in, out))
			for i := 1; i < n-1; i++ {
				for j := 1; j < w-1; j++ {
					want := in[i-1][j] + 2*in[i+1][j] + 3*in[i][j-1] + 4*in[i][j+1] + 5*in[i][j]
					if out[i][j] != want {
						t.Fatalf("stencil %dx%d: out[%d][%d] = %v, want %v", n, w, i, j, out[i][j], want)
					}
				}
			}
			if out[0][5] != 0 || out[5][w-1] != 0 {
				t.Fatalf("stencil %dx%d wrote the border", n, w)
			}
			o1, o2 := grid(n, w, nil), grid(n, w, nil)
			check(t, kernelOf(t, m, "storeThenLoad").Launch(in, o1, o2))
			ip := grid(n, w, func(i, j int) float32 { return float32(i - j) })
			check(t, kernelOf(t, m, "inPlace").Launch(ip))
			for i := range n {
				for j := range w {
					if want := in[i][j] + 1; o1[i][j] != want || o2[i][j] != 2*want+in[i][j] {
						t.Fatalf("storeThenLoad %dx%d: [%d][%d] = %v, %v, want %v, %v", n, w, i, j, o1[i][j], o2[i][j], want, 2*want+in[i][j])
					}
					if want := float32(i-j)*2 + 1; ip[i][j] != want {
						t.Fatalf("inPlace %dx%d: a[%d][%d] = %v, want %v", n, w, i, j, ip[i][j], want)
					}
				}
			}
			tr := grid(w, n, nil)
			check(t, kernelOf(t, m, "transpose").Launch(in, tr))
			sb := grid(n, w, nil)
			check(t, kernelOf(t, m, "shiftBack").Launch(in, sb))
			for i := range n {
				for j := range w {
					if tr[j][i] != in[i][j] {
						t.Fatalf("transpose %dx%d: b[%d][%d] = %v, want %v", n, w, j, i, tr[j][i], in[i][j])
					}
					if want := in[i][max(j-1, 0)]; sb[i][j] != want {
						t.Fatalf("shiftBack %dx%d: b[%d][%d] = %v, want %v", n, w, i, j, sb[i][j], want)
					}
				}
			}
			sum, cnt := []float32{0}, []int32{0}
			check(t, kernelOf(t, m, "sum2").Launch(in, sum, cnt))
			// Exact below 2^24; above, float32 rounding depends on the
			// order of the additions, which a reduction does not fix.
			want := float64(n*w) * float64(n*w-1) / 2
			if math.Abs(float64(sum[0])-want) > want*1e-6 || cnt[0] != int32(n*w) {
				t.Fatalf("sum2 %dx%d: sum %v count %d, want %v and %d", n, w, sum[0], cnt[0], want, n*w)
			}
		}

		// A serial loop unrolled by GPU code generators, with c[j] and
		// c[j+1]; lengths 0 to 9 cover every remainder.
		win := kernelOf(t, m, "window")
		x := []float32{1, 2, 3}
		for nc := range 10 {
			c := make([]float32, nc)
			for j := range c {
				c[j] = float32(j*j) - 3
			}
			y := make([]float32, len(x))
			check(t, win.Launch(x, c, y))
			for i := range x {
				var acc, want float32
				for j := 0; j < len(c)-1; j++ {
					acc += c[j]*x[i] - c[j+1]
					want = acc
				}
				if y[i] != want {
					t.Fatalf("window with %d coefficients: y[%d] = %v, want %v", nc, i, y[i], want)
				}
			}
		}

		k3 := build(t, p, suitekernels.Diff3())
		const d0, d1, d2 = 6, 7, 9
		src := make([]float32, d0*d1*d2)
		for i := range src {
			src[i] = float32(i * i % 97)
		}
		ai := newNdarray[float32](t, p, d0, d1, d2)
		ao := newNdarray[float32](t, p, d0, d1, d2)
		check(t, ai.CopyFromHost(src))
		check(t, k3.Launch(ai, ao))
		got := toSlice(t, ao)
		at := func(i, j, k int) float32 { return src[(i*d1+j)*d2+k] }
		for i := range d0 {
			for j := range d1 {
				for k := range d2 {
					var want float32
					if i < d0-1 && j < d1-1 && k < d2-1 {
						want = at(i, j, k+1) - at(i+1, j, k) + at(i, j+1, k)
					}
					if g := got[(i*d1+j)*d2+k]; g != want {
						t.Fatalf("diff3: out[%d][%d][%d] = %v, want %v", i, j, k, g, want)
					}
				}
			}
		}
	})
}

// On a GPU a 2-D range of 16384² points has more row chunks than the grid
// has blocks, so each block strides over several units (the carry from
// the last column block to the next row chunk included), each a whole
// chunk that loads first. Rows are filled with i mod 7, so every output
// point checks its rows above and below. Too big for the CPU's share of
// the suite: it runs on GPUs only.
func TestNDRangeStridedChunks(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		if p.Arch() == CPU {
			t.Skip("sized for a GPU's grid: 2 × 1 GiB")
		}
		const n = 1 << 14
		m := compileModule(t, p, ndrangeSrc, WithFilename("k.go"))
		in := newNdarray[float32](t, p, n, n)
		defer in.Close()
		out := newNdarray[float32](t, p, n, n)
		defer out.Close()
		s := newStream(t, p)
		defer s.Close()
		for i := range n {
			row := must(in.Rows(i, i+1))(t)
			check(t, row.FillOn(s, float32(i%7)))
		}
		check(t, kernelOf(t, m, "stencil").LaunchOn(s, in, out))
		check(t, s.Synchronize())
		got := toSlice(t, out)
		bad := 0
		for i := range n {
			want := float32(0)
			if i > 0 && i < n-1 {
				want = float32((i-1)%7) + 2*float32((i+1)%7) + 12*float32(i%7)
			}
			for j := range n {
				w := want
				if j == 0 || j == n-1 {
					w = 0
				}
				if g := got[i*n+j]; g != w {
					if bad++; bad <= 5 {
						t.Errorf("out[%d][%d] = %v, want %v", i, j, g, w)
					}
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d points wrong", bad)
		}
	})
}
