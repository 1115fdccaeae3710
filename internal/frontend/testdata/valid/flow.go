package kernels

import "github.com/quadrants-go/qd"

func positive(x float32) bool {
	if x > 0 {
		return true
	}
	return false
}

func find(a []int32, v int32) int {
	for i := range len(a) {
		if a[i] == v {
			return i
		}
	}
	return -1
}

func bump(a []int32, i int) int32 { return qd.AtomicAdd(&a[i], 1) }

//qd:kernel
func setup(a []int32) {
	for i := range len(a) {
		a[i] = int32(i)
	}
}

//qd:kernel
func flow(x []float32, a []int32, m [][]float32, n int) {
	setup(a)
	total := 0
	for i := 0; i < n; i++ {
		total += i
	}
	qd.Serial(func() { // find's range loop runs in the loop's condition: one thread, on purpose
		for k := 0; k < 3 && find(a, int32(k)) >= 0; k++ {
			a[k] = 0
		}
	})
	for i, v := range x {
		if v < 0 {
			continue
		}
		x[i] = v * float32(total)
	}
	for i := range len(m) {
		i++
	}
	for i := range len(m) {
	rows:
		for j := range len(m[0]) {
			for r, c := range qd.NDRange(2, 2) {
				if r == c {
					continue rows
				}
			}
			m[i][j] = 0
		}
	}
	for i := range len(x) {
		if positive(x[i]) && bump(a, i) > 2 {
			x[i] = 1
		}
		a[i], a[0] = a[0], a[i]
		x[i] += float32(bump(a, i)) + float32(bump(a, i))
		switch v := find(a, 3); {
		case v > 0:
			x[i] = 2
		case v < -5:
		}
	}
	if n > 1 {
		x[0] = 1
	} else if n > 0 {
		x[0] = 2
	} else {
		x[0] = 3
	}
}
