package kernels

// Loops count in 32- or 64-bit integers, so a small count is refused with
// the conversion to write.
//
//qd:kernel
func k(x []uint16, n uint16) {
	for i := range n /* ERROR "range over n, of type uint16: loops over 8- or 16-bit counts are not supported; range over int(n)" */ {
		x[i] = i
	}
}
