package benchsuite

import (
	"fmt"
	"strings"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
)

// The suite's kernels, written in Go as users write them: benchSrc holds
// them all, and the raw reference compiles the same source (frontend.Parse)
// so that it launches exactly the kernel qd launches.

// benchSrc is the source of every kernel of the suite:
//
//   - saxpy(a, x, y, n): y[i] = a*x[i] + y[i] for i < n; 4 parameters;
//   - fill_T(x, v): x[i] = v, and sum_T(x, out): out[0] += x[i] through
//     qd.AtomicAdd, a reduction (docs/semantics.md#reductions), for T float32, float64, int32;
//   - spin(state, idx, iters): iters steps of a linear congruential
//     generator ending in state[idx], a latency-bound loop on one thread
//     (each step depends on the last), which a GPU runs as one block of one
//     thread, so that many fit at once;
//   - spinG and spinG_groups: G such loops, one after another, or in G
//     stream-parallel groups (G = 2, 4, 8);
//   - poly(x, work): x[i] = a polynomial of degree work in x[i], the
//     kernel of the copy/compute pipeline;
//   - stencil5(in, out): a 2-D 5-point stencil over the interior of an n×n
//     grid, out = 0.5*in + 0.125*(the four neighbours).
var benchSrc = func() string {
	var b strings.Builder
	b.WriteString(`package bench

import "github.com/quadrants-go/qd"

//qd:kernel
func saxpy(a float32, x, y []float32, n int64) {
	for i := range n {
		y[i] = a*x[i] + y[i]
	}
}

//qd:kernel
func poly(x []float32, work int64) {
	for i := range len(x) {
		v := x[i]
		acc := float32(0)
		for k := int64(0); k < work; k++ {
			acc = acc*v + 0.5
		}
		x[i] = acc
	}
}

//qd:kernel
func spin(state []int64, idx, iters int64) {
	s := int64(1)
	for k := int64(0); k < iters; k++ {
		s = s*6364136223846793005 + 1442695040888963407
	}
	state[idx] = s
}

//qd:kernel
func stencil5(in, out [][]float32) {
	for i0, j0 := range qd.NDRange(len(out)-2, len(out[0])-2) {
		i, j := i0+1, j0+1
		sum := (in[i0][j] + in[i+1][j]) + (in[i][j0] + in[i][j+1])
		out[i][j] = 0.5*in[i][j] + 0.125*sum
	}
}
`)
	for _, t := range []string{"float32", "float64", "int32"} {
		fmt.Fprintf(&b, `
//qd:kernel
func fill_%[1]s(x []%[1]s, v %[1]s) {
	for i := range len(x) {
		x[i] = v
	}
}

//qd:kernel
func sum_%[1]s(x, out []%[1]s) {
	for i := range len(x) {
		qd.AtomicAdd(&out[0], x[i])
	}
}
`, t)
	}
	for _, g := range []int{2, 4, 8} {
		var plain, grouped strings.Builder
		for i := range g {
			loop := fmt.Sprintf(`s%[1]d := int64(1)
	for k := int64(0); k < iters; k++ {
		s%[1]d = s%[1]d*6364136223846793005 + 1442695040888963407
	}
	state[%[1]d] = s%[1]d
`, i)
			plain.WriteString("\t" + loop)
			grouped.WriteString("\tqd.StreamParallel(func() {\n\t" + strings.ReplaceAll(loop, "\n\t", "\n\t\t") + "\t})\n")
		}
		fmt.Fprintf(&b, "\n//qd:kernel\nfunc spin%d(state []int64, iters int64) {\n%s}\n", g, plain.String())
		fmt.Fprintf(&b, "\n//qd:kernel\nfunc spin%d_groups(state []int64, iters int64) {\n%s}\n", g, grouped.String())
	}
	return b.String()
}()

// benchKernel is kernel name of benchSrc, compiled on p. The Module is
// left open: the Program's Close releases it.
func benchKernel(p *qd.Program, name string) (*qd.Kernel, error) {
	m, err := qd.Compile(p, benchSrc, qd.WithFilename("bench.go"))
	if err != nil {
		return nil, err
	}
	return m.Kernel(name)
}

// benchIR is kernel name of benchSrc as IR, for the raw reference.
func benchIR(name string) (*ir.Kernel, error) {
	ks, err := frontend.Parse("bench.go", []byte(benchSrc))
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		if k.Name == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("benchsuite: no kernel %s", name)
}
