// want: 9:7: kernel k cannot be generic
package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

//qd:kernel
func k[T float32 | float64](x []T) {
}
