package kernels

import (
	"math"

	q "github.com/quadrants-go/qd"
)

const scale = 2.5

type Real = float64

//qd:kernel
func control(n int32, x []float64, hist []int32, v [][][]float32) {
	for i := range len(x) {
		if i%2 == 0 {
			continue
		}
		s := 0.0
	outer:
		for j := 0; j < 10; j++ {
			switch {
			case j == 3:
				continue
			case j > 7:
				break outer
			}
			for k := range n {
				if k > 4 {
					break
				}
				s += float64(k) * scale
			}
		}
		switch t := int32(i) % 4; t {
		case 0, 1:
			s = -s
			fallthrough
		case 2:
			s *= 2
		default:
			if s > 100 {
				break
			}
			s += math.Pi
		}
		var a, b Real = 1, 2
		a, b = b, a
		x[i] = math.Sqrt(math.Abs(s)) + a - b + max(s, 0, float64(n)) + math.Inf(1)
		q.AtomicAdd(&hist[int(x[i])%len(hist)], 1)
		old := q.AtomicCAS(&hist[0], 0, n)
		x[i] += float64(old)
		x[i]++
		for cond := s > 1; cond; cond = false {
		}
		for {
			break
		}
	}
	for p := range q.NDRange3(len(v), len(v[0]), len(v[0][0])) {
		v[p.I][p.J][p.K] = float32(p.I*p.J<<1) / 2
	}
}
