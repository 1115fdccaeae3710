package qd_test

import (
	"fmt"

	"github.com/quadrants-go/qd"
)

// saxpy is a kernel: compiled by qd it runs in parallel; called from Go it
// runs serially, as a reference.
//
//qd:kernel
func saxpy(a float32, x, y []float32) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i]
	}
}

// A kernel called directly from Go runs natively.
func Example_nativeKernel() {
	x := []float32{1, 2, 3}
	y := []float32{10, 20, 30}
	saxpy(2, x, y)
	fmt.Println(y)
	// Output: [12 24 36]
}

//qd:kernel
func histogram(values []int32, bins []int32) {
	for i := range len(values) {
		qd.AtomicAdd(&bins[values[i]%int32(len(bins))], 1)
	}
}

func ExampleAtomicAdd() {
	bins := make([]int32, 3)
	histogram([]int32{0, 1, 2, 3, 4, 5, 6}, bins)
	fmt.Println(bins)
	// Output: [3 2 2]
}

//qd:kernel
func twoJobs(a []int32, c [][]float32) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] = 1
		}
	})
	qd.StreamParallel(func() {
		for i, j := range qd.NDRange(len(c), len(c[0])) {
			c[i][j] = qd.Sqrt(float32(i*len(c[0]) + j))
		}
	})
}

func ExampleStreamParallel() {
	a := make([]int32, 2)
	c := [][]float32{{0, 1}, {4, 9}}
	twoJobs(a, c)
	fmt.Println(a, c)
	// Output: [1 1] [[0 1] [1.4142135 1.7320508]]
}

// cumulate scales x in parallel, then turns it into its running sums on one
// thread: each sum needs the one before it, so the loop is serial on
// purpose, and qd.Serial says so (a range loop under the if alone would be
// refused, since it would run on one thread by mistake as often).
//
//qd:kernel
func cumulate(x []int64, on bool) {
	for i := range len(x) {
		x[i] *= 10
	}
	qd.Serial(func() {
		if on {
			for i := range len(x) - 1 {
				x[i+1] += x[i]
			}
		}
	})
}

func ExampleSerial() {
	x := []int64{1, 2, 3, 4}
	cumulate(x, true)
	fmt.Println(x)
	// Output: [10 30 60 100]
}

func ExampleNDRange3() {
	v := [][][]int{{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}}
	for p := range qd.NDRange3(2, 2, 2) {
		v[p.I][p.J][p.K] = p.I*4 + p.J*2 + p.K
	}
	fmt.Println(v)
	// Output: [[[0 1] [2 3]] [[4 5] [6 7]]]
}

func ExampleLoopConfig() {
	x := make([]float32, 4)
	qd.LoopConfig(qd.BlockDim(256)) // tunes the GPU launch; a no-op natively
	for i := range len(x) {
		x[i] = float32(i)
	}
	fmt.Println(x)
	// Output: [0 1 2 3]
}

func ExampleAtomicCAS() {
	x := []int64{5}
	fmt.Println(qd.AtomicCAS(&x[0], 5, 7), x[0])
	fmt.Println(qd.AtomicCAS(&x[0], 5, 9), x[0])
	// Output:
	// 5 7
	// 7 7
}

func ExampleSqrt() {
	fmt.Println(qd.Sqrt(float32(2)), qd.Sqrt(2.0))
	// Output: 1.4142135 1.4142135623730951
}
