package benchsuite

// The plain-Go references of the CPU construct kernels: each is the loop a
// Go programmer writes for the same computation, run on one goroutine. The
// kernels of cpu_kernels.go whose loops are already plain Go (a range over
// len(x) with a body of ordinary Go) are their own references and are
// called natively; the ones written with qd.NDRange or a reduction atomic
// get the nested loops or the local accumulator Go code would use.

// heatPlain is the demo's heat step as nested loops.
func heatPlain(in, out [][]float32, alpha float32) {
	for i := range in {
		for j := range in[i] {
			out[i][j] = heatAt(in, i, j, alpha)
		}
	}
}

// stencil5Plain is stencil5 as nested loops over the interior.
func stencil5Plain(in, out [][]float32) {
	for i := 1; i < len(in)-1; i++ {
		for j := 1; j < len(in[i])-1; j++ {
			out[i][j] = 0.5*in[i][j] + 0.125*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1]))
		}
	}
}

// sumPlain is sum with a local accumulator.
func sumPlain(x, out []float32) {
	acc := float32(0)
	for _, v := range x {
		acc += v
	}
	out[0] += acc
}

// rows3Plain is rows3 as nested loops.
func rows3Plain(in, out [][]float32, s float32) {
	for i := range in {
		for j := range in[i] {
			out[i][j] = in[i][j]*s + 1
		}
	}
}

// histogramPlain is histogram with +=.
func histogramPlain(idx []int32, h []float32) {
	for _, b := range idx {
		h[b] += 1
	}
}
