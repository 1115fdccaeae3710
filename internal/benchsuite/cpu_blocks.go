package benchsuite

import (
	_ "embed"
	"errors"

	"github.com/quadrants-go/qd"
)

// The block kernels on the CPU backend: the kernels of the block rows
// (testdata/blocks.go, as the GPU runs them) and the radix sort of
// examples/blocks, each timed on one core and on two against the same
// algorithm in plain serial Go (cpu_blocks_plain.go). Issue 24's bar: per
// core, at least as fast as plain Go.

// exampleBlocksSrc is examples/blocks/kernels.go, whose radix sort is
// measured here (TestExampleBlocksCopy keeps the copy the same).
//
//go:embed testdata/blocks_example.go
var exampleBlocksSrc string

// cpuBlockCases are the block kernels, in table order.
func cpuBlockCases() []cpuCase {
	sized := func(full, quick, m int) func(bool) (int, int) {
		return func(q bool) (int, int) {
			if q {
				return quick, m
			}
			return full, m
		}
	}
	square := func(full, quick int) func(bool) (int, int) {
		return func(q bool) (int, int) {
			if q {
				return quick * quick, quick
			}
			return full * full, full
		}
	}
	return []cpuCase{
		{name: "block reduce (qd.BlockSum)", kernel: "blockSum", bar: 1, size: sized(1<<22, 1<<18, 0), setup: setupBlockSum},
		{name: "shared-tile transpose", kernel: "transpose", bar: 1, size: square(2048, 256), setup: setupTranspose},
		{name: "tiled SGEMM (elements of c)", kernel: "sgemm", bar: 1, size: square(256, 128), setup: setupSgemm},
		{name: "privatised 256-bin histogram (words of 4 bytes)", kernel: "histogram256", bar: 1, size: sized(1<<20, 1<<16, 0), setup: setupHistogram},
		{name: "exclusive scan (int32)", id: "scan", bar: 1, size: sized(1<<22, 1<<16, 0), setup: setupScanBlocks},
		{name: "radix sort (uint32 key-value pairs)", id: "sort", bar: 1, size: sized(1<<20, 1<<14, 0), setup: setupSort},
	}
}

// cpuBlocks measures every block kernel as cpuConstructs measures the
// constructs.
func (s *suite) cpuBlocks() error {
	return s.cpuTable("CPU block kernels", blocksSrc, "blocks.go", cpuBlockCases())
}

// blockNblocks is the block count of the kernels that take one (blockSum,
// histogram256): enough blocks for the workers to share evenly.
const blockNblocks = 64

// ndarrays makes Ndarrays and keeps the first error; close frees them.
type ndarrays struct {
	p    *qd.Program
	err  error
	open []interface{ Close() error }
}

func newArrays[T float32 | int32 | uint32](na *ndarrays, data []T, shape ...int) *qd.Ndarray[T] {
	if na.err != nil {
		return nil
	}
	a, err := ndarrayOf(na.p, data, shape...)
	if err != nil {
		na.err = err
		return nil
	}
	na.open = append(na.open, a)
	return a
}

func (na *ndarrays) close() {
	for _, a := range na.open {
		a.Close()
	}
}

// done is what a set-up returns: run, or the first error with nothing
// left open.
func (na *ndarrays) done(run *cpuRun) (*cpuRun, error) {
	if na.err != nil {
		na.close()
		return nil, na.err
	}
	run.free = na.open
	return run, nil
}

func setupBlockSum(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	// Small integers: every partial sum is exact in float32 (n·3.5 <
	// 2^24), so the order of the adds does not matter.
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i % 8)
	}
	out := []float32{0}
	na := &ndarrays{p: p}
	X, Out := newArrays(na, x, n), newArrays(na, out, 1)
	return na.done(&cpuRun{
		args: []any{X, Out, blockNblocks}, plain: func() { blockSumPlain(x, out) },
		got: output(Out), want: func() []float64 { return widen(out) },
	})
}

func setupTranspose(p *qd.Program, _ *qd.Module, n, side int) (*cpuRun, error) {
	in, out := make([]float32, n), make([]float32, n)
	for i := range in {
		in[i] = float32(i % 65521)
	}
	na := &ndarrays{p: p}
	In, Out := newArrays(na, in, side, side), newArrays(na, out, side, side)
	inRows, outRows := rowsOf(in, side), rowsOf(out, side)
	return na.done(&cpuRun{
		args: []any{In, Out}, plain: func() { transposePlain(inRows, outRows) },
		got: output(Out), want: func() []float64 { return widen(out) },
	})
}

func setupSgemm(p *qd.Program, _ *qd.Module, n, side int) (*cpuRun, error) {
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i%7-3), float32(i%5-2) // small integers: exact sums
	}
	na := &ndarrays{p: p}
	A, B, C := newArrays(na, a, side, side), newArrays(na, b, side, side), newArrays(na, c, side, side)
	aRows, bRows, cRows := rowsOf(a, side), rowsOf(b, side), rowsOf(c, side)
	return na.done(&cpuRun{
		args: []any{A, B, C}, plain: func() { sgemmPlain(aRows, bRows, cRows) },
		got: output(C), want: func() []float64 { return widen(c) },
	})
}

