package benchsuite

import (
	"math"

	"github.com/quadrants-go/qd"
)

// The arguments of the CPU construct cases: inputs made on the host, copied
// into Ndarrays for the kernel, and kept as Go slices for the reference.

// unitInputs are n values spread over [0, 1).
func unitInputs(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Mod(float64(i)*0.6180339887498949, 1))
	}
	return x
}

// ndarrayOf copies data into a new Ndarray of the given shape.
func ndarrayOf[T float32 | int32 | uint32](p *qd.Program, data []T, shape ...int) (*qd.Ndarray[T], error) {
	a, err := qd.NewNdarray[T](p, shape...)
	if err != nil {
		return nil, err
	}
	if err := a.CopyFromHost(data); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// rowsOf views flat as rows of m elements.
func rowsOf(flat []float32, m int) [][]float32 {
	rows := make([][]float32, len(flat)/m)
	for i := range rows {
		rows[i] = flat[i*m : (i+1)*m : (i+1)*m]
	}
	return rows
}

func widen[T float32 | int32 | uint32](s []T) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// output makes cpuRun.got read a.
func output[T float32 | int32 | uint32](a *qd.Ndarray[T]) func() ([]float64, error) {
	return func() ([]float64, error) {
		s, err := a.ToSlice()
		return widen(s), err
	}
}

// pairOf makes an input Ndarray holding in and an output Ndarray of zeros,
// both of the given shape; on an error nothing is left open.
func pairOf[T float32 | int32 | uint32](p *qd.Program, in []T, shape ...int) (*qd.Ndarray[T], *qd.Ndarray[T], error) {
	a, err := ndarrayOf(p, in, shape...)
	if err != nil {
		return nil, nil, err
	}
	b, err := qd.NewNdarray[T](p, shape...)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func setupSaxpy(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	x, y := unitInputs(n), unitInputs(n)
	X, Y, err := pairOf(p, x, n)
	if err != nil {
		return nil, err
	}
	if err := Y.CopyFromHost(y); err != nil {
		X.Close()
		Y.Close()
		return nil, err
	}
	return &cpuRun{
		args: []any{float32(2), X, Y}, plain: func() { saxpy(2, x, y) },
		got: output(Y), want: func() []float64 { return widen(y) }, free: closers(X, Y),
	}, nil
}

// setupGrid2 is the set-up of a kernel (in, out [][]float32, extra...) over
// an n/m × m grid, with ref its plain-Go reference.
func setupGrid2(extra []any, ref func(in, out [][]float32)) func(p *qd.Program, _ *qd.Module, n, m int) (*cpuRun, error) {
	return func(p *qd.Program, _ *qd.Module, n, m int) (*cpuRun, error) {
		in, out := unitInputs(n), make([]float32, n)
		In, Out, err := pairOf(p, in, n/m, m)
		if err != nil {
			return nil, err
		}
		inRows, outRows := rowsOf(in, m), rowsOf(out, m)
		return &cpuRun{
			args: append([]any{In, Out}, extra...), plain: func() { ref(inRows, outRows) },
			got: output(Out), want: func() []float64 { return widen(out) }, free: closers(In, Out),
		}, nil
	}
}

var (
	setupHeat     = setupGrid2([]any{float32(0.2)}, func(in, out [][]float32) { heatPlain(in, out, 0.2) })
	setupStencil5 = setupGrid2(nil, stencil5Plain)
	setupRows3    = setupGrid2([]any{float32(1.5)}, func(in, out [][]float32) { rows3Plain(in, out, 1.5) })
)

// setupMap is the set-up of a kernel (x, y []T) over inputs(n) that is
// plain Go already: called natively, it is its own reference.
func setupMap[T float32 | int32 | uint32](inputs func(n int) []T, kernel func(x, y []T)) func(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	return func(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
		x, y := inputs(n), make([]T, n)
		X, Y, err := pairOf(p, x, n)
		if err != nil {
			return nil, err
		}
		return &cpuRun{
			args: []any{X, Y}, plain: func() { kernel(x, y) },
			got: output(Y), want: func() []float64 { return widen(y) }, free: closers(X, Y),
		}, nil
	}
}

// setupUnary is setupMap over values in [0, 1).
func setupUnary(kernel func(x, y []float32)) func(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	return setupMap(unitInputs, kernel)
}

// setupCollatz starts the Collatz steps from 1 to 10007.
var setupCollatz = setupMap(func(n int) []int32 {
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(1 + i%10007)
	}
	return x
}, collatz)

var setupScan = setupUnary(scan)

func setupSum(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	// Small integers: every partial sum of one run is exact in float32, so
	// the order of the adds does not matter and the check is exact.
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i % 8)
	}
	out := []float32{0}
	X, err := ndarrayOf(p, x, n)
	if err != nil {
		return nil, err
	}
	Out, err := qd.NewNdarray[float32](p, 1)
	if err != nil {
		X.Close()
		return nil, err
	}
	return &cpuRun{
		args: []any{X, Out}, plain: func() { sumPlain(x, out) },
		got: output(Out), want: func() []float64 { return widen(out) }, free: closers(X, Out),
	}, nil
}

func closers(as ...interface{ Close() error }) []interface{ Close() error } { return as }

// setupIntDivRem divides by 1 to 97 the values 1 to 10007.
var setupIntDivRem = setupMap(func(n int) []int32 {
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(1 + i%10007)
	}
	return x
}, intDivRem)

// setupScatterHist bins n pseudo-random indices into 256 bins (counts
// small enough to be exact in float32).
func setupScatterHist(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	const bins = 256
	idx := make([]int32, n)
	s := uint32(1)
	for i := range idx {
		s = s*1664525 + 1013904223
		idx[i] = int32(s >> 24)
	}
	h := make([]float32, bins)
	Idx, err := ndarrayOf(p, idx, n)
	if err != nil {
		return nil, err
	}
	H, err := qd.NewNdarray[float32](p, bins)
	if err != nil {
		Idx.Close()
		return nil, err
	}
	return &cpuRun{
		args: []any{Idx, H}, plain: func() { histogramPlain(idx, h) },
		got: output(H), want: func() []float64 { return widen(h) }, free: closers(Idx, H),
	}, nil
}

// setupMatmul4 is class 7's set-up: c = a·b for a, b and c of n/m × m
// elements (square: n = m·m), matmul4 its own reference.
func setupMatmul4(p *qd.Program, _ *qd.Module, n, m int) (*cpuRun, error) {
	a, b, c := unitInputs(n), unitInputs(n), make([]float32, n)
	for i := range b {
		b[i] = 1 - b[i]
	}
	A, C, err := pairOf(p, a, n/m, m)
	if err != nil {
		return nil, err
	}
	B, err := ndarrayOf(p, b, n/m, m)
	if err != nil {
		A.Close()
		C.Close()
		return nil, err
	}
	ar, br, cr := rowsOf(a, m), rowsOf(b, m), rowsOf(c, m)
	return &cpuRun{
		args: []any{A, B, C, m / 4}, plain: func() { matmul4(ar, br, cr, m/4) },
		got: output(C), want: func() []float64 { return widen(c) }, free: closers(A, B, C),
	}, nil
}
