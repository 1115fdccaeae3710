package kernels

import "github.com/quadrants-go/qd"

func sq(x float32) float32 { return x * x }

func clamp(x, lo, hi float32) float32 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

func sum(a []float32) (s float32) {
	for i := range len(a) {
		if a[i] < 0 {
			return
		}
		s += a[i]
	}
	return s
}

func divmod(a, b int) (int, int) { return a / b, a % b }

func fill(a []float32, v float32) {
	for i := range len(a) {
		a[i] = v
	}
}

// StreamParallel is the user's own function: an ordinary helper.
func StreamParallel(f float32) float32 { return f + 1 }

//qd:kernel
func helpers(x, y []float32, n int) {
	fill(y, 0)
	for i := range len(x) {
		q, r := divmod(i, 3)
		x[i] = clamp(sq(x[i]), 0, 1) + float32(q+r) + StreamParallel(1)
		if i < n && sum(x) > 2 {
			y[i] = sum(x)
		}
	}
}