func setupHistogram(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	data, hist := make([]uint32, n), make([]uint32, 256)
	x := uint32(12345)
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = x
	}
	na := &ndarrays{p: p}
	Data, Hist := newArrays(na, data, n), newArrays(na, hist, 256)
	return na.done(&cpuRun{
		args: []any{Data, Hist, blockNblocks}, plain: func() { histogram256Plain(data, hist) },
		got: output(Hist), want: func() []float64 { return widen(hist) },
	})
}

// setupScanBlocks is the block rows' scan (scanRow): two levels of runs of
// 2048 (scanRun) above x, five launches.
func setupScanBlocks(p *qd.Program, mod *qd.Module, n, _ int) (*cpuRun, error) {
	totals, err := mod.Kernel("scanTotals")
	if err != nil {
		return nil, err
	}
	runs, err := mod.Kernel("scanRuns")
	if err != nil {
		return nil, err
	}
	x, y := make([]int32, n), make([]int32, n)
	for i := range x {
		x[i] = int32(i%7 - 3)
	}
	n1 := (n + 2047) / 2048
	n2 := (n1 + 2047) / 2048
	na := &ndarrays{p: p}
	X, Y := newArrays(na, x, n), newArrays(na, y, n)
	sums1, sums2 := newArrays(na, make([]int32, n1), n1), newArrays(na, make([]int32, n2), n2)
	off1, off2, zero := newArrays(na, make([]int32, n1), n1), newArrays(na, make([]int32, n2), n2), newArrays(na, []int32{0}, 1)
	return na.done(&cpuRun{
		launch: func(st *qd.Stream) error {
			return errors.Join(
				totals.LaunchOn(st, X, sums1),
				totals.LaunchOn(st, sums1, sums2),
				runs.LaunchOn(st, sums2, off2, zero),
				runs.LaunchOn(st, sums1, off1, off2),
				runs.LaunchOn(st, X, Y, off1))
		},
		plain: func() { scanPlain(x, y) },
		got:   output(Y), want: func() []float64 { return widen(y) },
	})
}

// setupSort is examples/blocks' radix sort (sort.go's SortOn: eight passes
// of digitCounts, scanCounts and scatterDigits) of n pairs, from the same
// unsorted pairs every run.
func setupSort(p *qd.Program, _ *qd.Module, n, _ int) (*cpuRun, error) {
	mod, err := qd.Compile(p, exampleBlocksSrc, qd.WithFilename("kernels.go"))
	if err != nil {
		return nil, err
	}
	var k [3]*qd.Kernel
	for i, name := range []string{"digitCounts", "scanCounts", "scatterDigits"} {
		if k[i], err = mod.Kernel(name); err != nil {
			mod.Close()
			return nil, err
		}
	}
	count, scan, scatter := k[0], k[1], k[2]
	const sortTile = 256 * 8 // the example's
	c := 16 * ((n + sortTile - 1) / sortTile)
	srcK, srcV := make([]uint32, n), make([]uint32, n)
	x := uint32(7)
	for i := range srcK {
		x = x*1664525 + 1013904223
		srcK[i], srcV[i] = x, uint32(i)
	}
	keys, vals, tk, tv := make([]uint32, n), make([]uint32, n), make([]uint32, n), make([]uint32, n)
	na := &ndarrays{p: p, open: []interface{ Close() error }{mod}}
	SrcK, SrcV := newArrays(na, srcK, n), newArrays(na, srcV, n)
	K, V, K2, V2 := newArrays(na, keys, n), newArrays(na, vals, n), newArrays(na, tk, n), newArrays(na, tv, n)
	counts, offsets := newArrays(na, make([]int32, c), c), newArrays(na, make([]int32, c), c)
	return na.done(&cpuRun{
		launch: func(st *qd.Stream) error {
			errs := []error{K.CopyFromOn(st, SrcK), V.CopyFromOn(st, SrcV)}
			in, inV, out, outV := K, V, K2, V2
			for shift := uint32(0); shift < 32; shift += 4 {
				errs = append(errs,
					count.LaunchOn(st, in, counts, shift),
					scan.LaunchOn(st, counts, offsets),
					scatter.LaunchOn(st, in, inV, out, outV, offsets, shift))
				in, inV, out, outV = out, outV, in, inV
			}
			return errors.Join(errs...)
		},
		plain: func() {
			copy(keys, srcK)
			copy(vals, srcV)
			radixSortPlain(keys, vals, tk, tv)
		},
		got: func() ([]float64, error) {
			gk, err := K.ToSlice()
			if err != nil {
				return nil, err
			}
			gv, err := V.ToSlice()
			return append(widen(gk), widen(gv)...), err
		},
		want: func() []float64 { return append(widen(keys), widen(vals)...) },
	})
}
