package suitekernels

import (
	"fmt"
	"strings"
)

// ReduceOps are the atomic operations of ReduceSource's red_* kernels.
var ReduceOps = []string{"Add", "Min", "Max"}

// reduceTypes are the element types of ReduceSource's red_* kernels.
var reduceTypes = []string{"int32", "int64", "uint32", "uint64", "float32", "float64"}

// ReduceSource is the Go source of the reduction tests (docs/semantics.md#reductions):
// red_<Op>_<type>(x, r []T): r[0] op= every x[i], plus kernels with two
// reductions, reductions in stream-parallel groups, and row sums over a 2-D
// range.
func ReduceSource() string {
	var b strings.Builder
	b.WriteString("package kernels\n\nimport \"github.com/quadrants-go/qd\"\n")
	for _, op := range ReduceOps {
		for _, ty := range reduceTypes {
			fmt.Fprintf(&b, `
//qd:kernel
func red_%[1]s_%[2]s(x, r []%[2]s) {
	for i := range len(x) {
		qd.Atomic%[1]s(&r[0], x[i])
	}
}
`, op, ty)
		}
	}
	b.WriteString(`
// Two reductions, one of them under an if, and an index from a scalar.
//
//qd:kernel
func sumAndMaxPositive(x []float64, r []float64, k int) {
	for i := range len(x) {
		v := x[i]
		qd.AtomicAdd(&r[k], v)
		if v > 0 {
			qd.AtomicMax(&r[k+1], v)
		}
	}
}

// Reductions in each of two stream-parallel groups.
//
//qd:kernel
func groupSums(a, b []int64, r []int64) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			qd.AtomicAdd(&r[0], a[i])
		}
	})
	qd.StreamParallel(func() {
		for i := range len(b) {
			qd.AtomicMin(&r[1], b[i])
		}
	})
}

// Row sums: the address varies with the outer index only.
//
//qd:kernel
func rowSums(m [][]int32, r []int32) {
	for i, j := range qd.NDRange(len(m), len(m[0])) {
		qd.AtomicAdd(&r[i], m[i][j])
	}
}
`)
	return b.String()
}
