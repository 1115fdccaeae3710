// want: 10:9: the range value of x would be a row
package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k(x [][]int) {
	for i, r := range x {
		_, _ = i, r
	}
}
