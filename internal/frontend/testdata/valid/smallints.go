package kernels

import "github.com/quadrants-go/qd"

// 8- and 16-bit integers: computed in 32 bits and truncated back, which is
// Go's wrap-around at their width.

type level uint8

type pixel struct {
	R, G, B uint8
	Depth   int16
}

//qd:kernel
func wrapAdd(x []int8, y []uint8, s [][]int16, n int8) {
	for i := range x {
		x[i] += n
		y[i] = y[i]*2 + uint8(i)
		x[i] = -x[i]
		y[i] = ^y[i] &^ 3
	}
	for i, j := range qd.NDRange(len(s), len(s[0])) {
		s[i][j] <<= 3
		s[i][j] >>= uint(j)
	}
}

//qd:kernel
func convert(f []float32, out []int8, l []level, u []uint16) {
	for i := range f {
		out[i] = int8(f[i])
		l[i] = level(out[i]) + 1
		u[i] = uint16(out[i]) / 3
		if out[i] < 0 && l[i] != 7 {
			u[i]++
		}
		out[i] = max(out[i], -100, int8(i))
	}
}

//qd:kernel
func pixels(ps []pixel, out []uint32) {
	for i := range ps {
		p := ps[i]
		ps[i].R += p.G
		ps[i].Depth--
		if p == (pixel{R: 1}) {
			out[i] = uint32(p.R) + uint32(p.Depth)
		}
		switch p.B {
		case 255:
			out[i] = 1
		}
	}
}

//qd:kernel
func constants(x []uint8, y []int16) {
	const big = 300
	x[0] = big - 100
	y[0] = -big * 100
	var z uint8 = 250
	z += 10
	x[1] = z
}
